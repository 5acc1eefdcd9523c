import { type Kysely, sql } from 'kysely';

/**
 * `journals_ingestion` (a session's journals by origin journal id) is kept for the journals
 * that carry an origin journal id only: the direct journals of the `journal` entity, whose
 * processing reads the origin ids its session already booked (`claim.ts`). The journals of
 * business events and flows carry none and were in it for nothing: every one of them cost an
 * index entry more to write, while the lookups by session alone (paging, counting, the cascade
 * of a session's removal) are served by `journals_session_page_order` (migration 0019).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('journals_ingestion').execute();
  await db.schema
    .createIndex('journals_ingestion')
    .on('journals')
    .columns(['ingestion_id', 'origin_journal_id'])
    .where(sql.ref('origin_journal_id'), 'is not', null)
    .execute();
}
