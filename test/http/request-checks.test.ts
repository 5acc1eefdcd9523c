import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantOf } from '../../src/lib/instant.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { uploadRealisticConfiguration } from '../helpers/fixtures.js';

/**
 * Request checks the route schemas make: dates and date-times of queries, the length of filters
 * compared with stored ids and names, the Idempotency-Key header and the form of a session
 * timeout. Each failure names the part and member at fault.
 */
describe('request checks of the route schemas', () => {
  let t: TestApp;
  let client: string;
  beforeAll(async () => {
    t = await createTestApp();
    client = await t.tokenFor(['api-client']);
    await uploadRealisticConfiguration(t);
  });
  afterAll(async () => t?.close());

  const get = (url: string) => t.call(client, { method: 'GET', url });
  const refusal = async (url: string) => {
    const response = await get(url);
    expect(response.statusCode, response.body).toBe(400);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(response.json().type).toBe('urn:ledgerflow:problem:validation-failed');
    return response.json() as { detail: string; errors: { path: string; message: string }[] };
  };
  const dashboard = '/api/v1/statistics/operational-dashboard';

  describe('statistics ranges: a date or an RFC 3339 date-time', () => {
    it.each([
      ['from', '2026-02-30'],
      ['from', '2026-13-01'],
      ['to', 'yesterday'],
      ['to', '2026-01-31T25:00:00Z'],
      ['from', '2026-01-31T10:00:00'],
    ])('refuses %s=%s, naming the query member and both accepted forms', async (name, value) => {
      for (const metric of ['ingestion-metrics', 'journal-metrics', 'journal-metrics-by-day']) {
        const problem = await refusal(`${dashboard}/${metric}?${name}=${value}`);
        expect(problem.errors).toEqual([
          {
            path: `/querystring/${name}`,
            message: 'must be a date YYYY-MM-DD or an RFC 3339 date-time with an offset',
          },
        ]);
        expect(problem.detail).toBe(
          `/querystring/${name} must be a date YYYY-MM-DD or an RFC 3339 date-time with an offset`,
        );
      }
    });

    it.each([
      '2024-02-29',
      '2026-01-31T10:15:00Z',
      '2026-01-31T10:15:00.5+01:00',
      '2026-01-31T10:15:00+01',
      '2016-12-31T23:59:60Z',
    ])('accepts from=%s', async (value) => {
      const response = await get(`${dashboard}/ingestion-metrics?from=${encodeURIComponent(value)}`);
      expect(response.statusCode, response.body).toBe(200);
    });

    it('reads a date as midnight UTC and every date-time form as its instant', () => {
      expect(instantOf('2026-01-31').toISOString()).toBe('2026-01-31T00:00:00.000Z');
      expect(instantOf('2026-01-31T10:15:00.5+01:00').toISOString()).toBe('2026-01-31T09:15:00.500Z');
      expect(instantOf('2026-01-31t10:15:00z').toISOString()).toBe('2026-01-31T10:15:00.000Z');
      expect(instantOf('2026-01-31 10:15:00-0230').toISOString()).toBe('2026-01-31T12:45:00.000Z');
      expect(instantOf('2026-01-31T10:15:00+01').toISOString()).toBe('2026-01-31T09:15:00.000Z');
      expect(instantOf('2016-12-31T23:59:60Z').toISOString()).toBe('2016-12-31T23:59:59.999Z');
    });
  });

  describe('journal dates: real calendar days', () => {
    it.each([
      ['/api/v1/journals?from=2026-13-01', '/querystring/from'],
      ['/api/v1/journals?to=2026-02-30', '/querystring/to'],
      ['/api/v1/journals?to=2026-01-31T00:00:00Z', '/querystring/to'],
      ['/api/v1/balances?asOf=2026-02-30', '/querystring/asOf'],
    ])('refuses %s', async (url, path) => {
      const problem = await refusal(url);
      expect(problem.errors).toEqual([{ path, message: 'must be a date YYYY-MM-DD' }]);
    });

    it('accepts a leap day', async () => {
      expect((await get('/api/v1/journals?from=2024-02-29&to=2024-03-01')).statusCode).toBe(200);
      expect((await get('/api/v1/balances?asOf=2024-02-29')).statusCode).toBe(200);
    });
  });

  describe('filters compared with stored ids, session names and error codes', () => {
    const records = '/api/v1/namespaces/loans/entities/loanTransaction/records';
    it.each([
      ['/api/v1/journals', 'ingestionId'],
      ['/api/v1/processing-errors', 'ingestionId'],
      ['/api/v1/processing-errors', 'code'],
      ['/api/v1/ingestions', 'namespace'],
      ['/api/v1/ingestions', 'entity'],
      [records, 'ingestionId'],
    ])(
      '%s refuses ?%s longer than a path parameter, naming it, and takes one as long',
      async (route, name) => {
        const problem = await refusal(`${route}?${name}=${'x'.repeat(201)}`);
        expect(problem.errors).toEqual([
          { path: `/querystring/${name}`, message: 'must NOT have more than 200 characters' },
        ]);
        const response = await get(`${route}?${name}=${'x'.repeat(200)}`);
        expect(response.statusCode, response.body).toBe(200);
        expect(response.json().data).toEqual([]);
      },
    );
  });

  describe('ingestion', () => {
    const open = (timeout: string) =>
      t.call(client, {
        method: 'POST',
        url: '/api/v1/ingestions',
        payload: { namespace: 'loans', entity: 'loanTransaction', timeout },
      });

    it.each(['PT1H-30M', '-PT1H', 'P1M', 'PT15m', 'fifteen minutes'])(
      'refuses the timeout %s by its form',
      async (timeout) => {
        const response = await open(timeout);
        expect(response.statusCode).toBe(400);
        expect(response.json().errors).toEqual([
          {
            path: '/timeout',
            message: 'must be an ISO 8601 duration of weeks, days, hours, minutes and seconds, such as PT15M',
          },
        ]);
      },
    );

    it.each(['PT0S', 'P8D', 'PT0.5S', 'P'])('refuses the timeout %s by its length', async (timeout) => {
      const response = await open(timeout);
      expect(response.statusCode).toBe(400);
      expect(response.json().errors).toEqual([
        { path: '/timeout', message: 'must be an ISO 8601 duration from PT1S to P7D' },
      ]);
    });

    it.each([
      ['PT1S', 'PT1S'],
      ['P1DT', 'P1DT'],
      ['P1W', 'P1W'],
      ['PT0.5H', 'PT0.5H'],
      ['PT1,5S', 'PT1,5S'],
    ])('accepts the timeout %s', async (timeout, shown) => {
      const response = await open(timeout);
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json().timeout).toBe(shown);
    });

    it.each([
      ['', 'must NOT have fewer than 1 characters'],
      ['k'.repeat(201), 'must NOT have more than 200 characters'],
    ])('refuses the Idempotency-Key %j before looking at the session', async (key, message) => {
      const response = await t.call(client, {
        method: 'POST',
        url: '/api/v1/ingestions/in_unknown',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        payload: JSON.stringify({ data: [] }),
      });
      expect(response.statusCode).toBe(400);
      expect(response.json().errors).toEqual([{ path: '/headers/idempotency-key', message }]);
    });

    it('reads ?partial as a boolean: false keeps the chunk atomic, other words are refused', async () => {
      const { ingestionId } = (await open('PT15M')).json();
      const send = (query: string) =>
        t.call(client, {
          method: 'POST',
          url: `/api/v1/ingestions/${ingestionId}${query}`,
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify({ data: [{}] }),
        });
      const atomic = await send('?partial=false');
      expect(atomic.statusCode).toBe(400);
      expect(atomic.json().type).toBe('urn:ledgerflow:problem:chunk-invalid');
      expect((await send('?partial=true')).statusCode).toBe(201);
      const word = await send('?partial=maybe');
      expect(word.statusCode).toBe(400);
      expect(word.json().errors.map((e: { path: string }) => e.path)).toEqual(['/querystring/partial']);
    });

    it('takes an Idempotency-Key of 200 characters', async () => {
      const { ingestionId } = (await open('PT15M')).json();
      const response = await t.call(client, {
        method: 'POST',
        url: `/api/v1/ingestions/${ingestionId}`,
        headers: { 'content-type': 'application/json', 'idempotency-key': 'k'.repeat(200) },
        payload: JSON.stringify({ data: [] }),
      });
      expect(response.statusCode, response.body).toBe(201);
    });
  });
});
