import type { Kysely } from 'kysely';

/**
 * Cursor paging (docs/decisions.md, "Cursor paging") reads a page as `WHERE (sort key) >
 * (cursor key) ORDER BY sort key LIMIT n+1`; it costs the same on every page only when an index
 * holds the whole sort key. The journals list sorts by `(core_date, created_at, journal_id)` and
 * the sessions list by `(opened_on, ingestion_id)` (newest first, the index read backwards). The
 * single-column indexes they replace are their first column, so every other query they served
 * (a core date range, the balances as of a day) is served by the new ones as well.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('journals_page_order')
    .on('journals')
    .columns(['core_date', 'created_at', 'journal_id'])
    .execute();
  await db.schema.dropIndex('journals_core_date').execute();
  await db.schema
    .createIndex('ingestions_page_order')
    .on('ingestions')
    .columns(['opened_on', 'ingestion_id'])
    .execute();
  await db.schema.dropIndex('ingestions_opened_on').execute();
}
