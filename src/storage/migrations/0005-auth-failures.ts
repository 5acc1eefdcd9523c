import type { Kysely } from 'kysely';

/**
 * Counters of failed authentications (client credentials and administration sign-in), kept in
 * the database so that every instance sharing one PostgreSQL counts the same attempts. A row is
 * one fixed window of one key: the SHA-256 of what is counted (a client id or e-mail with the
 * remote address, or the address alone), so no id, e-mail or address is stored in clear.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('auth_failures')
    .addColumn('key_hash', 'text', (c) => c.primaryKey())
    .addColumn('window_started_ms', 'bigint', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('auth_failures_window_started_ms')
    .on('auth_failures')
    .column('window_started_ms')
    .execute();
}
