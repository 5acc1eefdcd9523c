import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReprocessStore } from '../../src/storage/accounting/reprocess-store.js';
import { migrateTo, migrateToLatest } from '../../src/storage/migrations/index.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { createTestDatabaseUrl, dropTestDatabase, insertOpenSession } from '../helpers/store.js';

const at = '2026-11-20T10:00:00.000Z';
const STATES = ['open', 'queued', 'queued', 'closed'] as const;

/**
 * Migration 0024 counts the processing errors already queued and closed, so that the errors by
 * state are read from counters from then on. Runs on the dialect of TEST_DATABASE_URL.
 */
describe('migration 0024: processing errors by state', () => {
  let url: string;
  let store: Store;
  beforeAll(async () => {
    url = await createTestDatabaseUrl();
    store = openStore(url);
    await migrateTo(store, '0022-reversals');
    await insertOpenSession(store, 'in_states', 'ledger', 'businessEvent');
    await store.db
      .insertInto('chunks')
      .values({
        ingestion_id: 'in_states',
        chunk_seq: 1,
        chunk_name: null,
        idempotency_key: null,
        body_sha256: null,
        accepted_rows: STATES.length,
        failed_rows: 0,
        created_at: at,
        rejected: 0,
        failed_records: '[]',
        answer_reference: null,
      } as never)
      .execute();
    for (const [index, state] of STATES.entries()) {
      const record = await store.db
        .insertInto('records')
        .values({
          ingestion_id: 'in_states',
          chunk_seq: 1,
          record_index: index,
          namespace: 'ledger',
          entity: 'businessEvent',
          data: '{}',
          processing: state === 'queued' ? 1 : 0,
          created_at: at,
        } as never)
        .returning('record_id')
        .executeTakeFirstOrThrow();
      await store.db
        .insertInto('processing_errors')
        .values({
          ingestion_id: 'in_states',
          record_id: Number(record.record_id),
          namespace: 'ledger',
          entity: 'businessEvent',
          code: 'no-account',
          message: 'm',
          record: '{}',
          created_at: at,
          state,
        } as never)
        .execute();
    }
    // The open one, as processing would have counted it.
    await store.db
      .insertInto('processing_error_days')
      .values({ day: '2026-11-20', code: 'no-account', errors: 1 })
      .execute();
    await migrateToLatest(store);
  });
  afterAll(async () => {
    await store.close();
    await dropTestDatabase(url);
  });

  it('counts the queued and closed errors stored, and reads the open ones from the error days', async () => {
    expect(await createReprocessStore(store).countByState()).toEqual({ open: 1, queued: 2, closed: 1 });
  });
});
