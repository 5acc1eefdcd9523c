import type { Kysely, Updateable } from 'kysely';
import type { AccessTables, CredentialRow, UserChange } from '../modules/auth/store.js';
import { toCredential, toUser } from './auth-rows.js';
import type { Database } from './schema.js';
import type { DialectAdapter } from './store.js';
import type { UsersTable } from './tables/access.js';

/**
 * The users and credentials of the auth module's port (`AccessTables`) over the change runner's
 * transaction `trx`: rows only, with no transaction of their own and no audit entry. The row
 * locks, which only PostgreSQL takes, go in one order: the holders of a role
 * (`lockEnabledHolders`), then the user's row (`lockUser`), so concurrent changes never deadlock.
 */
export function accessTablesIn(trx: Kysely<Database>, adapter: DialectAdapter): AccessTables {
  return {
    async findUser(email) {
      const row = await trx.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
      return row === undefined ? undefined : toUser(row);
    },

    async insertUser(user) {
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
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
    },

    async lockUser(email) {
      const query = trx.selectFrom('users').selectAll().where('email', '=', email);
      const row = await adapter.forUpdate(query).executeTakeFirst();
      return row === undefined ? undefined : toUser(row);
    },

    async updateUser(email, change) {
      const values = userValuesOf(change);
      if (Object.keys(values).length > 0) {
        await trx.updateTable('users').set(values).where('email', '=', email).execute();
      }
      const row = await trx
        .selectFrom('users')
        .selectAll()
        .where('email', '=', email)
        .executeTakeFirstOrThrow();
      return toUser(row);
    },

    async lockEnabledHolders(role) {
      const query = trx
        .selectFrom('users')
        .select('email')
        .where('disabled', '=', 0)
        .where('roles', 'like', `%${JSON.stringify(role)}%`)
        .orderBy('email');
      const rows = await adapter.forUpdate(query).execute();
      return rows.map((row) => row.email);
    },

    async findCredential(clientId) {
      const row = await trx
        .selectFrom('credentials')
        .selectAll()
        .where('client_id', '=', clientId)
        .executeTakeFirst();
      return row === undefined ? undefined : toCredential(row);
    },

    upsertCredential: (credential) => upsertCredential(trx, credential),

    revokeCredential: (clientId, at) => revokeCredential(trx, clientId, at),
  };
}

/** The columns `change` sets (none when it changes nothing). */
function userValuesOf(change: UserChange): Updateable<UsersTable> {
  const values: Updateable<UsersTable> = {};
  if (change.roles !== undefined) values.roles = JSON.stringify(change.roles);
  if (change.disabled !== undefined) values.disabled = change.disabled ? 1 : 0;
  if (change.displayName !== undefined) values.display_name = change.displayName;
  return values;
}

/** `AccessTables.upsertCredential`: the credential as it was, then the upsert. */
async function upsertCredential(
  trx: Kysely<Database>,
  credential: CredentialRow,
): Promise<{ previous: CredentialRow | undefined; row: CredentialRow }> {
  const values = {
    client_id: credential.clientId,
    secret_hash: credential.secretHash,
    owner_email: credential.ownerEmail,
    name: credential.name,
    created_at: credential.createdAt,
    expires_at: credential.expiresAt,
    revoked_at: credential.revokedAt,
  };
  const previous = await trx
    .selectFrom('credentials')
    .selectAll()
    .where('client_id', '=', credential.clientId)
    .executeTakeFirst();
  const row = await trx
    .insertInto('credentials')
    .values(values)
    .onConflict((oc) =>
      oc.column('client_id').doUpdateSet({
        secret_hash: values.secret_hash,
        owner_email: values.owner_email,
        expires_at: values.expires_at,
        revoked_at: null,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
  return { previous: previous === undefined ? undefined : toCredential(previous), row: toCredential(row) };
}

/** `AccessTables.revokeCredential`: the revocation, only of a credential not revoked yet. */
async function revokeCredential(
  trx: Kysely<Database>,
  clientId: string,
  at: string,
): Promise<CredentialRow | 'already-revoked' | undefined> {
  const exists = await trx
    .selectFrom('credentials')
    .select('client_id')
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  if (exists === undefined) return undefined;
  // On PostgreSQL a concurrent revocation makes this one wait for its commit, and then revoke
  // nothing: one of them is audited.
  const revoked = await trx
    .updateTable('credentials')
    .set({ revoked_at: at })
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  return revoked === undefined ? 'already-revoked' : toCredential(revoked);
}
