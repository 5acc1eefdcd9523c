import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { uploadRealisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent, loanRecords } from '../helpers/records.js';

/**
 * The soak benchmark reported journal-metrics 727,962 of 364,962 expected on SQLite while every
 * session's journal listing was exact. The metrics were right: the soak expected journals of its
 * business-event sessions only, while its loan sessions make journals too, through the flow the
 * example configuration publishes for loan transactions. Here the two reads are reconciled.
 */
describe('journal-metrics against the journals listings', () => {
  let t: TestApp;
  let writer: string;
  const sessions: string[] = [];
  beforeAll(async () => {
    t = await createTestApp({ businessDate: '2026-11-20' });
    writer = await t.tokenFor(['bulk-operator']);
    await uploadRealisticConfiguration(t);
  });
  afterAll(async () => t?.close());

  const get = async (url: string) => {
    const response = await t.call(writer, { method: 'GET', url });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };
  const ingest = async (namespace: string, entity: string, data: unknown[]) => {
    const opened = await t.call(writer, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace, entity },
    });
    const id = opened.json().ingestionId as string;
    const chunk = await t.call(writer, {
      method: 'POST',
      url: `/api/v1/ingestions/${id}`,
      payload: { data },
    });
    expect(chunk.statusCode, chunk.body).toBe(201);
    await t.call(writer, { method: 'PATCH', url: `/api/v1/ingestions/${id}`, payload: { state: 'closed' } });
    sessions.push(id);
  };
  const allPages = async (query: string) => {
    const journals: { lines: unknown[] }[] = [];
    for (let page = 0; ; page += 1) {
      const answer = await get(`/api/v1/journals?${query}limit=1000&page=${page}`);
      journals.push(...answer.data);
      if (page + 1 >= answer.totalPages) return journals;
    }
  };

  it('counts every journal once, of business events and of records a flow books, posted or not', async () => {
    await ingest('ledger', 'businessEvent', [
      businessEvent(),
      businessEvent({ amount: '5.25' }),
      businessEvent({ effectiveDate: '2026-11-19' }),
    ]);
    await ingest('ledger', 'businessEvent', [businessEvent({ amount: '7' })]);
    await ingest('loans', 'loanTransaction', loanRecords(4));
    await t.services.processor.drain();

    let perSession = 0;
    for (const id of sessions)
      perSession += (await get(`/api/v1/journals?ingestionId=${id}&limit=1`)).totalSize;
    const listed = await allPages('');
    const loanJournals = (await get(`/api/v1/journals?ingestionId=${sessions[2]}&limit=1`)).totalSize;
    expect(loanJournals).toBeGreaterThan(0);
    expect(listed).toHaveLength(perSession);

    const metrics = await get('/api/v1/statistics/operational-dashboard/journal-metrics');
    const posted = (await get('/api/v1/journals?status=posted&limit=1')).totalSize;
    const unposted = (await get('/api/v1/journals?status=unposted&limit=1')).totalSize;
    expect(metrics.postedJournals + metrics.unpostedJournals).toBe(perSession);
    expect(metrics).toMatchObject({ postedJournals: posted, unpostedJournals: unposted });
    expect(metrics.totalJournalLines).toBe(listed.reduce((sum, journal) => sum + journal.lines.length, 0));
    const byDay = (await get('/api/v1/statistics/operational-dashboard/journal-metrics-by-day')).data as {
      postedJournals: number;
      unpostedJournals: number;
    }[];
    expect(byDay.reduce((sum, day) => sum + day.postedJournals + day.unpostedJournals, 0)).toBe(perSession);
  });
});
