import type { Kysely } from 'kysely';
import type { AuditActor } from '../modules/audit/store.js';
import type { AuthStore } from '../modules/auth/store.js';
import { appendAudit } from './audit-trail.js';
import { toUser } from './auth-rows.js';
import { countRows } from './count.js';
import type { Database } from './schema.js';
import type { DialectAdapter, Store } from './store.js';

/**
 * The users of the auth module's port (`createAuthStore`): the reads here, and a password's
 * change in one transaction with its audit entry. A user's creation and change run through the
 * change runner, over `access-tables.ts`.
 */
export function createUserStore(
  store: Store,
): Pick<AuthStore, 'findUser' | 'listUsers' | 'countUsers' | 'setPassword'> {
  const { db, adapter } = store;
  return {
    async findUser(email) {
      const row = await db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
      return row === undefined ? undefined : toUser(row);
    },

    async listUsers(page, limit) {
      const rows = await db
        .selectFrom('users')
        .selectAll()
        .orderBy('email')
        .limit(limit)
        .offset(page * limit)
        .execute();
      const total = await countRows(db.selectFrom('users'));
      return { rows: rows.map(toUser), total };
    },

    setPassword: (email, passwordHash, audit) => setPassword(db, adapter, email, passwordHash, audit),

    async countUsers() {
      const total = await countRows(db.selectFrom('users'));
      return Number(total);
    },
  };
}

/** `AuthStore.setPassword`: the hash replaced, the user's sign-ins ended and the audit entry, in one transaction. */
async function setPassword(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  email: string,
  passwordHash: string,
  { actor, at, generated }: { actor: AuditActor; at: string; generated: boolean },
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const result = await trx
      .updateTable('users')
      .set({ password_hash: passwordHash })
      .where('email', '=', email)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return false;
    const ended = await trx.deleteFrom('admin_sign_ins').where('user_email', '=', email).executeTakeFirst();
    await appendAudit(trx, adapter, {
      at,
      action: 'users.set-password',
      actor,
      details: { email, generated, signInsEnded: Number(ended.numDeletedRows) },
    });
    return true;
  });
}
