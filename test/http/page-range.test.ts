import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_LIMIT_MAX, PAGE_MAX } from '../../src/http/api/schemas.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { openLoanSession, uploadRealisticConfiguration } from '../helpers/fixtures.js';

interface OpenApiParameter {
  name: string;
  in: string;
}
interface OpenApiDocument {
  paths: Record<string, { get?: { parameters?: OpenApiParameter[] } }>;
}

/**
 * Issue 14, point 3: a `page` beyond any store's reach (`1e20`, twenty nines) was a 500 on every
 * paginated list; it is a 400 naming `/querystring/page`, and the highest page accepted reads an
 * empty page.
 */
describe('page range of every paginated list', () => {
  let t: TestApp;
  let admin: string;
  let paginated: string[];
  beforeAll(async () => {
    t = await createTestApp();
    admin = await t.tokenFor(['admin']);
    await uploadRealisticConfiguration(t, admin);
    const ingestionId = await openLoanSession(t, admin);
    // A webhook subscription, for the listing of its deliveries.
    const post = (url: string, payload: Record<string, unknown>) =>
      t.call(admin, { method: 'POST', url, payload });
    expect((await post('/api/v1/event-deliveries/secrets', {})).statusCode).toBe(201);
    const subscription = await post('/api/v1/event-deliveries/subscriptions', {
      url: 'https://receiver.example/hook',
      eventTypes: ['ingestion.closed'],
    });
    expect(subscription.statusCode, subscription.body).toBe(201);
    const document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as OpenApiDocument;
    const values: Record<string, string> = {
      ingestionId,
      ns: 'loans',
      entity: 'loanTransaction',
      id: String(subscription.json().id),
    };
    paginated = Object.entries(document.paths)
      .filter(([, item]) => item.get?.parameters?.some((p) => p.name === 'page' && p.in === 'query'))
      .map(([path]) => path.replace(/\{(\w+)\}/g, (_match, name: string) => values[name] ?? name));
  });
  afterAll(async () => t?.close());

  it('finds the paginated lists in the OpenAPI document', () => {
    expect(paginated.length).toBeGreaterThanOrEqual(8);
    expect(paginated).toContain('/api/v1/journals');
  });

  it.each(['1e20', '99999999999999999999', String(PAGE_MAX + 1)])(
    'refuses page=%s with a 400 naming /querystring/page',
    async (page) => {
      for (const path of paginated) {
        const response = await t.call(admin, { method: 'GET', url: `${path}?page=${page}` });
        expect(response.statusCode, `${path}: ${response.body}`).toBe(400);
        expect(response.json().type).toBe('urn:ledgerflow:problem:validation-failed');
        expect(response.json().errors).toEqual([
          { path: '/querystring/page', message: `must be <= ${PAGE_MAX}` },
        ]);
      }
    },
  );

  it('reads the highest page at the largest page size as an empty page', async () => {
    expect(Number.isSafeInteger(PAGE_MAX * PAGE_LIMIT_MAX)).toBe(true);
    for (const path of paginated) {
      const response = await t.call(admin, {
        method: 'GET',
        url: `${path}?page=${PAGE_MAX}&limit=${PAGE_LIMIT_MAX}`,
      });
      expect(response.statusCode, `${path}: ${response.body}`).toBe(200);
      expect(response.json()).toMatchObject({ data: [], page: PAGE_MAX, limit: PAGE_LIMIT_MAX });
    }
  });
});
