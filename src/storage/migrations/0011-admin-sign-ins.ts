import type { Kysely } from 'kysely';

/**
 * The administration interface's sign-ins stop being called sessions, in the database as in the
 * code (`modules/auth/sign-ins.ts`; a *session* is an ingestion session only): `admin_sessions`
 * becomes `admin_sign_ins`, and `session_hash` becomes `sign_in_hash` there and in
 * `admin_one_time_views`. Both dialects rename in place and carry the foreign keys along (SQLite
 * rewrites the references of a renamed table or column since 3.26), so the rows and the cascade
 * from a sign-in to its one-time views stay. The expiry index is made again under the new name;
 * constraint names on PostgreSQL keep their old names, which nothing reads.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('admin_sessions').renameTo('admin_sign_ins').execute();
  await db.schema.alterTable('admin_sign_ins').renameColumn('session_hash', 'sign_in_hash').execute();
  await db.schema.alterTable('admin_one_time_views').renameColumn('session_hash', 'sign_in_hash').execute();
  await db.schema.dropIndex('admin_sessions_expires_at').execute();
  await db.schema
    .createIndex('admin_sign_ins_expires_at')
    .on('admin_sign_ins')
    .column('expires_at')
    .execute();
}
