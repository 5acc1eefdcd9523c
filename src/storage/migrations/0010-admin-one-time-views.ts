import type { ColumnDefinitionBuilder, Kysely } from 'kysely';
import type { Dialect } from '../store.js';

/**
 * What a page of the administration interface shows once, after the redirect that follows the
 * form that made it (a new credential's secret), kept in the database so that whichever
 * instance the redirected request reaches can show it. A row belongs to one sign-in session
 * (the SHA-256 of its cookie value, and it goes when the session goes) and one key (the client
 * id); its value is sealed under a key derived from the cookie value, which only the browser
 * holds, so the store never holds it in clear. `id` orders a session's views, oldest first.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const serial = dialect === 'postgres' ? 'bigserial' : 'integer';
  const idColumn = (c: ColumnDefinitionBuilder) =>
    dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement();
  await db.schema
    .createTable('admin_one_time_views')
    .addColumn('id', serial, idColumn)
    .addColumn('session_hash', 'text', (c) =>
      c.notNull().references('admin_sessions.session_hash').onDelete('cascade'),
    )
    .addColumn('view_key', 'text', (c) => c.notNull())
    .addColumn('sealed', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('admin_one_time_views_session_key', ['session_hash', 'view_key'])
    .execute();
  await db.schema
    .createIndex('admin_one_time_views_expires_at')
    .on('admin_one_time_views')
    .column('expires_at')
    .execute();
}
