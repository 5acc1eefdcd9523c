import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../store.js';

/**
 * Session counters, so that the ingestion metrics and the total of the sessions list cost the
 * days and entities asked about, never every session stored (`storage/session-counters.ts`
 * says how they are kept):
 * - `ingestions.counted`: 1 once a session's numbers are in the counters; the partial index
 *   `ingestions_uncounted` holds the sessions not yet counted (open, or expired and not yet
 *   swept), which the reads count one by one;
 * - `session_day_counts`: counted sessions, closed and expired, with their chunks, API calls and
 *   rows, per UTC day of `opened_on`;
 * - `session_entity_counts`: counted sessions, closed and expired, per namespace and entity.
 * The sessions already closed are counted here, one statement per table. The expired ones are
 * left to the sweep: whether a pending session has expired depends on the service's clock, which
 * a migration does not have.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  await db.schema
    .alterTable('ingestions')
    .addColumn('counted', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('session_day_counts')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('sessions', bigint, (c) => c.notNull())
    .addColumn('closed', bigint, (c) => c.notNull())
    .addColumn('expired', bigint, (c) => c.notNull())
    .addColumn('chunks', bigint, (c) => c.notNull())
    .addColumn('api_calls', bigint, (c) => c.notNull())
    .addColumn('total_rows', bigint, (c) => c.notNull())
    .addColumn('success_rows', bigint, (c) => c.notNull())
    .addColumn('failed_rows', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('session_day_counts_key', ['day'])
    .execute();
  await db.schema
    .createTable('session_entity_counts')
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('entity', 'text', (c) => c.notNull())
    .addColumn('sessions', bigint, (c) => c.notNull())
    .addColumn('closed', bigint, (c) => c.notNull())
    .addColumn('expired', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('session_entity_counts_key', ['namespace', 'entity'])
    .execute();
  await sql`update ingestions set counted = 1 where state = 'closed'`.execute(db);
  await db.schema
    .createIndex('ingestions_uncounted')
    .on('ingestions')
    .column('opened_on')
    .where(sql.ref('counted'), '=', sql.lit(0))
    .execute();
  await sql`
    insert into session_day_counts
      (day, sessions, closed, expired, chunks, api_calls, total_rows, success_rows, failed_rows)
    select substr(opened_on, 1, 10), count(*), count(*), 0, sum(chunks), sum(api_calls),
      sum(total_rows), sum(success_rows), sum(failed_rows)
    from ingestions where counted = 1 group by substr(opened_on, 1, 10)
  `.execute(db);
  await sql`
    insert into session_entity_counts (namespace, entity, sessions, closed, expired)
    select namespace, entity, count(*), count(*), 0
    from ingestions where counted = 1 group by namespace, entity
  `.execute(db);
}
