import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/storage/store.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { loanRecords } from '../helpers/records.js';
import { apiClient, eventually, type ServerProcess, startE2eServer } from '../helpers/server.js';
import { createTestDatabaseUrl, dropTestDatabase, TEST_DIALECT } from '../helpers/store.js';

type Api = Awaited<ReturnType<typeof apiClient>>;
type Page = { data: Record<string, unknown>[]; next: string | null };

const RECORDS = 100_000;
const CHUNK_RECORDS = 1000;
const CHUNKS_IN_FLIGHT = 4;

/**
 * Incremental extracts read through two service processes while both write to one PostgreSQL
 * (issue 25): no row skipped or repeated over 100,000 records and the journals processing makes
 * of them, on both instances at once.
 */
describe.runIf(TEST_DIALECT === 'postgres')('incremental extracts with two service processes writing', () => {
  let databaseUrl: string;
  let a: ServerProcess;
  let b: ServerProcess;
  let apiA: Api;
  let apiB: Api;

  beforeAll(async () => {
    databaseUrl = await createTestDatabaseUrl();
    const env = { BUSINESS_DATE: '2026-11-20' };
    [a, b] = await Promise.all([startE2eServer(databaseUrl, env), startE2eServer(databaseUrl, env)]);
    [apiA, apiB] = await Promise.all([apiClient(a.url), apiClient(b.url)]);
    expect((await apiA('PUT', '/api/v1/configuration/bulk', realisticConfiguration())).status).toBe(200);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await dropTestDatabase(databaseUrl);
  });

  const activeIncremental = async (body: Record<string, unknown>): Promise<number> => {
    const created = await apiA('POST', '/api/v1/extraction-configurations', { ...body, incremental: true });
    expect(created.status).toBe(201);
    const id = (created.body as { id: number }).id;
    expect((await apiB('PATCH', `/api/v1/extraction-configurations/${id}`, { state: 'Active' })).status).toBe(
      200,
    );
    return id;
  };

  /** One acknowledged read through `api`: every page of the pending read, then `increment`. */
  const readAndAck = async (api: Api, id: number, field: string): Promise<string[]> => {
    const values: string[] = [];
    let next: string | null = null;
    do {
      const query: string = next === null ? '' : `&after=${next}`;
      const answer = await api(
        'GET',
        `/api/v1/extraction-configurations/${id}/extractions/paginated?limit=1000${query}`,
      );
      expect(answer.status).toBe(200);
      const page = answer.body as Page;
      values.push(...page.data.map((row) => String(row[field])));
      next = page.next;
    } while (next !== null);
    expect((await api('POST', `/api/v1/extraction-configurations/${id}/increment`)).status).toBe(200);
    return values;
  };

  it('answers 100,000 records and their journals exactly once while both instances write', async () => {
    const records = await activeIncremental({
      name: 'records',
      source: 'records',
      filters: { namespace: 'loans', entity: 'loanTransaction' },
      fields: ['recordId'],
    });
    const journals = await activeIncremental({
      name: 'journals',
      source: 'posted-journals',
      fields: ['journalId'],
    });
    const session = (
      await apiA('POST', '/api/v1/ingestions', { namespace: 'loans', entity: 'loanTransaction' })
    ).body as { ingestionId: string };

    let writing = true;
    // As a client is asked to: a chunk answered 503 (the store did not answer in time, as on a
    // machine running other tests beside this one) is sent again with its idempotency key.
    const sender = async (lane: number) => {
      for (let c = lane; c < RECORDS / CHUNK_RECORDS; c += CHUNKS_IN_FLIGHT) {
        const body = { data: loanRecords(CHUNK_RECORDS, c * CHUNK_RECORDS) };
        const headers = { 'idempotency-key': `chunk-${c}` };
        let answer = await (c % 2 === 0 ? apiA : apiB)(
          'POST',
          `/api/v1/ingestions/${session.ingestionId}`,
          body,
          headers,
        );
        for (let retry = 0; answer.status === 503 && retry < 5; retry += 1) {
          // The store's error behind it, as the instances logged it.
          const logged = [a, b].flatMap((s) =>
            s
              .output()
              .split('\n')
              .filter((line) => line.includes('database unavailable'))
              .slice(-1),
          );
          console.warn(
            `chunk ${c} answered 503, sent again: ${JSON.stringify(answer.body)} ${logged.join(' ')}`,
          );
          await new Promise((resolve) => setTimeout(resolve, 1000));
          answer = await (c % 2 === 0 ? apiA : apiB)(
            'POST',
            `/api/v1/ingestions/${session.ingestionId}`,
            body,
            headers,
          );
        }
        expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      }
    };
    const readRecords: string[] = [];
    const readJournals: string[] = [];
    let round = 0;
    const reader = async () => {
      while (writing) {
        // Each round reads through the other instance than the last.
        const api = round % 2 === 0 ? apiA : apiB;
        round += 1;
        readRecords.push(...(await readAndAck(api, records, 'recordId')));
        readJournals.push(...(await readAndAck(api, journals, 'journalId')));
      }
    };
    const writers = Promise.all(Array.from({ length: CHUNKS_IN_FLIGHT }, (_, lane) => sender(lane))).then(
      async () => {
        await apiB('PATCH', `/api/v1/ingestions/${session.ingestionId}`, { state: 'closed' });
        await eventually(
          async () => {
            const view = (await apiA('GET', `/api/v1/ingestions/${session.ingestionId}`)).body as {
              processingStatus: string;
            };
            return view.processingStatus === 'completed' ? true : undefined;
          },
          240_000,
          500,
        );
        writing = false;
      },
    );
    await Promise.all([writers, reader()]);

    const store = openStore(databaseUrl);
    try {
      const storedRecords = (await store.db.selectFrom('records').select('record_id').execute()).map((r) =>
        String(r.record_id),
      );
      const storedJournals = (
        await store.db.selectFrom('journals').select('journal_id').where('posted', '=', 1).execute()
      ).map((r) => r.journal_id);
      expect(storedRecords).toHaveLength(RECORDS);
      // Reads after the last write: a transaction still running on the server holds rows back
      // until it ends, never for ever.
      const deadline = Date.now() + 60_000;
      while (
        (readRecords.length < storedRecords.length || readJournals.length < storedJournals.length) &&
        Date.now() < deadline
      ) {
        readRecords.push(...(await readAndAck(apiA, records, 'recordId')));
        readJournals.push(...(await readAndAck(apiB, journals, 'journalId')));
      }
      expect(new Set(readRecords).size).toBe(readRecords.length);
      expect(new Set(readJournals).size).toBe(readJournals.length);
      expect(readRecords.sort()).toEqual(storedRecords.sort());
      expect(readJournals.sort()).toEqual(storedJournals.sort());
      expect(round).toBeGreaterThan(2);
    } finally {
      await store.close();
    }
  }, 400_000);
});
