import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../store.js';

/**
 * On PostgreSQL, every change that can refuse an access token's grant is announced on the
 * channel `ledgerflow_grants` (`NOTIFY`, sent when the change commits), so that each service
 * instance forgets the grants it remembers (`grant-cache.ts`, docs/adr/0031): a token or its
 * family revoked, a credential revoked, re-issued or moved to another owner, a user changed or
 * disabled, and any of their rows deleted, whoever writes them (an instance, the CLI, an
 * operator's own SQL). The writes of every token request are left out: a credential's
 * `last_used_at`, a refresh token's `used_at` and sealed answer. Triggers per statement, whose
 * notices PostgreSQL sends once per transaction. Nothing on SQLite, where grants are not
 * remembered.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`
    create function ledgerflow_grants_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('ledgerflow_grants', '');
      return null;
    end
    $$`.execute(db);
  const watched = [
    ['oauth_tokens', 'token_hash, kind, family_id, client_id, issued_at, expires_at, revoked_at'],
    ['token_families', 'family_id, client_id, created_at, revoked_at'],
    ['credentials', 'client_id, secret_hash, owner_email, name, created_at, expires_at, revoked_at'],
    ['users', 'email, display_name, roles, disabled, created_at'],
  ] as const;
  for (const [table, columns] of watched) {
    await sql
      .raw(
        `create trigger ${table}_grants_changed after update of ${columns} or delete or truncate on ${table} ` +
          'for each statement execute function ledgerflow_grants_changed()',
      )
      .execute(db);
  }
}
