import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reprocessRunChange } from '../../src/modules/accounting/reprocess-run.js';
import { ChangeRunner } from '../../src/modules/changes/runner.js';
import { createReprocessStore } from '../../src/storage/accounting/reprocess-store.js';
import { createChangeStore } from '../../src/storage/changes/change-store.js';
import { migrateTo, migrateToLatest } from '../../src/storage/migrations/index.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { testClock } from '../helpers/clock.js';
import { createTestDatabaseUrl, dropTestDatabase, insertOpenSession } from '../helpers/store.js';

const at = '2026-03-01T10:00:00.000Z';

/**
 * Migration 0018 gives the processing errors already stored their reprocessing state (open, one
 * attempt, last attempted when recorded) and the schedule its defaults; a run then takes them.
 * Runs on the dialect of TEST_DATABASE_URL.
 */
describe('migration 0018: reprocessing', () => {
  let url: string;
  let store: Store;
  beforeAll(async () => {
    url = await createTestDatabaseUrl();
    store = openStore(url);
    await migrateTo(store, '0016-session-counters');
    await insertOpenSession(store, 'in_migration', 'ledger', 'businessEvent');
    await store.db
      .updateTable('ingestions')
      .set({ total_rows: 2, success_rows: 2, processed_rows: 2, processing_failed_rows: 2 })
      .execute();
    await store.db
      .insertInto('chunks')
      .values({
        ingestion_id: 'in_migration',
        chunk_seq: 1,
        chunk_name: null,
        idempotency_key: null,
        body_sha256: null,
        accepted_rows: 2,
        failed_rows: 0,
        created_at: at,
        rejected: 0,
        failed_records: '[]',
        answer_reference: null,
      } as never)
      .execute();
    for (const index of [0, 1]) {
      const record = await store.db
        .insertInto('records')
        .values({
          ingestion_id: 'in_migration',
          chunk_seq: 1,
          record_index: index,
          namespace: 'ledger',
          entity: 'businessEvent',
          data: '{}',
          processing: 0,
          created_at: at,
        } as never)
        .returning('record_id')
        .executeTakeFirstOrThrow();
      await store.db
        .insertInto('processing_errors')
        .values({
          ingestion_id: 'in_migration',
          record_id: Number(record.record_id),
          namespace: 'ledger',
          entity: 'businessEvent',
          code: 'no-account',
          message: 'm',
          record: '{}',
          created_at: at,
        } as never)
        .execute();
    }
    await migrateToLatest(store);
  });
  afterAll(async () => {
    await store.close();
    await dropTestDatabase(url);
  });

  it('makes the stored errors open after one attempt, and the schedule daily at 08:00 with 5 attempts', async () => {
    const errors = await store.db
      .selectFrom('processing_errors')
      .select(['state', 'attempts', 'last_attempt_at', 'closed_at', 'run_id', 'previous_code'])
      .execute();
    expect(errors).toEqual([
      { state: 'open', attempts: 1, last_attempt_at: at, closed_at: null, run_id: null, previous_code: null },
      { state: 'open', attempts: 1, last_attempt_at: at, closed_at: null, run_id: null, previous_code: null },
    ]);
    const reprocess = createReprocessStore(store);
    expect(await reprocess.schedule()).toMatchObject({
      mode: 'daily',
      dailyAt: '08:00',
      maxAttempts: 5,
      nextDueAt: null,
    });
    const runner = new ChangeRunner(createChangeStore(store), testClock(at));
    const { answer: run } = await runner.run(
      reprocessRunChange(() => {}),
      { trigger: 'manual', selection: { all: true }, maxAttempts: 5, recordsMax: 10 },
      { actor: { user: 'x@example.test' } },
    );
    expect(run).toMatchObject({ queued: 2, skipped: 0, state: 'running' });
    const waiting = await store.db.selectFrom('records').select(['processing', 'reprocess_run']).execute();
    expect(waiting.every((r) => Number(r.processing) === 1 && Number(r.reprocess_run) === run?.id)).toBe(
      true,
    );
  });
});
