import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../store.js';

/**
 * Striped counters (`storage/counter-stripes.ts`): records per entity and sessions per day and
 * per entity get a `stripe` in their key, so that writes of different sessions add to different
 * rows. Each table is made anew with the stripe in its primary key and its rows summed into
 * stripe 0 (the sums stay what they were); the records per entity become 64-bit on PostgreSQL
 * as the session counters are, since an entity may hold more than 2^31 records.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  await db.schema
    .createTable('entity_record_counts_striped')
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('entity', 'text', (c) => c.notNull())
    .addColumn('stripe', 'integer', (c) => c.notNull())
    .addColumn('waiting', bigint, (c) => c.notNull())
    .addColumn('done', bigint, (c) => c.notNull())
    .addColumn('errors', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('entity_record_counts_stripe_key', ['namespace', 'entity', 'stripe'])
    .execute();
  await sql`
    insert into entity_record_counts_striped (namespace, entity, stripe, waiting, done, errors)
    select namespace, entity, 0, sum(waiting), sum(done), sum(errors)
    from entity_record_counts group by namespace, entity
  `.execute(db);
  await db.schema
    .createTable('session_day_counts_striped')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('stripe', 'integer', (c) => c.notNull())
    .addColumn('sessions', bigint, (c) => c.notNull())
    .addColumn('closed', bigint, (c) => c.notNull())
    .addColumn('expired', bigint, (c) => c.notNull())
    .addColumn('chunks', bigint, (c) => c.notNull())
    .addColumn('api_calls', bigint, (c) => c.notNull())
    .addColumn('total_rows', bigint, (c) => c.notNull())
    .addColumn('success_rows', bigint, (c) => c.notNull())
    .addColumn('failed_rows', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('session_day_counts_stripe_key', ['day', 'stripe'])
    .execute();
  await sql`
    insert into session_day_counts_striped
      (day, stripe, sessions, closed, expired, chunks, api_calls, total_rows, success_rows, failed_rows)
    select day, 0, sum(sessions), sum(closed), sum(expired), sum(chunks), sum(api_calls),
      sum(total_rows), sum(success_rows), sum(failed_rows)
    from session_day_counts group by day
  `.execute(db);
  await db.schema
    .createTable('session_entity_counts_striped')
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('entity', 'text', (c) => c.notNull())
    .addColumn('stripe', 'integer', (c) => c.notNull())
    .addColumn('sessions', bigint, (c) => c.notNull())
    .addColumn('closed', bigint, (c) => c.notNull())
    .addColumn('expired', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('session_entity_counts_stripe_key', ['namespace', 'entity', 'stripe'])
    .execute();
  await sql`
    insert into session_entity_counts_striped (namespace, entity, stripe, sessions, closed, expired)
    select namespace, entity, 0, sum(sessions), sum(closed), sum(expired)
    from session_entity_counts group by namespace, entity
  `.execute(db);
  for (const table of ['entity_record_counts', 'session_day_counts', 'session_entity_counts']) {
    await db.schema.dropTable(table).execute();
    await db.schema.alterTable(`${table}_striped`).renameTo(table).execute();
  }
}
