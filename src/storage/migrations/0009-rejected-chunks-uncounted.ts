import { type Kysely, sql } from 'kysely';

/**
 * A rejected atomic chunk no longer counts in its session's `chunks`, `totalRows` and
 * `failedRows` (its records count when they are sent again and stored; docs/decisions.md,
 * Chunks). Sessions stored before had every row of each rejected chunk counted as failed; this
 * takes those rows and chunks out again, so that old and new sessions read alike. A rejected
 * chunk's `failed_rows` holds all its rows, as its answer said, and it stored none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const rejected = sql`from chunks as c where c.ingestion_id = ingestions.ingestion_id and c.rejected = 1`;
  await sql`
    update ingestions set
      chunks = chunks - (select count(*) ${rejected}),
      total_rows = total_rows - (select coalesce(sum(c.failed_rows), 0) ${rejected}),
      failed_rows = failed_rows - (select coalesce(sum(c.failed_rows), 0) ${rejected})
    where exists (select 1 ${rejected})
  `.execute(db);
}
