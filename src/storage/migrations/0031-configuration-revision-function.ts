import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../store.js';

/**
 * On PostgreSQL, `ledgerflow_configuration_revision()`: the stored configuration's revision (0
 * before the first upload) as committed when it is called. A volatile PL/pgSQL function takes a
 * snapshot of its own for its query, never inlined into the caller's: an audit entry reads the
 * revision in the statement that takes the chain's head (`audit-trail.ts`), after the wait for
 * the head's lock, where the statement's own snapshot would be older than a configuration change
 * committed meanwhile. Nothing on SQLite.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`
    create function ledgerflow_configuration_revision() returns bigint language plpgsql volatile as $$
    begin
      return coalesce((select revision from configuration where id = 1), 0);
    end
    $$`.execute(db);
}
