import type { Kysely } from 'kysely';
import type { AuditActor } from '../modules/audit/store.js';
import type { AuthStore, CredentialRow } from '../modules/auth/store.js';
import { appendAudit } from './audit-trail.js';
import { credentialSummary, joinedOwner, toCredential } from './auth-rows.js';
import { countRows } from './count.js';
import type { Database } from './schema.js';
import type { DialectAdapter, Store } from './store.js';

/**
 * The credentials of the auth module's port (`createAuthStore`): the reads here, the creation and
 * the revocation each one transaction with its audit entry.
 */
export function createCredentialStore(
  store: Store,
): Pick<
  AuthStore,
  | 'findCredential'
  | 'findCredentialWithOwner'
  | 'upsertCredential'
  | 'listCredentials'
  | 'revokeCredential'
  | 'markCredentialUsed'
> {
  const { db, adapter } = store;
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

    upsertCredential: (credential, actor) => upsertCredential(db, adapter, credential, actor),

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

    revokeCredential: (clientId, at, actor) => revokeCredential(db, adapter, clientId, at, actor),

    async markCredentialUsed(clientId, at) {
      await db
        .updateTable('credentials')
        .set({ last_used_at: at })
        .where('client_id', '=', clientId)
        .execute();
    },
  };
}

/** `AuthStore.upsertCredential`: the credential as it was, the upsert and the audit entry, in one transaction. */
async function upsertCredential(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  credential: CredentialRow,
  actor: AuditActor,
): Promise<void> {
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
    await appendAudit(trx, adapter, {
      at: credential.createdAt,
      action: 'credentials.create',
      actor,
      before: previous === undefined ? null : credentialSummary(toCredential(previous)),
      after: credentialSummary(toCredential(row)),
    });
  });
}

/** `AuthStore.revokeCredential`: the revocation and, when it revoked something, its audit entry, in one transaction. */
async function revokeCredential(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  clientId: string,
  at: string,
  actor: AuditActor,
): Promise<boolean> {
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
      await appendAudit(trx, adapter, {
        at,
        action: 'credentials.revoke',
        actor,
        before: credentialSummary({ ...after, revokedAt: null }),
        after: credentialSummary(after),
      });
    }
    return true;
  });
}
