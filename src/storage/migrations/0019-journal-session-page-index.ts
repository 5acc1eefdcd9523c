import type { Kysely } from 'kysely';

/**
 * The journals of one session, paged in the journals' order (`?ingestionId=`, the CLI's and the
 * administration interface's session view): the index of a session's journals led by the origin
 * journal id gave no order, and the order's index no session, so a page read every journal of
 * the session (sorting) or every journal before it (filtering), 660 ms on PostgreSQL at 1.3
 * million journals. With the session's id before the sort key, a page is the same few index
 * reads at any position. The old index stays: it finds a session's origin journal ids.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('journals_session_page_order')
    .on('journals')
    .columns(['ingestion_id', 'core_date', 'created_at', 'journal_id'])
    .execute();
}
