import type { Kysely, Transaction, Updateable } from 'kysely';
import type { AuditActor } from '../modules/audit/store.js';
import type { AuthStore, UserRow } from '../modules/auth/store.js';
import { appendAudit } from './audit-trail.js';
import { toUser, userSummary } from './auth-rows.js';
import { countRows } from './count.js';
import type { Database } from './schema.js';
import type { DialectAdapter, Store } from './store.js';
import type { UsersTable } from './tables/access.js';

/** What `updateUser` may change of a user. */
type UserChange = Parameters<AuthStore['updateUser']>[1];

/**
 * The users of the auth module's port (`createAuthStore`): the reads here, each change one
 * transaction with its audit entry.
 */
export function createUserStore(
  store: Store,
): Pick<AuthStore, 'findUser' | 'listUsers' | 'insertUser' | 'updateUser' | 'countUsers' | 'setPassword'> {
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

    insertUser: (user, actor) => insertUser(db, adapter, user, actor),

    updateUser: (email, change, keepEnabledHolderOf, audit) =>
      updateUser(db, adapter, email, change, keepEnabledHolderOf, audit),

    setPassword: (email, passwordHash, audit) => setPassword(db, adapter, email, passwordHash, audit),

    async countUsers() {
      const total = await countRows(db.selectFrom('users'));
      return Number(total);
    },
  };
}

/** `AuthStore.insertUser`: the user and its audit entry in one transaction, nothing when the e-mail exists. */
async function insertUser(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  user: UserRow,
  actor: AuditActor,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const result = await trx
      .insertInto('users')
      .values({
        email: user.email,
        display_name: user.displayName,
        password_hash: user.passwordHash,
        roles: JSON.stringify(user.roles),
        disabled: user.disabled ? 1 : 0,
        created_at: user.createdAt,
      })
      .onConflict((oc) => oc.column('email').doNothing())
      .executeTakeFirst();
    if (Number(result.numInsertedOrUpdatedRows ?? 0) !== 1) return false;
    await appendAudit(trx, adapter, {
      at: user.createdAt,
      action: 'users.create',
      actor,
      before: null,
      after: userSummary(user),
    });
    return true;
  });
}

/**
 * `AuthStore.updateUser` in one transaction, its row locks in this order: the holders of
 * `keepEnabledHolderOf` (`takesLastHolder`), then the user's row; the audit entry last, when
 * something changed.
 */
async function updateUser(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  email: string,
  change: UserChange,
  keepEnabledHolderOf: string | undefined,
  { actor, at }: { actor: AuditActor; at: string },
): Promise<UserRow | undefined | 'last-holder'> {
  return db.transaction().execute(async (trx) => {
    if (
      keepEnabledHolderOf !== undefined &&
      (await takesLastHolder(trx, adapter, email, change, keepEnabledHolderOf))
    )
      return 'last-holder';
    // The user as it was, for the audit entry; on PostgreSQL locked, so the picture is the
    // one this change replaces; after the holders, so every change takes its row locks in
    // the holders' order and none deadlocks.
    const currentQuery = trx.selectFrom('users').selectAll().where('email', '=', email);
    const current = await adapter.forUpdate(currentQuery).executeTakeFirst();
    if (current === undefined) return undefined;
    const values = userValuesOf(change);
    if (Object.keys(values).length > 0) {
      await trx.updateTable('users').set(values).where('email', '=', email).execute();
    }
    const row = await trx.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
    if (row === undefined) return undefined;
    const before = userSummary(toUser(current));
    const after = userSummary(toUser(row));
    if (JSON.stringify(before) !== JSON.stringify(after)) {
      await appendAudit(trx, adapter, { at, action: 'users.update', actor, before, after });
    }
    return toUser(row);
  });
}

/**
 * Whether `change` of the user `email` takes `role` from its last enabled holder, read inside
 * `trx`; false without a read when the change takes the role from nobody.
 */
async function takesLastHolder(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
  email: string,
  change: UserChange,
  role: string,
): Promise<boolean> {
  const takesRoleAway =
    change.disabled === true || (change.roles !== undefined && !change.roles.includes(role));
  if (!takesRoleAway) return false;
  // The enabled holders of the role, locked in one order on PostgreSQL, so concurrent
  // changes queue here and each sees who still holds the role; SQLite runs one write
  // transaction at a time.
  const holdersQuery = trx
    .selectFrom('users')
    .select('email')
    .where('disabled', '=', 0)
    .where('roles', 'like', `%${JSON.stringify(role)}%`)
    .orderBy('email');
  const holders = await adapter.forUpdate(holdersQuery).execute();
  return holders.length === 1 && holders[0]?.email === email;
}

/** The columns `change` sets (none when it changes nothing). */
function userValuesOf(change: UserChange): Updateable<UsersTable> {
  const values: Updateable<UsersTable> = {};
  if (change.roles !== undefined) values.roles = JSON.stringify(change.roles);
  if (change.disabled !== undefined) values.disabled = change.disabled ? 1 : 0;
  if (change.displayName !== undefined) values.display_name = change.displayName;
  return values;
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
