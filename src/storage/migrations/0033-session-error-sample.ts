import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../store.js';

/**
 * A session keeps a sample of its failed records rather than up to 5,000 per chunk
 * (`SESSION_ERRORS_KEPT_MAX`, `modules/ingestion/chunk-body.ts`): `validation_failures` counts
 * every record of the session's chunks that failed validation, stored or rejected, kept or
 * only counted, and a chunk's write numbers its failed records from it, keeping those numbered
 * below the bound.
 *
 * Filled from the chunks stored, so that a session counts every failure it had and takes no
 * more into its sample than it has room for: a stored chunk's failures are its `failed_rows`; a
 * rejected chunk's `failed_rows` counts all its rows, so its failures are read from its outcome,
 * `{"listed": [...], "omitted": n}`, or the bare list written before the list was capped, in
 * which every failed record is listed. No other counter changes. The rows a session kept before
 * stay: one that holds more than the sample keeps them all and takes no more.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema
    .alterTable('ingestions')
    .addColumn('validation_failures', dialect === 'postgres' ? 'bigint' : 'integer', (c) =>
      c.notNull().defaultTo(0),
    )
    .execute();
  const rejectedFailures =
    dialect === 'postgres'
      ? sql`case when json_typeof(c.failed_records::json) = 'array'
          then json_array_length(c.failed_records::json)
          else json_array_length(c.failed_records::json -> 'listed')
            + coalesce((c.failed_records::json ->> 'omitted')::bigint, 0)
        end`
      : sql`case when json_type(c.failed_records) = 'array'
          then json_array_length(c.failed_records)
          else json_array_length(c.failed_records, '$.listed')
            + coalesce(json_extract(c.failed_records, '$.omitted'), 0)
        end`;
  // Only chunks with failures: a rejected chunk has at least one, a stored one counts them.
  const withFailures = sql`from chunks as c where c.ingestion_id = ingestions.ingestion_id and c.failed_rows > 0`;
  await sql`
    update ingestions set validation_failures = (
      select sum(case when c.rejected = 1 then ${rejectedFailures} else c.failed_rows end) ${withFailures}
    )
    where exists (select 1 ${withFailures})
  `.execute(db);
}
