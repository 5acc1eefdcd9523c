import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateTo, migrateToLatest } from '../../src/storage/migrations/index.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { closedSessionRow, createTestDatabaseUrl, dropTestDatabase, TEST_DIALECT } from '../helpers/store.js';

const ingestionId = `in_${'c'.repeat(32)}`;
const at = '2026-03-01T10:00:00.000Z';

/** A journal row as the service stores it; `origin` is set on direct journals only. */
function journal(journalId: string, origin: string | null, recordId: number) {
  return {
    journal_id: journalId,
    ingestion_id: ingestionId,
    record_id: recordId,
    core_date: '2026-03-01',
    original_core_date: null,
    journal_type: 'PERM',
    accounting_config: 'IFRS',
    node: '{"legalEntity":"NL01"}',
    posted: 1,
    reverses: null,
    reversed_by: null,
    origin_journal_id: origin,
    line_count: 2,
    created_at: at,
  };
}

/** The origin journal ids a session booked, as processing reads them for a chunk of journals. */
const originsOfSession = sql<{ origin_journal_id: string }>`
  select distinct origin_journal_id from journals
  where ingestion_id = ${ingestionId} and origin_journal_id is not null
  order by origin_journal_id`;

/**
 * Migration 0029 keeps `journals_ingestion` for the journals that carry an origin journal id
 * only, so the journals of business events no longer write an entry into it. Runs on the
 * dialect of TEST_DATABASE_URL.
 */
describe('migration 0029: the session index of origin journal ids holds direct journals only', () => {
  let url: string;
  let store: Store;
  beforeAll(async () => {
    url = await createTestDatabaseUrl();
    store = openStore(url);
    await migrateTo(store, '0028-approval-requests');
    const db = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    await db.insertInto('ingestions').values(closedSessionRow(ingestionId, at)).execute();
    await db
      .insertInto('journals')
      .values([
        journal('j-direct-1', 'B', 1),
        journal('j-direct-2', 'A', 2),
        journal('j-event-1', null, 3),
        journal('j-event-2', null, 4),
      ])
      .execute();
    await migrateToLatest(store);
  });
  afterAll(async () => {
    await store?.close();
    if (url !== undefined) await dropTestDatabase(url);
  });

  it('defines the index over the journals with an origin journal id only', async () => {
    const definition =
      TEST_DIALECT === 'postgres'
        ? await sql<{ text: string }>`
            select indexdef as text from pg_indexes where indexname = 'journals_ingestion'`.execute(store.db)
        : await sql<{ text: string }>`
            select sql as text from sqlite_master where name = 'journals_ingestion'`.execute(store.db);
    expect(definition.rows).toHaveLength(1);
    expect(definition.rows[0]?.text.toLowerCase()).toMatch(/where \(?"?origin_journal_id"? is not null\)?/);
  });

  it('still finds the origin journal ids a session booked, and every journal of the session', async () => {
    const origins = await originsOfSession.execute(store.db);
    expect(origins.rows.map((row) => row.origin_journal_id)).toEqual(['A', 'B']);
    const all = await store.db
      .selectFrom('journals')
      .select('journal_id')
      .where('ingestion_id', '=', ingestionId)
      .orderBy('journal_id')
      .execute();
    expect(all.map((row) => row.journal_id)).toEqual(['j-direct-1', 'j-direct-2', 'j-event-1', 'j-event-2']);
  });

  it.runIf(TEST_DIALECT === 'sqlite')('reads those origin journal ids from the index alone', async () => {
    const plan = await sql<{ detail: string }>`explain query plan ${originsOfSession}`.execute(store.db);
    expect(plan.rows.map((row) => row.detail).join('\n')).toMatch(/COVERING INDEX journals_ingestion/);
  });
});
