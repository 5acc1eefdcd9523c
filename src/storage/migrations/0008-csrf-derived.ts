import type { Kysely } from 'kysely';

/**
 * The CSRF token of a sign-in session is no longer stored: it is derived from the session's
 * cookie value (`csrfTokenOf`, src/modules/auth/sign-ins.ts), of which only the SHA-256 is
 * stored, so nothing in the store lets anyone forge a request. Sessions open at the upgrade go on;
 * a page rendered before it carries the old token and is refused once, until it is reloaded.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('admin_sessions').dropColumn('csrf_token').execute();
}
