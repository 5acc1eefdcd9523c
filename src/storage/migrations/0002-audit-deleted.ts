import type { Kysely } from 'kysely';

/**
 * The audit log records what a configuration upload or deletion wiped: `deleted` holds the
 * counts of sessions, records, journals, journal lines and processing errors as JSON text. Entries
 * written before this migration have none (null).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('audit_log').addColumn('deleted', 'text').execute();
}
