import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../store.js';

type Db = Kysely<unknown>;

/**
 * Chunks keep their outcome instead of a rendered HTTP answer: whether the chunk was rejected,
 * its failed records, and the reference and time of the first answer, which a replay repeats.
 * The counts, sequence number and chunk name were columns already. Rows written before are
 * converted from their stored answer (`status_code`, `response`): a 400 was a rejected chunk,
 * whose problem body gave the reference and timestamp; a 201 had neither, so its reference
 * stays null and its time is the chunk's `created_at`. Then the rendered answer is dropped.
 */
export async function up(db: Db, dialect: Dialect): Promise<void> {
  await db.schema
    .alterTable('chunks')
    .addColumn('rejected', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('chunks')
    .addColumn('failed_records', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  await db.schema.alterTable('chunks').addColumn('answer_reference', 'text').execute();
  await db.schema
    .alterTable('chunks')
    .addColumn('answered_at', 'text', (c) => c.notNull().defaultTo(''))
    .execute();

  // One statement per dialect; `json` (not `jsonb`) on PostgreSQL keeps the records as sent.
  const member = (name: 'reference' | 'timestamp') =>
    dialect === 'postgres'
      ? sql<string>`(response::json ->> ${sql.lit(name)})`
      : sql<string>`json_extract(response, ${sql.lit(`$.${name}`)})`;
  const errors =
    dialect === 'postgres'
      ? sql<string>`coalesce((response::json -> 'errors')::text, '[]')`
      : sql<string>`coalesce(json_extract(response, '$.errors'), '[]')`;
  await sql`
    update chunks set
      rejected = case when status_code = 400 then 1 else 0 end,
      failed_records = ${errors},
      answer_reference = case when status_code = 400 then ${member('reference')} end,
      answered_at = coalesce(case when status_code = 400 then ${member('timestamp')} end, created_at)
  `.execute(db);

  await db.schema.alterTable('chunks').dropColumn('status_code').execute();
  await db.schema.alterTable('chunks').dropColumn('response').execute();
}
