import type { AuthStore } from '../modules/auth/store.js';
import { joinedOwner, toCredential } from './auth-rows.js';
import { countRows } from './count.js';
import type { Store } from './store.js';

/**
 * The credentials of the auth module's port (`createAuthStore`): the reads, and what a token
 * request records. A credential's creation and revocation run through the change runner, over
 * `access-tables.ts`.
 */
export function createCredentialStore(
  store: Store,
): Pick<AuthStore, 'findCredential' | 'findCredentialWithOwner' | 'listCredentials' | 'markCredentialUsed'> {
  const { db } = store;
  return {
    async findCredential(clientId) {
      const row = await db
        .selectFrom('credentials')
        .selectAll()
        .where('client_id', '=', clientId)
        .executeTakeFirst();
      return row === undefined ? undefined : toCredential(row);
    },

    async findCredentialWithOwner(clientId) {
      // Every credential has its owner: `owner_email` references the users.
      const row = await db
        .selectFrom('credentials as c')
        .innerJoin('users as u', 'u.email', 'c.owner_email')
        .selectAll('c')
        .select(['u.email', 'u.display_name', 'u.roles', 'u.disabled', 'u.created_at as user_created_at'])
        .where('c.client_id', '=', clientId)
        .executeTakeFirst();
      return row === undefined ? undefined : { credential: toCredential(row), owner: joinedOwner(row) };
    },

    async listCredentials(page, limit) {
      const rows = await db
        .selectFrom('credentials')
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('client_id')
        .limit(limit)
        .offset(page * limit)
        .execute();
      const total = await countRows(db.selectFrom('credentials'));
      return { rows: rows.map(toCredential), total };
    },

    async markCredentialUsed(clientId, at) {
      await db
        .updateTable('credentials')
        .set({ last_used_at: at })
        .where('client_id', '=', clientId)
        .execute();
    },
  };
}
