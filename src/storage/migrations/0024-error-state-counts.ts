import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../store.js';

/**
 * Processing errors queued by a reprocessing run and closed by one, counted as they change
 * (`statistics-counters.ts`, `countErrorStates`), striped by session as the other counters every
 * processing round adds to (`counter-stripes.ts`): `/metrics` and the reprocessing statistics read
 * the errors by state at every scrape, which counted every error ever recorded. Open errors need
 * no row here: `processing_error_days` counts them by day and code. Filled from a full count, once.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('processing_error_states')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('stripe', 'integer', (c) => c.notNull())
    .addColumn('errors', dialect === 'postgres' ? 'bigint' : 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('processing_error_states_key', ['state', 'stripe'])
    .execute();
  await sql`
    insert into processing_error_states (state, stripe, errors)
    select state, 0, count(*) from processing_errors where state in ('queued', 'closed') group by state
  `.execute(db);
}
