import { type Kysely, sql } from 'kysely';
import type { AuthStore, TokenGrantView, TokenRow } from '../modules/auth/store.js';
import { joinedOwner, toCredential, tokenValues, toToken } from './auth-rows.js';
import type { Database } from './schema.js';
import { byDialect, type Store, writeTogether } from './store.js';

/** A new token family's row. */
function familyRow(familyId: string, clientId: string, at: string) {
  return { family_id: familyId, client_id: clientId, created_at: at, revoked_at: null };
}

/**
 * The tokens of the auth module's port (`createAuthStore`) as they are issued, read and rotated;
 * their revocation and purge are `createTokenRevocations`.
 */
export function createTokenStore(
  store: Store,
): Pick<AuthStore, 'insertFamily' | 'findToken' | 'findGrant' | 'rotateRefreshToken'> {
  const { db, adapter } = store;
  return {
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

    findGrant: (tokenHash) => findGrant(db, tokenHash),

    rotateRefreshToken: byDialect(adapter.dialect, {
      postgres: (tokenHash: string, at: string, answerSealed: string | null, tokens: readonly TokenRow[]) =>
        tokens.length === 0
          ? rotateTogether(store, tokenHash, at, answerSealed, tokens)
          : rotateInOneStatement(db, tokenHash, at, answerSealed, tokens),
      sqlite: (tokenHash: string, at: string, answerSealed: string | null, tokens: readonly TokenRow[]) =>
        rotateTogether(store, tokenHash, at, answerSealed, tokens),
    }),
  };
}

/** `AuthStore.findGrant`: the token with its family, credential and owner, in one read. */
async function findGrant(db: Kysely<Database>, tokenHash: string): Promise<TokenGrantView | undefined> {
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
}

/**
 * PostgreSQL: one statement (one round trip); the new tokens are inserted only when the update
 * spent the token. A concurrent rotation of the same token waits for the row lock, then finds
 * `used_at` set, spends nothing and inserts nothing.
 */
async function rotateInOneStatement(
  db: Kysely<Database>,
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
  store: Store,
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

/** The end of tokens in the auth module's port (`createAuthStore`): revoked, forgotten, purged. */
export function createTokenRevocations(
  store: Store,
): Pick<AuthStore, 'forgetSealedAnswers' | 'revokeFamily' | 'revokeToken' | 'purgeExpiredTokens'> {
  const { db } = store;
  return {
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
