import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateTo, migrateToLatest } from '../../src/storage/migrations/index.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { closedSessionRow, createTestDatabaseUrl, dropTestDatabase } from '../helpers/store.js';

const ingestionId = `in_${'b'.repeat(32)}`;
const at = (minute: number) => `2026-03-01T10:${String(minute).padStart(2, '0')}:00.000Z`;

/** A journal row as the service stored it before migration 0007. */
function journal(journalId: string, accountingConfig: string, origin: string | null, minute: number) {
  return {
    journal_id: journalId,
    ingestion_id: ingestionId,
    record_id: minute,
    core_date: '2026-03-01',
    original_core_date: null,
    journal_type: 'PERM',
    accounting_config: accountingConfig,
    node: '{"legalEntity":"NL01"}',
    posted: 1,
    reverses: null as string | null,
    reversed_by: null,
    origin_journal_id: origin,
    line_count: 2,
    created_at: at(minute),
  };
}

/**
 * Migration 0007 puts the unique index on origin journal ids over a store that may already hold
 * a journal posted twice (the finding it fixes): the repeats stay, marked `duplicate_of`, and
 * the index holds for everything else. Runs on the dialect of TEST_DATABASE_URL.
 */
describe('migration 0007: an origin journal id is booked once per accounting configuration', () => {
  let url: string;
  let store: Store;
  beforeAll(async () => {
    url = await createTestDatabaseUrl();
    store = openStore(url);
    await migrateTo(store, '0006-refresh-answers-and-request-counts');
    const db = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    await db
      .insertInto('ingestions')
      .values(closedSessionRow(ingestionId, at(0)))
      .execute();
    await db
      .insertInto('journals')
      .values([
        journal('j-first', 'IFRS', 'X', 1),
        { ...journal('j-repeat', 'IFRS', 'X', 2), reversed_by: 'j-repeat-reversal' },
        { ...journal('j-repeat-reversal', 'IFRS', 'X', 2), reverses: 'j-repeat' },
        journal('j-again', 'IFRS', 'X', 3),
        journal('j-local', 'LOCAL_GAAP', 'X', 2),
        journal('j-other', 'IFRS', 'Y', 1),
        journal('j-event-1', 'IFRS', null, 1),
        journal('j-event-2', 'IFRS', null, 2),
      ])
      .execute();
    await migrateToLatest(store);
  });
  afterAll(async () => {
    await store?.close();
    if (url !== undefined) await dropTestDatabase(url);
  });

  it('keeps every journal and marks each repeat with the first journal of its origin and configuration', async () => {
    const rows = await store.db
      .selectFrom('journals')
      .select(['journal_id', 'duplicate_of'])
      .orderBy('journal_id')
      .execute();
    expect(rows).toEqual([
      { journal_id: 'j-again', duplicate_of: 'j-first' },
      { journal_id: 'j-event-1', duplicate_of: null },
      { journal_id: 'j-event-2', duplicate_of: null },
      { journal_id: 'j-first', duplicate_of: null },
      { journal_id: 'j-local', duplicate_of: null },
      { journal_id: 'j-other', duplicate_of: null },
      { journal_id: 'j-repeat', duplicate_of: 'j-first' },
      { journal_id: 'j-repeat-reversal', duplicate_of: null },
    ]);
  });

  it('refuses a new journal that repeats an origin journal id of its accounting configuration', async () => {
    const db = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    await expect(
      db
        .insertInto('journals')
        .values(journal('j-new', 'IFRS', 'Y', 4))
        .execute(),
    ).rejects.toThrow(/unique/i);
    await db
      .insertInto('journals')
      .values(journal('j-new', 'IFRS', 'Z', 4))
      .execute();
    await db
      .insertInto('journals')
      .values(journal('j-new-event', 'IFRS', null, 4))
      .execute();
  });
});
