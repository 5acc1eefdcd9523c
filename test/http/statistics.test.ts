import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';

const DASHBOARD = '/api/v1/statistics/operational-dashboard';
const PROCESSING = '/api/v1/statistics/processing';

/**
 * The operational dashboard and the processing counters on real data. Who may read them is
 * pinned with every other route by `ROUTE_ACCESS` (test/http/auth-coverage.test.ts).
 *
 * Business date pinned to 2026-11-20; every event is of node LF_NL/AMS, which books in IFRS and
 * LOCAL_GAAP, so an accepted event makes two journals of two lines each.
 * - Session A, opened 2026-11-20T08:00Z: a partial chunk with one valid event (core date
 *   2026-11-20) and one invalid record; two days later a second chunk with one more event of
 *   2026-11-20; then closed.
 * - Session B, opened at exactly 2026-11-21T00:00Z, left open: an event dated 2026-11-23 (not
 *   yet reached, so its journals stay unposted) and one of an unknown type, a processing error
 *   recorded at 2026-11-21T00:00Z.
 * - Session C, opened 2026-11-22T10:00Z with a one-second timeout and no chunk: expired.
 */
describe('statistics (operational dashboard and processing)', () => {
  let t: TestApp;
  let token: string;
  let processingBeforeFirstRound: unknown;

  const get = async (url: string) => {
    const response = await t.call(token, { method: 'GET', url });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };
  const ingestion = (query = '') => get(`${DASHBOARD}/ingestion-metrics${query}`);
  const journals = (query = '') => get(`${DASHBOARD}/journal-metrics${query}`);
  const byDay = async (query = '') => (await get(`${DASHBOARD}/journal-metrics-by-day${query}`)).data;

  beforeAll(async () => {
    // The clock moves over three days below: the token lives a week, so it outlives the story.
    t = await createTestApp({ businessDate: '2026-11-20', accessTokenTtlSeconds: 7 * 86_400 });
    token = await t.tokenFor(['bulk-operator']);
    const call = async (method: 'POST' | 'PATCH' | 'PUT', url: string, payload: object) => {
      const response = await t.call(token, { method, url, payload });
      expect(response.statusCode, response.body).toBeLessThan(300);
      return response.json();
    };
    const open = async (timeout: string) =>
      (await call('POST', '/api/v1/ingestions', { namespace: 'ledger', entity: 'businessEvent', timeout }))
        .ingestionId as string;
    await call('PUT', '/api/v1/configuration/bulk', realisticConfiguration());

    t.clock.set('2026-11-20T08:00:00Z');
    const a = await open('P3D');
    await call('POST', `/api/v1/ingestions/${a}?partial=true`, {
      data: [businessEvent({ amount: '100.00' }), businessEvent({ amount: 'not a number' })],
    });
    processingBeforeFirstRound = await get(PROCESSING);
    expect(await t.services.processor.drain()).toBe(1);

    t.clock.set('2026-11-21T00:00:00Z');
    const b = await open('P3D');
    await call('POST', `/api/v1/ingestions/${b}`, {
      data: [
        businessEvent({ effectiveDate: '2026-11-23', amount: '5' }),
        businessEvent({ eventType: 'NOPE' }),
      ],
    });
    expect(await t.services.processor.drain()).toBe(2);

    t.clock.set('2026-11-22T10:00:00Z');
    await call('POST', `/api/v1/ingestions/${a}`, { data: [businessEvent({ amount: '7' })] });
    await call('PATCH', `/api/v1/ingestions/${a}`, { state: 'closed' });
    await open('PT1S');
    t.clock.advance(2_000);
    expect(await t.services.processor.drain()).toBe(1);
  });
  afterAll(async () => t?.close());

  describe('ingestion metrics: sessions opened in [from, to), with all their counters', () => {
    const sessionA = {
      ingestions: 1,
      pendingIngestions: 0,
      closedIngestions: 1,
      expiredIngestions: 0,
      chunks: 2,
      apiCalls: 4, // opened, two chunks, closed
      totalRows: 3,
      successRows: 2,
      failedRows: 1,
    };
    const sessionB = {
      ingestions: 1,
      pendingIngestions: 1,
      closedIngestions: 0,
      expiredIngestions: 0,
      chunks: 1,
      apiCalls: 2,
      totalRows: 2,
      successRows: 2,
      failedRows: 0,
    };
    const sessionC = {
      ingestions: 1,
      pendingIngestions: 0,
      closedIngestions: 0,
      expiredIngestions: 1,
      chunks: 0,
      apiCalls: 1,
      totalRows: 0,
      successRows: 0,
      failedRows: 0,
    };
    const sum = (...parts: (typeof sessionA)[]) => {
      const total = { ...sessionC };
      for (const key of Object.keys(total) as (keyof typeof total)[]) {
        total[key] = parts.reduce((s, part) => s + part[key], 0);
      }
      return total;
    };

    it('counts every session without a range', async () => {
      expect(await ingestion()).toEqual(sum(sessionA, sessionB, sessionC));
    });

    it('selects by the day the session was opened, and counts chunks sent after `to`', async () => {
      // Session A's second chunk came on 2026-11-22; it counts with its session.
      expect(await ingestion('?from=2026-11-20&to=2026-11-21')).toEqual(sessionA);
      expect(await ingestion('?from=2026-11-21')).toEqual(sum(sessionB, sessionC));
      expect(await ingestion('?from=2026-11-21&to=2026-11-22')).toEqual(sessionB);
      expect(await ingestion('?to=2026-11-20')).toEqual(sum());
    });

    it('takes `from` inclusive and `to` exclusive to the millisecond, in any offset', async () => {
      expect(await ingestion('?to=2026-11-21T00:00:00Z')).toEqual(sessionA);
      expect(await ingestion('?to=2026-11-21T00:00:00.001Z')).toEqual(sum(sessionA, sessionB));
      expect(await ingestion('?from=2026-11-21T00:00:00Z&to=2026-11-21T00:00:00.001Z')).toEqual(sessionB);
      expect(await ingestion('?from=2026-11-20T23:59:59.999Z&to=2026-11-21T00:00:00Z')).toEqual(sum());
      // 01:00 at +01:00 is midnight UTC.
      expect(await ingestion(`?from=${encodeURIComponent('2026-11-21T01:00:00+01:00')}`)).toEqual(
        sum(sessionB, sessionC),
      );
      expect(await ingestion('?from=&to=')).toEqual(sum(sessionA, sessionB, sessionC));
    });
  });

  describe('journal metrics: journals by core date, processing errors by the time recorded', () => {
    it('counts posted and unposted journals, their lines and the processing errors', async () => {
      expect(await journals()).toEqual({
        postedJournals: 4,
        unpostedJournals: 2,
        totalJournalLines: 12,
        errors: 1,
        awaitingApproval: 0,
        deniedApproval: 0,
      });
      // The same counts as the journals themselves.
      const listed = (await get('/api/v1/journals?limit=1000')).data as {
        status: string;
        lines: unknown[];
      }[];
      expect(listed.filter((j) => j.status === 'posted')).toHaveLength(4);
      expect(listed.filter((j) => j.status === 'unposted')).toHaveLength(2);
      expect(listed.reduce((n, j) => n + j.lines.length, 0)).toBe(12);
    });

    it('takes days as [from, to) and counts the invalid record of a chunk nowhere here', async () => {
      expect(await journals('?from=2026-11-20&to=2026-11-21')).toMatchObject({
        postedJournals: 4,
        unpostedJournals: 0,
        totalJournalLines: 8,
        errors: 0, // recorded at 2026-11-21T00:00Z, which `to` excludes
      });
      expect(await journals('?from=2026-11-21')).toMatchObject({
        postedJournals: 0,
        unpostedJournals: 2,
        totalJournalLines: 4,
        errors: 1,
      });
      expect(await journals('?to=2026-11-20')).toMatchObject({
        postedJournals: 0,
        unpostedJournals: 0,
        totalJournalLines: 0,
        errors: 0,
      });
    });

    it('includes the day of a date-time `to` later than midnight, and errors to the millisecond', async () => {
      expect(await journals('?to=2026-11-20T00:00:01Z')).toMatchObject({ postedJournals: 4, errors: 0 });
      expect(await journals('?to=2026-11-23T00:00:00Z')).toMatchObject({ unpostedJournals: 0, errors: 1 });
      expect(await journals('?to=2026-11-23T00:00:00.001Z')).toMatchObject({ unpostedJournals: 2 });
      expect(await journals('?from=2026-11-21T00:00:00.001Z')).toMatchObject({ errors: 0 });
      expect(await journals('?from=2026-11-21T00:00:00Z&to=2026-11-21T00:00:00.001Z')).toMatchObject({
        postedJournals: 0,
        unpostedJournals: 0,
        errors: 1,
      });
    });
  });

  describe('journal metrics by day', () => {
    const nov20 = {
      date: '2026-11-20',
      postedJournals: 4,
      unpostedJournals: 0,
      totalJournalLines: 8,
      errors: 0,
    };
    const nov21 = {
      date: '2026-11-21',
      postedJournals: 0,
      unpostedJournals: 0,
      totalJournalLines: 0,
      errors: 1,
    };
    const nov23 = {
      date: '2026-11-23',
      postedJournals: 0,
      unpostedJournals: 2,
      totalJournalLines: 4,
      errors: 0,
    };

    it('lists only the days with journals or errors, in date order', async () => {
      expect(await byDay()).toEqual([nov20, nov21, nov23]);
    });

    it('takes the same [from, to) as the totals', async () => {
      expect(await byDay('?from=2026-11-20&to=2026-11-21')).toEqual([nov20]);
      expect(await byDay('?from=2026-11-21&to=2026-11-23')).toEqual([nov21]);
      expect(await byDay('?from=2026-11-21&to=2026-11-23T00:00:00.001Z')).toEqual([nov21, nov23]);
      expect(await byDay('?from=2026-11-24')).toEqual([]);
    });
  });

  describe('processing', () => {
    it('counts records waiting, then processed and failed, per entity with stored records', async () => {
      // Only the valid record of the first chunk was stored; nothing had run yet.
      expect(processingBeforeFirstRound).toEqual({
        data: [{ namespace: 'ledger', entity: 'businessEvent', pending: 1, processed: 0, failed: 0 }],
      });
      // Four records stored; the one of an unknown type failed. No loan transaction was sent.
      expect(await get(PROCESSING)).toEqual({
        data: [{ namespace: 'ledger', entity: 'businessEvent', pending: 0, processed: 3, failed: 1 }],
      });
    });
  });

  describe('validation', () => {
    const refused = async (name: string, value: string) => {
      for (const path of ['ingestion-metrics', 'journal-metrics', 'journal-metrics-by-day']) {
        const response = await t.call(token, {
          method: 'GET',
          url: `${DASHBOARD}/${path}?${name}=${encodeURIComponent(value)}`,
        });
        expect(response.statusCode, `${path}: ${response.body}`).toBe(400);
        expect(response.headers['content-type']).toContain('application/problem+json');
        const problem = response.json();
        expect(problem.type).toBe('urn:ledgerflow:problem:validation-failed');
        expect(problem.errors.map((e: { path: string }) => e.path)).toContain(`/querystring/${name}`);
      }
    };

    it.each([
      ['from', 'yesterday'],
      ['from', '2026-11-20X'],
      ['from', '2026-13-01'],
      ['to', '20261120'],
      ['to', '2026-11-20 10:00'],
      ['to', 'T10:00:00Z'],
    ])('refuses %s=%s with 400 validation-failed naming the parameter', refused);

    // Impossible days, hour 24 and a date-time without an offset: Date.parse would read each of
    // them as some instant, so the route schema must refuse them first.
    it.each([
      ['from', '2026-02-30'],
      ['to', '2026-02-29'],
      ['to', '2026-11-20T24:00:00Z'],
      ['from', '2026-11-20T10:00:00'],
    ])('refuses %s=%s, which is no RFC 3339 date or date-time', refused);
  });

  describe('permissions', () => {
    it('lets every role read the statistics: all of them hold statistics:read', async () => {
      for (const role of ['viewer', 'api-client', 'bulk-operator', 'admin']) {
        const reader = await t.tokenFor([role]);
        for (const url of [
          `${DASHBOARD}/ingestion-metrics`,
          `${DASHBOARD}/journal-metrics`,
          `${DASHBOARD}/journal-metrics-by-day`,
          PROCESSING,
        ]) {
          expect((await t.call(reader, { method: 'GET', url })).statusCode, `${role} ${url}`).toBe(200);
        }
      }
    });
  });
});
