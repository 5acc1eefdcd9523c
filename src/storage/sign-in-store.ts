import { type Kysely, type Selectable, sql } from 'kysely';
import type { SignInRow, SignInStore } from '../modules/auth/store.js';
import type { AdminSessionsTable, Database } from './schema.js';

function toSession(row: Selectable<AdminSessionsTable>): SignInRow {
  return {
    sessionHash: row.session_hash,
    userEmail: row.user_email,
    createdAt: row.created_at,
    lastSeenAt: row.last_seen_at,
    expiresAt: row.expires_at,
    endsAt: row.ends_at,
  };
}

/**
 * Sign-in sessions of the administration interface and their one-time views over Kysely; the
 * same statements on both dialects (`DELETE … RETURNING` included).
 */
export function createSignInStore(db: Kysely<Database>): SignInStore {
  return {
    async insert(session) {
      await db
        .insertInto('admin_sessions')
        .values({
          session_hash: session.sessionHash,
          user_email: session.userEmail,
          created_at: session.createdAt,
          last_seen_at: session.lastSeenAt,
          expires_at: session.expiresAt,
          ends_at: session.endsAt,
        })
        .execute();
    },

    async find(sessionHash, now) {
      const row = await db
        .selectFrom('admin_sessions as s')
        .innerJoin('users as u', 'u.email', 's.user_email')
        .selectAll('s')
        .select(['u.display_name', 'u.roles', 'u.disabled', 'u.created_at as user_created_at'])
        .where('s.session_hash', '=', sessionHash)
        .where('s.expires_at', '>', now)
        .executeTakeFirst();
      if (row === undefined) return undefined;
      return {
        session: toSession(row),
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

    async touch(sessionHash, lastSeenAt, expiresAt) {
      await db
        .updateTable('admin_sessions')
        .set({ last_seen_at: lastSeenAt, expires_at: expiresAt })
        .where('session_hash', '=', sessionHash)
        .execute();
    },

    async delete(sessionHash) {
      await db.deleteFrom('admin_sessions').where('session_hash', '=', sessionHash).execute();
    },

    async purgeExpired(before) {
      const result = await db
        .deleteFrom('admin_sessions')
        .where('expires_at', '<', before)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async putOneTimeView(view, perSessionMax) {
      await db.transaction().execute(async (trx) => {
        await trx
          .deleteFrom('admin_one_time_views')
          .where('session_hash', '=', view.sessionHash)
          .where('view_key', '=', view.key)
          .execute();
        // Inserted from the session's row, so a session signed out meanwhile gets nothing
        // rather than a foreign-key error.
        await trx
          .insertInto('admin_one_time_views')
          .columns(['session_hash', 'view_key', 'sealed', 'expires_at'])
          .expression(
            trx
              .selectFrom('admin_sessions')
              .select([
                'session_hash',
                sql<string>`${view.key}`.as('view_key'),
                sql<string>`${view.sealed}`.as('sealed'),
                sql<string>`${view.expiresAt}`.as('expires_at'),
              ])
              .where('session_hash', '=', view.sessionHash),
          )
          .execute();
        await trx
          .deleteFrom('admin_one_time_views')
          .where('session_hash', '=', view.sessionHash)
          .where(
            'id',
            'not in',
            trx
              .selectFrom('admin_one_time_views')
              .select('id')
              .where('session_hash', '=', view.sessionHash)
              .orderBy('id', 'desc')
              .limit(perSessionMax),
          )
          .execute();
      });
    },

    async takeOneTimeView(sessionHash, key) {
      const row = await db
        .deleteFrom('admin_one_time_views')
        .where('session_hash', '=', sessionHash)
        .where('view_key', '=', key)
        .returning(['sealed', 'expires_at'])
        .executeTakeFirst();
      return row === undefined
        ? undefined
        : { sessionHash, key, sealed: row.sealed, expiresAt: row.expires_at };
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
