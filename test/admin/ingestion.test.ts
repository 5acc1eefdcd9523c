import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { loanRecord } from '../helpers/records.js';
import { type Signed, signIn, userWith } from './helpers.js';

let t: TestApp;
let writer: string;
let viewer: Signed;
beforeAll(async () => {
  t = await createTestApp();
  writer = await t.tokenFor(['api-client']);
  const operator = await t.tokenFor(['bulk-operator']);
  const put = await t.call(operator, {
    method: 'PUT',
    url: '/api/v1/configuration/bulk',
    payload: realisticConfiguration(),
  });
  expect(put.statusCode, put.body).toBe(200);
  viewer = await signIn(t, await userWith(t, ['viewer']));
});
afterAll(async () => {
  await t?.close();
});

/** Opens a loan session and sends these chunks (query string and body each); returns its id. */
async function sessionWith(
  chunks: { query?: string; key?: string; body: Record<string, unknown> }[],
): Promise<string> {
  const opened = await t.call(writer, {
    method: 'POST',
    url: '/api/v1/ingestions',
    payload: { namespace: 'loans', entity: 'loanTransaction' },
  });
  expect(opened.statusCode, opened.body).toBe(201);
  const id = opened.json().ingestionId as string;
  for (const chunk of chunks) {
    const sent = await t.call(writer, {
      method: 'POST',
      url: `/api/v1/ingestions/${id}${chunk.query ?? ''}`,
      headers: chunk.key === undefined ? {} : { 'idempotency-key': chunk.key },
      payload: chunk.body,
    });
    expect([201, 400]).toContain(sent.statusCode);
  }
  return id;
}

/** The cells of each body row of the table with this id, as text. */
function rowsOf(body: string, tableId: string): string[][] {
  const table = new RegExp(`<table id="${tableId}"[\\s\\S]*?<tbody>([\\s\\S]*?)</tbody>`).exec(body)?.[1];
  if (table === undefined) return [];
  return [...table.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...(row[1] ?? '').matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) =>
      (cell[1] ?? '').replace(/<[^>]+>/g, '').trim(),
    ),
  );
}

describe('administration interface: an ingestion session page', () => {
  it("lists the session's chunks: number, name, outcome, rows accepted and failed, key", async () => {
    const id = await sessionWith([
      { key: 'first-key', body: { chunkName: 'first', data: [loanRecord(1), loanRecord(2)] } },
      {
        query: '?partial=true',
        body: { chunkName: 'mixed', data: [loanRecord(3), loanRecord(4, { amount: '1,5' })] },
      },
      { body: { data: [loanRecord(5, { amount: 'x' }), loanRecord(6)] } },
    ]);
    const page = await viewer.get(`/admin/ingestions/${id}`);
    expect(page.statusCode, page.body).toBe(200);
    const chunks = rowsOf(page.body, 'chunks');
    expect(chunks.map((cells) => cells.slice(0, 6))).toEqual([
      ['1', 'first', 'stored', '2', '0', 'first-key'],
      ['2', 'mixed', 'stored', '1', '1', '—'],
      ['3', '—', 'rejected', '0', '2', '—'],
    ]);
    expect(chunks[0]?.[6]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    // The failed records the session counts: those of the rejected chunk 3 count only when its
    // records are sent again and stored.
    expect(rowsOf(page.body, 'failed-records').map((cells) => cells.slice(0, 2))).toEqual([['2', '1']]);
  });

  it('pages the chunks on the server, apart from the failed records, each pager keeping the other', async () => {
    const id = await sessionWith(
      Array.from({ length: 5 }, (_, n) => ({ body: { chunkName: `c${n + 1}`, data: [loanRecord(n)] } })),
    );
    const second = await viewer.get(`/admin/ingestions/${id}?chunksPage=1&chunksLimit=2&page=0&limit=7`);
    expect(second.statusCode).toBe(200);
    expect(rowsOf(second.body, 'chunks').map((cells) => cells[1])).toEqual(['c3', 'c4']);
    expect(second.body).toContain('Page 2 of 3 · 5 in all');
    const next = /<nav class="pager" aria-label="Pages of chunks">[\s\S]*?<a href="([^"]+)" rel="next">/.exec(
      second.body,
    )?.[1];
    expect(next?.replaceAll('&amp;', '&')).toBe(
      `/admin/ingestions/${id}?page=0&limit=7&chunksPage=2&chunksLimit=2`,
    );
    const last = await viewer.get(`/admin/ingestions/${id}?chunksPage=2&chunksLimit=2`);
    expect(rowsOf(last.body, 'chunks').map((cells) => cells[1])).toEqual(['c5']);
  });

  it('says when no chunk has arrived yet', async () => {
    const id = await sessionWith([]);
    const page = await viewer.get(`/admin/ingestions/${id}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('No chunk received yet.');
    expect(rowsOf(page.body, 'chunks')).toEqual([]);
  });
});
