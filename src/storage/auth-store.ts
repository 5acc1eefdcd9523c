import { sql, type Updateable } from 'kysely';
import type { AuthStore, TokenRow } from '../modules/auth/store.js';
import { appendAudit } from './audit-trail.js';
import { createAuthFailureStore } from './auth-failure-store.js';
import {
  credentialSummary,
  joinedOwner,
  toCredential,
  tokenValues,
  toToken,
  toUser,
  userSummary,
} from './auth-rows.js';
import { countRows } from './count.js';
import { byDialect, type Store, writeTogether } from './store.js';
import type { UsersTable } from './tables/access.js';

/**
 * The auth module's port over Kysely; the same statements on SQLite and PostgreSQL, except the
 * row locks that only PostgreSQL needs.
 */
/** A new token family's row. */
function familyRow(familyId: string, clientId: string, at: string) {
  return { family_id: familyId, client_id: clientId, created_at: at, revoked_at: null };
}

export function createAuthStore(store: Store): AuthStore {
  const { db, adapter } = store;
  /**
   * PostgreSQL: one statement (one round trip); the new tokens are inserted only when the update
   * spent the token. A concurrent rotation of the same token waits for the row lock, then finds
   * `used_at` set, spends nothing and inserts nothing.
   */
  async function rotateInOneStatement(
    tokenHash: string,
    at: string,
    answerSealed: string | null,
    tokens: readonly TokenRow[],
  ): Promise<boolean> {
    const rows = tokens.map(tokenValues);
    const columns = Object.keys(rows[0] ?? {}) as (keyof ReturnType<typeof tokenValues>)[];
    const names = sql.join(columns.map((column) => sql.ref(column)));
    const values = sql.join(rows.map((row) => sql`(${sql.join(columns.map((column) => row[column]))})`));
    const result = await sql`
      with spent as (
        update oauth_tokens set used_at = ${at}, answer_sealed = ${answerSealed}
        where token_hash = ${tokenHash} and used_at is null
        returning token_hash
      )
      insert into oauth_tokens (${names})
      select * from (values ${values}) as issued (${names})
      where exists (select 1 from spent)`.execute(db);
    return Number(result.numAffectedRows ?? 0) > 0;
  }

  /**
   * The token spent, then the new tokens, in one transaction (on SQLite in the next group of
   * writes): writes take turns there, so a later rotation of the same token finds `used_at` set
   * and updates nothing.
   */
  function rotateTogether(
    tokenHash: string,
    at: string,
    answerSealed: string | null,
    tokens: readonly TokenRow[],
  ): Promise<boolean> {
    return writeTogether(store, tokens.length, async (trx) => {
      const spent = await trx
        .updateTable('oauth_tokens')
        .set({ used_at: at, answer_sealed: answerSealed })
        .where('token_hash', '=', tokenHash)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      if (Number(spent.numUpdatedRows) !== 1) return false;
      await trx.insertInto('oauth_tokens').values(tokens.map(tokenValues)).execute();
      return true;
    });
  }

  return {
    ...createAuthFailureStore(store),
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

    async insertUser(user, actor) {
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
        await appendAudit(trx, store.adapter, {
          at: user.createdAt,
          action: 'users.create',
          actor,
          before: null,
          after: userSummary(user),
        });
        return true;
      });
    },

    async updateUser(email, change, keepEnabledHolderOf, { actor, at }) {
      return db.transaction().execute(async (trx) => {
        const takesRoleAway = (role: string) =>
          change.disabled === true || (change.roles !== undefined && !change.roles.includes(role));
        if (keepEnabledHolderOf !== undefined && takesRoleAway(keepEnabledHolderOf)) {
          // The enabled holders of the role, locked in one order on PostgreSQL, so concurrent
          // changes queue here and each sees who still holds the role; SQLite runs one write
          // transaction at a time.
          const holdersQuery = trx
            .selectFrom('users')
            .select('email')
            .where('disabled', '=', 0)
            .where('roles', 'like', `%${JSON.stringify(keepEnabledHolderOf)}%`)
            .orderBy('email');
          const holders = await adapter.forUpdate(holdersQuery).execute();
          if (holders.length === 1 && holders[0]?.email === email) return 'last-holder';
        }
        // The user as it was, for the audit entry; on PostgreSQL locked, so the picture is the
        // one this change replaces; after the holders, so every change takes its row locks in
        // the holders' order and none deadlocks.
        const currentQuery = trx.selectFrom('users').selectAll().where('email', '=', email);
        const current = await adapter.forUpdate(currentQuery).executeTakeFirst();
        if (current === undefined) return undefined;
        const values: Updateable<UsersTable> = {};
        if (change.roles !== undefined) values.roles = JSON.stringify(change.roles);
        if (change.disabled !== undefined) values.disabled = change.disabled ? 1 : 0;
        if (change.displayName !== undefined) values.display_name = change.displayName;
        if (Object.keys(values).length > 0) {
          await trx.updateTable('users').set(values).where('email', '=', email).execute();
        }
        const row = await trx.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
        if (row === undefined) return undefined;
        const before = userSummary(toUser(current));
        const after = userSummary(toUser(row));
        if (JSON.stringify(before) !== JSON.stringify(after)) {
          await appendAudit(trx, store.adapter, { at, action: 'users.update', actor, before, after });
        }
        return toUser(row);
      });
    },

    async setPassword(email, passwordHash, { actor, at, generated }) {
      return db.transaction().execute(async (trx) => {
        const result = await trx
          .updateTable('users')
          .set({ password_hash: passwordHash })
          .where('email', '=', email)
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) return false;
        const ended = await trx
          .deleteFrom('admin_sign_ins')
          .where('user_email', '=', email)
          .executeTakeFirst();
        await appendAudit(trx, store.adapter, {
          at,
          action: 'users.set-password',
          actor,
          details: { email, generated, signInsEnded: Number(ended.numDeletedRows) },
        });
        return true;
      });
    },

    async countUsers() {
      const total = await countRows(db.selectFrom('users'));
      return Number(total);
    },

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

    async upsertCredential(credential, actor) {
      const values = {
        client_id: credential.clientId,
        secret_hash: credential.secretHash,
        owner_email: credential.ownerEmail,
        name: credential.name,
        created_at: credential.createdAt,
        expires_at: credential.expiresAt,
        revoked_at: credential.revokedAt,
      };
      await db.transaction().execute(async (trx) => {
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
        await appendAudit(trx, store.adapter, {
          at: credential.createdAt,
          action: 'credentials.create',
          actor,
          before: previous === undefined ? null : credentialSummary(toCredential(previous)),
          after: credentialSummary(toCredential(row)),
        });
      });
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

    async revokeCredential(clientId, at, actor) {
      return db.transaction().execute(async (trx) => {
        const exists = await trx
          .selectFrom('credentials')
          .select('client_id')
          .where('client_id', '=', clientId)
          .executeTakeFirst();
        if (exists === undefined) return false;
        const revoked = await trx
          .updateTable('credentials')
          .set({ revoked_at: at })
          .where('client_id', '=', clientId)
          .where('revoked_at', 'is', null)
          .returningAll()
          .executeTakeFirst();
        if (revoked !== undefined) {
          const after = toCredential(revoked);
          await appendAudit(trx, store.adapter, {
            at,
            action: 'credentials.revoke',
            actor,
            before: credentialSummary({ ...after, revokedAt: null }),
            after: credentialSummary(after),
          });
        }
        return true;
      });
    },

    async markCredentialUsed(clientId, at) {
      await db
        .updateTable('credentials')
        .set({ last_used_at: at })
        .where('client_id', '=', clientId)
        .execute();
    },

    insertFamily: byDialect(adapter.dialect, {
      // One statement, so one round trip: under many clients every round trip waits for a
      // pooled connection. The tokens' reference to their family is checked at its end.
      postgres: async (familyId: string, clientId: string, at: string, tokens: readonly TokenRow[]) => {
        await db
          .with('family', (qc) => qc.insertInto('token_families').values(familyRow(familyId, clientId, at)))
          .insertInto('oauth_tokens')
          .values(tokens.map(tokenValues))
          .execute();
      },
      // In the next group of writes of the connection, which share one commit.
      sqlite: (familyId: string, clientId: string, at: string, tokens: readonly TokenRow[]) =>
        writeTogether(store, tokens.length, async (trx) => {
          await trx
            .insertInto('token_families')
            .values(familyRow(familyId, clientId, at))
            .execute();
          await trx.insertInto('oauth_tokens').values(tokens.map(tokenValues)).execute();
        }),
    }),

    async findToken(tokenHash) {
      const row = await db
        .selectFrom('oauth_tokens as t')
        .innerJoin('token_families as f', 'f.family_id', 't.family_id')
        .selectAll('t')
        .select('f.revoked_at as family_revoked_at')
        .where('t.token_hash', '=', tokenHash)
        .executeTakeFirst();
      if (row === undefined) return undefined;
      return { ...toToken(row), familyRevokedAt: row.family_revoked_at, answerSealed: row.answer_sealed };
    },

    async findGrant(tokenHash) {
      const row = await db
        .selectFrom('oauth_tokens as t')
        .innerJoin('token_families as f', 'f.family_id', 't.family_id')
        .innerJoin('credentials as c', 'c.client_id', 't.client_id')
        .innerJoin('users as u', 'u.email', 'c.owner_email')
        .selectAll('t')
        .select([
          'f.revoked_at as family_revoked_at',
          'c.secret_hash',
          'c.owner_email',
          'c.name',
          'c.created_at as credential_created_at',
          'c.expires_at as credential_expires_at',
          'c.revoked_at as credential_revoked_at',
          'u.email',
          'u.display_name',
          'u.roles',
          'u.disabled',
          'u.created_at as user_created_at',
        ])
        .where('t.token_hash', '=', tokenHash)
        .executeTakeFirst();
      if (row === undefined) return undefined;
      return {
        token: toToken(row),
        familyRevokedAt: row.family_revoked_at,
        credential: toCredential({
          client_id: row.client_id,
          secret_hash: row.secret_hash,
          owner_email: row.owner_email,
          name: row.name,
          created_at: row.credential_created_at,
          expires_at: row.credential_expires_at,
          revoked_at: row.credential_revoked_at,
          last_used_at: null,
        }),
        owner: joinedOwner(row),
      };
    },

    rotateRefreshToken: byDialect(adapter.dialect, {
      postgres: (tokenHash: string, at: string, answerSealed: string | null, tokens: readonly TokenRow[]) =>
        tokens.length === 0
          ? rotateTogether(tokenHash, at, answerSealed, tokens)
          : rotateInOneStatement(tokenHash, at, answerSealed, tokens),
      sqlite: rotateTogether,
    }),

    async forgetSealedAnswers(usedBefore) {
      const result = await db
        .updateTable('oauth_tokens')
        .set({ answer_sealed: null })
        .where('answer_sealed', 'is not', null)
        .where('used_at', '<', usedBefore)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async revokeFamily(familyId, at) {
      await db.transaction().execute(async (trx) => {
        await trx
          .updateTable('token_families')
          .set({ revoked_at: at })
          .where('family_id', '=', familyId)
          .execute();
        await trx
          .updateTable('oauth_tokens')
          .set({ revoked_at: at })
          .where('family_id', '=', familyId)
          .where('revoked_at', 'is', null)
          .execute();
      });
    },

    async revokeToken(tokenHash, at) {
      await db
        .updateTable('oauth_tokens')
        .set({ revoked_at: at })
        .where('token_hash', '=', tokenHash)
        .execute();
    },

    async purgeExpiredTokens(before) {
      const result = await db.deleteFrom('oauth_tokens').where('expires_at', '<', before).executeTakeFirst();
      await db
        .deleteFrom('token_families')
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('oauth_tokens')
                .select('token_hash')
                .whereRef('oauth_tokens.family_id', '=', 'token_families.family_id'),
            ),
          ),
        )
        .execute();
      return Number(result.numDeletedRows);
    },
  };
}
