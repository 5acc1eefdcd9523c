import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cursorOf } from '../../src/http/api/cursor.js';
import { CURSOR_LENGTH_MAX } from '../../src/http/api/schemas.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ingestClosedSession, realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';

interface Answer {
  data: Record<string, unknown>[];
  page?: number;
  limit: number;
  totalSize?: number;
  totalPages?: number;
  next: string | null;
}

/**
 * Issue 22, cursor paging: a list that grows with the books is walked by `after=<next>` from an
 * index, every row once and in order whatever is added meanwhile, without counting; page paging
 * answers as before plus `next`. Runs on the dialect of TEST_DATABASE_URL (SQLite by default).
 */
describe('cursor paging of the lists that grow with the books', () => {
  let t: TestApp;
  let token: string;
  let ingestionIds: string[];

  const get = async (url: string): Promise<Answer> => {
    const response = await t.call(token, { method: 'GET', url });
    expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
    return response.json<Answer>();
  };
  const withQuery = (path: string, query: string) => `${path}${path.includes('?') ? '&' : '?'}${query}`;

  /** Every item of `path` by cursor, `limit` a page, checking the envelope of each page. */
  const walk = async (path: string, limit: number, pages: Answer[] = []): Promise<Answer['data']> => {
    const items: Answer['data'] = [];
    let answer = await get(withQuery(path, `limit=${limit}`));
    pages.push(answer);
    items.push(...answer.data);
    while (answer.next !== null) {
      answer = await get(withQuery(path, `limit=${limit}&after=${answer.next}`));
      expect(answer).not.toHaveProperty('totalSize');
      expect(answer).not.toHaveProperty('totalPages');
      expect(answer).not.toHaveProperty('page');
      pages.push(answer);
      items.push(...answer.data);
    }
    return items;
  };
  /** Every item of `path` in one page (page paging). */
  const all = async (path: string) => (await get(withQuery(path, 'limit=1000'))).data;
  const journalIds = (items: Answer['data']) => items.map((item) => item.journalId);

  beforeAll(async () => {
    t = await createTestApp({ businessDate: '2026-11-20' });
    token = await t.tokenFor(['admin']);
    const put = await t.call(token, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk',
      payload: realisticConfiguration(),
    });
    expect(put.statusCode, put.body).toBe(200);
    // Events on three core dates, several per date, in two sessions: journals tie on core date.
    ingestionIds = [
      await ingestClosedSession(t, token, 'businessEvent', [
        businessEvent({ effectiveDate: '2026-11-18', amount: '1.00' }),
        businessEvent({ effectiveDate: '2026-11-20', amount: '2.00' }),
        businessEvent({ effectiveDate: '2026-11-19', amount: '3.00' }),
      ]),
      await ingestClosedSession(t, token, 'businessEvent', [
        businessEvent({ effectiveDate: '2026-11-20', amount: '4.00' }),
        businessEvent({ effectiveDate: '2026-11-18', amount: '5.00' }),
        businessEvent({ effectiveDate: '2026-11-23', amount: '6.00' }),
      ]),
    ];
    await t.services.processor.drain();
  });
  afterAll(async () => t?.close());

  it('walks the journals once each, in the order of the list, and ends without next', async () => {
    const everything = await all('/api/v1/journals');
    expect(everything).toHaveLength(12);
    for (const limit of [1, 5, 12, 1000]) {
      const pages: Answer[] = [];
      expect(journalIds(await walk('/api/v1/journals', limit, pages))).toEqual(journalIds(everything));
      expect(pages.at(-1)?.next).toBeNull();
      expect(pages).toHaveLength(Math.max(1, Math.ceil(12 / limit)));
    }
  });

  it('answers page paging as before, with next on every page but the last', async () => {
    const first = await get('/api/v1/journals?page=0&limit=5');
    expect(first).toMatchObject({ page: 0, limit: 5, totalSize: 12, totalPages: 3 });
    expect(typeof first.next).toBe('string');
    const last = await get('/api/v1/journals?page=2&limit=5');
    expect(last).toMatchObject({ page: 2, limit: 5, totalSize: 12, totalPages: 3, next: null });
    expect(last.data).toHaveLength(2);
    // The next of a page-number page continues where that page ends.
    const after = await get(`/api/v1/journals?limit=5&after=${first.next}`);
    expect(journalIds(after.data)).toEqual(journalIds((await get('/api/v1/journals?page=1&limit=5')).data));
    expect((await get('/api/v1/journals?page=3&limit=5')).next).toBeNull();
  });

  it('combines the filters with the cursor', async () => {
    for (const filter of [
      'status=posted',
      'status=unposted',
      'accountingConfig=IFRS',
      `ingestionId=${ingestionIds[1]}`,
      'from=2026-11-19&to=2026-11-21',
    ]) {
      const path = `/api/v1/journals?${filter}`;
      const everything = await all(path);
      expect(everything.length, filter).toBeGreaterThan(0);
      expect(journalIds(await walk(path, 2)), filter).toEqual(journalIds(everything));
    }
  });

  it('keeps a walk whole while journals are added: later ones appear, none repeats', async () => {
    const before = journalIds(await all('/api/v1/journals'));
    const seen: unknown[] = [];
    let answer = await get('/api/v1/journals?limit=4');
    seen.push(...journalIds(answer.data));
    answer = await get(`/api/v1/journals?limit=4&after=${answer.next}`);
    seen.push(...journalIds(answer.data));
    // One journal pair before the position read (2026-11-17), one after it (2026-11-24).
    const added = await ingestClosedSession(t, token, 'businessEvent', [
      businessEvent({ effectiveDate: '2026-11-17', amount: '7.00' }),
      businessEvent({ effectiveDate: '2026-11-24', amount: '8.00' }),
    ]);
    await t.services.processor.drain();
    while (answer.next !== null) {
      answer = await get(`/api/v1/journals?limit=4&after=${answer.next}`);
      seen.push(...journalIds(answer.data));
    }
    const now = await all('/api/v1/journals');
    const late = now.filter((j) => j.ingestionId === added && j.coreDate === '2026-11-24');
    const early = now.filter((j) => j.ingestionId === added && j.coreDate === '2026-11-17');
    expect(late).toHaveLength(2);
    expect(early).toHaveLength(2);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(
      journalIds(now).filter((id) => before.includes(id) || journalIds(late).includes(id)),
    );
  });

  it('walks the sessions newest first once each, also when sessions open meanwhile', async () => {
    const everything = await all('/api/v1/ingestions');
    expect(everything.length).toBeGreaterThanOrEqual(3);
    const ids = (items: Answer['data']) => items.map((item) => item.ingestionId);
    expect(ids(await walk('/api/v1/ingestions', 1))).toEqual(ids(everything));
    expect(ids(await walk('/api/v1/ingestions?state=closed', 2))).toEqual(
      ids(await all('/api/v1/ingestions?state=closed')),
    );

    const seen: unknown[] = [];
    let answer = await get('/api/v1/ingestions?limit=1');
    seen.push(...ids(answer.data));
    // Sessions opened at the same instant as others: where their ids place them is anywhere.
    for (let n = 0; n < 4; n += 1)
      await t.call(token, {
        method: 'POST',
        url: '/api/v1/ingestions',
        payload: { namespace: 'ledger', entity: 'businessEvent' },
      });
    while (answer.next !== null) {
      answer = await get(`/api/v1/ingestions?limit=1&after=${answer.next}`);
      seen.push(...ids(answer.data));
    }
    expect(new Set(seen).size).toBe(seen.length);
    const now = ids(await all('/api/v1/ingestions'));
    // In the order of the list now, with every session there was before the walk.
    expect(seen).toEqual(now.filter((id) => seen.includes(id)));
    for (const id of ids(everything)) expect(seen).toContain(id);
  });

  it('walks the records of an entity and its processing errors', async () => {
    const records = '/api/v1/namespaces/ledger/entities/businessEvent/records';
    const recordKey = (items: Answer['data']) =>
      items.map((r) => `${r.ingestionId}/${r.chunkSeq}/${r.index}`);
    expect(recordKey(await walk(records, 2))).toEqual(recordKey(await all(records)));
    const ofOne = `${records}?ingestionId=${ingestionIds[0]}`;
    expect(recordKey(await walk(ofOne, 2))).toEqual(recordKey(await all(ofOne)));
    expect(await walk(ofOne, 2)).toHaveLength(3);

    const failing = await ingestClosedSession(t, token, 'businessEvent', [
      businessEvent({ legalEntity: 'NOWHERE', amount: '1.00' }),
      businessEvent({ legalEntity: 'NOWHERE', amount: '2.00' }),
      businessEvent({ legalEntity: 'NOWHERE', amount: '3.00' }),
    ]);
    await t.services.processor.drain();
    const errors = `/api/v1/processing-errors?ingestionId=${failing}`;
    const amounts = (items: Answer['data']) => items.map((e) => (e.record as { amount: string }).amount);
    expect(amounts(await walk(errors, 2))).toEqual(['1.00', '2.00', '3.00']);
    expect(amounts(await walk('/api/v1/processing-errors', 1))).toEqual(
      amounts(await all('/api/v1/processing-errors')),
    );
  });

  it('walks a session error list across its validation failures and processing errors', async () => {
    const session = await t.call(token, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace: 'ledger', entity: 'businessEvent' },
    });
    const ingestionId = session.json<{ ingestionId: string }>().ingestionId;
    const chunk = await t.call(token, {
      method: 'POST',
      url: `/api/v1/ingestions/${ingestionId}?partial=true`,
      payload: {
        data: [
          businessEvent({ amount: 'not a number' }),
          businessEvent({ legalEntity: 'NOWHERE' }),
          businessEvent({ amount: 'nor this' }),
          businessEvent({ legalEntity: 'NOWHERE', amount: '9.00' }),
          businessEvent({ currency: 12 }),
        ],
      },
    });
    expect(chunk.statusCode, chunk.body).toBe(201);
    await t.services.processor.drain();
    const path = `/api/v1/ingestions/${ingestionId}/errors`;
    const everything = await all(path);
    expect(everything.map((e) => e.kind)).toEqual([
      'validation',
      'validation',
      'validation',
      'processing',
      'processing',
    ]);
    for (const limit of [1, 2, 3, 4]) expect(await walk(path, limit)).toEqual(everything);
    expect(await walk(`${path}?chunkSeq=1`, 2)).toEqual(await all(`${path}?chunkSeq=1`));
  });

  it('refuses an after that is not a cursor of the list with a 400 naming it', async () => {
    const journalsCursor = (await get('/api/v1/journals?limit=1')).next;
    const sessionsCursor = (await get('/api/v1/ingestions?limit=1')).next;
    const bad: [string, string][] = [
      ['/api/v1/journals', '!!!'],
      ['/api/v1/journals', 'bm90IGpzb24'],
      ['/api/v1/journals', cursorOf('journals', ['2026-11-20', 'x'])],
      ['/api/v1/journals', cursorOf('journals', ['2026-11-20', 'x', 'a\u0000b'])],
      ['/api/v1/journals', cursorOf('journals', ['2026-11-20', 'x', 'y'.repeat(201)])],
      ['/api/v1/journals', 'a'.repeat(CURSOR_LENGTH_MAX + 1)],
      ['/api/v1/journals', String(sessionsCursor)],
      ['/api/v1/ingestions', String(journalsCursor)],
      ['/api/v1/ingestions', cursorOf('ingestions', [1, 2])],
      ['/api/v1/processing-errors', cursorOf('processing-errors', [-1])],
      ['/api/v1/processing-errors', cursorOf('processing-errors', [2 ** 53])],
      ['/api/v1/namespaces/ledger/entities/businessEvent/records', cursorOf('records', ['1'])],
      [`/api/v1/ingestions/${ingestionIds[0]}/errors`, cursorOf('ingestion-errors', ['other', 1])],
    ];
    for (const [path, after] of bad) {
      const response = await t.call(token, {
        method: 'GET',
        url: `${path}?after=${encodeURIComponent(after)}`,
      });
      expect(response.statusCode, `${path} ${after}: ${response.body}`).toBe(400);
      expect(response.json()).toMatchObject({
        type: 'urn:ledgerflow:problem:validation-failed',
        errors: [expect.objectContaining({ path: '/querystring/after' })],
      });
    }
  });
});
