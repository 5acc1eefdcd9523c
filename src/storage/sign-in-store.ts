import { type Kysely, type Selectable, sql } from 'kysely';
import {
  type OneTimeViewRow,
  SIGN_IN_FAILURES_ACTOR,
  type SignInRow,
  type SignInStore,
} from '../modules/auth/store.js';
import { appendAudit } from './audit-trail.js';
import type { Database } from './schema.js';
import type { DialectAdapter, Store } from './store.js';
import type { AdminSignInsTable } from './tables/access.js';

function toSignIn(row: Selectable<AdminSignInsTable>): SignInRow {
  return {
    sessionHash: row.sign_in_hash,
    userEmail: row.user_email,
    createdAt: row.created_at,
    lastSeenAt: row.last_seen_at,
    expiresAt: row.expires_at,
    endsAt: row.ends_at,
  };
}

/**
 * Sign-ins of the administration interface and their one-time views over Kysely; the
 * same statements on both dialects (`DELETE … RETURNING` included).
 */
export function createSignInStore(store: Store): SignInStore {
  return {
    ...createSignIns(store),
    ...createSignInFailures(store),
    ...createOneTimeViews(store),
  };
}

/** The sign-ins themselves: made with their audit entry, found with their user, kept alive, ended. */
function createSignIns(
  store: Store,
): Pick<SignInStore, 'insert' | 'find' | 'touch' | 'delete' | 'purgeExpired'> {
  const { db, adapter } = store;
  return {
    insert: (signIn, address) => insertSignIn(db, adapter, signIn, address),

    async find(signInHash, now) {
      const row = await db
        .selectFrom('admin_sign_ins as s')
        .innerJoin('users as u', 'u.email', 's.user_email')
        .selectAll('s')
        .select(['u.display_name', 'u.roles', 'u.disabled', 'u.created_at as user_created_at'])
        .where('s.sign_in_hash', '=', signInHash)
        .where('s.expires_at', '>', now)
        .executeTakeFirst();
      if (row === undefined) return undefined;
      return {
        session: toSignIn(row),
        user: {
          email: row.user_email,
          displayName: row.display_name,
          passwordHash: null,
          roles: JSON.parse(row.roles) as string[],
          disabled: Number(row.disabled) === 1,
          createdAt: row.user_created_at,
        },
      };
    },

    async touch(signInHash, lastSeenAt, expiresAt) {
      await db
        .updateTable('admin_sign_ins')
        .set({ last_seen_at: lastSeenAt, expires_at: expiresAt })
        .where('sign_in_hash', '=', signInHash)
        .execute();
    },

    async delete(signInHash) {
      await db.deleteFrom('admin_sign_ins').where('sign_in_hash', '=', signInHash).execute();
    },

    async purgeExpired(before) {
      const result = await db
        .deleteFrom('admin_sign_ins')
        .where('expires_at', '<', before)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

/** `SignInStore.insert`: the sign-in and its audit entry in one transaction. */
async function insertSignIn(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  signIn: SignInRow,
  address: string | null,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('admin_sign_ins')
      .values({
        sign_in_hash: signIn.sessionHash,
        user_email: signIn.userEmail,
        created_at: signIn.createdAt,
        last_seen_at: signIn.lastSeenAt,
        expires_at: signIn.expiresAt,
        ends_at: signIn.endsAt,
      })
      .execute();
    await appendAudit(trx, adapter, {
      at: signIn.createdAt,
      action: 'auth.sign-in',
      actor: { user: signIn.userEmail },
      details: { address, endsAt: signIn.endsAt },
    });
  });
}

/** The tallies of failed sign-ins, counted per window and flushed to the audit trail once it ends. */
function createSignInFailures(store: Store): Pick<SignInStore, 'countFailure' | 'flushFailures'> {
  const { db, adapter } = store;
  return {
    async countFailure(subject, windowStartedAt) {
      await db
        .insertInto('sign_in_failure_tallies')
        .values({ subject, window_started_at: windowStartedAt, failures: 1 })
        .onConflict((oc) =>
          oc.columns(['subject', 'window_started_at']).doUpdateSet({
            failures: sql<number>`sign_in_failure_tallies.failures + 1`,
          }),
        )
        .execute();
    },

    async flushFailures(windowsStartedBy, windowMs, at) {
      return db.transaction().execute(async (trx) => {
        // Deleting first takes the rows: an instance flushing at the same time finds them gone.
        const ended = await trx
          .deleteFrom('sign_in_failure_tallies')
          .where('window_started_at', '<=', windowsStartedBy)
          .returningAll()
          .execute();
        ended.sort((a, b) =>
          a.window_started_at === b.window_started_at
            ? a.subject.localeCompare(b.subject)
            : a.window_started_at.localeCompare(b.window_started_at),
        );
        for (const tally of ended) {
          await appendAudit(trx, adapter, {
            at,
            action: 'auth.sign-in-failures',
            actor: SIGN_IN_FAILURES_ACTOR,
            details: {
              email: tally.subject,
              windowStartedAt: tally.window_started_at,
              windowEndedAt: new Date(Date.parse(tally.window_started_at) + windowMs).toISOString(),
              failures: Number(tally.failures),
            },
          });
        }
        return ended.length;
      });
    },
  };
}

/** The one-time views of a sign-in: put, taken once, purged when expired. */
function createOneTimeViews(
  store: Store,
): Pick<SignInStore, 'putOneTimeView' | 'takeOneTimeView' | 'purgeOneTimeViews'> {
  const { db } = store;
  return {
    putOneTimeView: (view, perSessionMax) => putOneTimeView(db, view, perSessionMax),

    async takeOneTimeView(signInHash, key) {
      const row = await db
        .deleteFrom('admin_one_time_views')
        .where('sign_in_hash', '=', signInHash)
        .where('view_key', '=', key)
        .returning(['sealed', 'expires_at'])
        .executeTakeFirst();
      return row === undefined
        ? undefined
        : { sessionHash: signInHash, key, sealed: row.sealed, expiresAt: row.expires_at };
    },

    async purgeOneTimeViews(before) {
      const result = await db
        .deleteFrom('admin_one_time_views')
        .where('expires_at', '<', before)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

/** `SignInStore.putOneTimeView` in one transaction: the view replaced, then the sign-in's oldest beyond `perSessionMax` dropped. */
async function putOneTimeView(
  db: Kysely<Database>,
  view: OneTimeViewRow,
  perSessionMax: number,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .deleteFrom('admin_one_time_views')
      .where('sign_in_hash', '=', view.sessionHash)
      .where('view_key', '=', view.key)
      .execute();
    // Inserted from the sign-in's row, so a sign-in signed out meanwhile gets nothing
    // rather than a foreign-key error.
    await trx
      .insertInto('admin_one_time_views')
      .columns(['sign_in_hash', 'view_key', 'sealed', 'expires_at'])
      .expression(
        trx
          .selectFrom('admin_sign_ins')
          .select([
            'sign_in_hash',
            sql<string>`${view.key}`.as('view_key'),
            sql<string>`${view.sealed}`.as('sealed'),
            sql<string>`${view.expiresAt}`.as('expires_at'),
          ])
          .where('sign_in_hash', '=', view.sessionHash),
      )
      .execute();
    await trx
      .deleteFrom('admin_one_time_views')
      .where('sign_in_hash', '=', view.sessionHash)
      .where(
        'id',
        'not in',
        trx
          .selectFrom('admin_one_time_views')
          .select('id')
          .where('sign_in_hash', '=', view.sessionHash)
          .orderBy('id', 'desc')
          .limit(perSessionMax),
      )
      .execute();
  });
}
