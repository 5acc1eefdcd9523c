import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_ERRORS_KEPT_MAX } from '../../src/modules/ingestion/chunk-body.js';
import { createIngestionStore } from '../../src/storage/ingestion-store.js';
import { migrateTo, migrateToLatest } from '../../src/storage/migrations/index.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { closedSessionRow, createTestDatabaseUrl, dropTestDatabase } from '../helpers/store.js';

const at = '2026-11-20T10:00:00.000Z';

/** A failed record as chunks stored them, with one error. */
const failure = (index: number) => ({
  index,
  record: {},
  errors: [{ field: 'amount', code: 'required', message: 'Field "amount" is mandatory but missing.' }],
});

/** A chunk row of a store at migration 0032; `failed` is its `failed_records` column. */
function chunk(
  ingestionId: string,
  seq: number,
  rows: { rejected: boolean; failedRows: number; failed: unknown },
) {
  return {
    ingestion_id: ingestionId,
    chunk_seq: seq,
    chunk_name: null,
    idempotency_key: `key-${seq}`,
    body_sha256: null,
    accepted_rows: rows.rejected ? 0 : 1,
    failed_rows: rows.failedRows,
    created_at: at,
    rejected: rows.rejected ? 1 : 0,
    failed_records: JSON.stringify(rows.failed),
    answer_reference: null,
    answered_at: at,
  };
}

/**
 * Migration 0033 counts every failed record a session had, stored or rejected, in the count a
 * chunk's write numbers its failed records from, and changes no other counter: a session that
 * holds more failed records than the sample keeps them and takes no more. Runs on the dialect
 * of TEST_DATABASE_URL.
 */
describe('migration 0033: the failed records a session counted', () => {
  let url: string;
  let store: Store;
  let before: Record<string, unknown>[];
  beforeAll(async () => {
    url = await createTestDatabaseUrl();
    store = openStore(url);
    await migrateTo(store, '0032-event-fingerprint-forms');
    const old = store.db as unknown as {
      insertInto(table: string): { values(rows: unknown): { execute(): Promise<unknown> } };
    };
    await old
      .insertInto('ingestions')
      .values([
        {
          ...closedSessionRow('in_mixed', at),
          chunk_seq_next: 4,
          chunks: 2,
          total_rows: 5,
          success_rows: 1,
          failed_rows: 4,
        },
        {
          ...closedSessionRow('in_full', at),
          chunk_seq_next: 1,
          chunks: 1,
          total_rows: 20_000,
          failed_rows: 20_000,
        },
        { ...closedSessionRow('in_clean', at), chunk_seq_next: 1, chunks: 1, total_rows: 3, success_rows: 3 },
        closedSessionRow('in_empty', at),
      ])
      .execute();
    await old
      .insertInto('chunks')
      .values([
        // Stored with 3 failed records, 2 listed (the capped form).
        chunk('in_mixed', 1, {
          rejected: false,
          failedRows: 3,
          failed: { listed: [failure(0), failure(1)], omitted: 1 },
        }),
        // Stored with 1 failed record, listed before the list was capped (the bare list).
        chunk('in_mixed', 2, { rejected: false, failedRows: 1, failed: [failure(1)] }),
        // Rejected: 7 rows, of which 2 failed, in the bare list.
        chunk('in_mixed', 3, { rejected: true, failedRows: 7, failed: [failure(0), failure(4)] }),
        // Rejected: 10 rows, of which 6 failed, 1 listed.
        chunk('in_mixed', 4, {
          rejected: true,
          failedRows: 10,
          failed: { listed: [failure(2)], omitted: 5 },
        }),
        chunk('in_full', 1, {
          rejected: false,
          failedRows: 20_000,
          failed: { listed: [failure(0)], omitted: 19_999 },
        }),
        chunk('in_clean', 1, { rejected: false, failedRows: 0, failed: { listed: [], omitted: 0 } }),
      ])
      .execute();
    // The full session kept more failed records than its sample holds now, as chunks kept their own.
    const keptBefore = Array.from({ length: SESSION_ERRORS_KEPT_MAX + 10 }, (_, i) => ({
      ingestion_id: 'in_full',
      chunk_seq: 1,
      record_index: i,
      record: '{}',
      errors: '[]',
      created_at: at,
    }));
    // A thousand rows a statement: SQLite takes at most 32,766 parameters in one.
    for (let i = 0; i < keptBefore.length; i += 1000)
      await old
        .insertInto('record_errors')
        .values(keptBefore.slice(i, i + 1000))
        .execute();
    before = await store.db.selectFrom('ingestions').selectAll().orderBy('ingestion_id').execute();
    await migrateToLatest(store);
  });
  afterAll(async () => {
    await store.close();
    await dropTestDatabase(url);
  });

  it("counts each session's failed records, stored or rejected, in whichever form its chunks kept them", async () => {
    const rows = await store.db
      .selectFrom('ingestions')
      .select(['ingestion_id', 'validation_failures'])
      .orderBy('ingestion_id')
      .execute();
    expect(rows.map((r) => [r.ingestion_id, Number(r.validation_failures)])).toEqual([
      ['in_clean', 0],
      ['in_empty', 0],
      ['in_full', 20_000],
      ['in_mixed', 3 + 1 + 2 + 6],
    ]);
  });

  it('changes no other counter of any session', async () => {
    const after = await store.db.selectFrom('ingestions').selectAll().orderBy('ingestion_id').execute();
    expect(after.map(({ validation_failures: _, ...row }) => row)).toEqual(before);
  });

  it('keeps the failed records a session kept before, and takes no more into a full sample', async () => {
    const write = {
      ingestionId: 'in_full',
      namespace: 'ledger',
      entity: 'journal',
      chunkName: null,
      idempotencyKey: null,
      bodySha256: null,
      accepted: { indexes: [], lines: '' },
      failed: [failure(0)],
      failedOmitted: 1,
      failedKept: [failure(0), failure(1)],
      totalRows: 2,
      rejected: true,
      awaitsProcessing: false,
      reference: 'after-migration',
      at,
      nowMs: Date.parse(at),
      revision: 0,
    };
    expect((await createIngestionStore(store).commitChunk(write)).kind).toBe('stored');
    const kept = await store.db
      .selectFrom('record_errors')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('ingestion_id', '=', 'in_full')
      .executeTakeFirstOrThrow();
    expect(Number(kept.n)).toBe(SESSION_ERRORS_KEPT_MAX + 10);
    const session = await store.db
      .selectFrom('ingestions')
      .select('validation_failures')
      .where('ingestion_id', '=', 'in_full')
      .executeTakeFirstOrThrow();
    expect(Number(session.validation_failures)).toBe(20_002);
  });
});
