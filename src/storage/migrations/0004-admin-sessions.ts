import type { Kysely } from 'kysely';

/**
 * Sign-in sessions of the administration interface, kept in the database so that every
 * instance sharing one PostgreSQL knows them: the SHA-256 of the cookie value (never the value),
 * the user, the CSRF token of the session, and when it expires (idle deadline, never later than
 * the absolute one). Credentials get `last_used_at`: when the credential last obtained a token.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('admin_sessions')
    .addColumn('session_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_email', 'text', (c) => c.notNull().references('users.email').onDelete('cascade'))
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('ends_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('admin_sessions_expires_at')
    .on('admin_sessions')
    .column('expires_at')
    .execute();
  await db.schema.alterTable('credentials').addColumn('last_used_at', 'text').execute();
}
