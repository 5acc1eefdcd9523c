import { sql } from 'kysely';
import type { AuthStore } from '../modules/auth/store.js';
import type { Store } from './store.js';

/**
 * The counters of failed authentications (`auth_failures`, one row per key and one-minute
 * window), part of the auth module's port: one statement each, so every instance on one
 * PostgreSQL sees the same counts.
 */
export function createAuthFailureStore(
  store: Store,
): Pick<
  AuthStore,
  'countAuthFailure' | 'readAuthFailures' | 'uncountAuthFailure' | 'clearAuthFailures' | 'purgeAuthFailures'
> {
  const { db } = store;
  return {
    async countAuthFailure(keyHash, nowMs, windowMs) {
      const expired = sql<boolean>`auth_failures.window_started_ms <= ${nowMs - windowMs}`;
      const row = await db
        .insertInto('auth_failures')
        .values({ key_hash: keyHash, window_started_ms: nowMs, failures: 1 })
        .onConflict((oc) =>
          oc.column('key_hash').doUpdateSet({
            failures: sql<number>`case when ${expired} then 1 else auth_failures.failures + 1 end`,
            window_started_ms: sql<number>`case when ${expired} then excluded.window_started_ms else auth_failures.window_started_ms end`,
          }),
        )
        .returning(['failures', 'window_started_ms'])
        .executeTakeFirstOrThrow();
      return { failures: Number(row.failures), windowStartedMs: Number(row.window_started_ms) };
    },

    async readAuthFailures(keyHash, nowMs, windowMs) {
      const row = await db
        .selectFrom('auth_failures')
        .select('failures')
        .where('key_hash', '=', keyHash)
        .where('window_started_ms', '>', nowMs - windowMs)
        .executeTakeFirst();
      return row === undefined ? 0 : Number(row.failures);
    },

    async uncountAuthFailure(keyHash) {
      await db
        .updateTable('auth_failures')
        .set({ failures: sql<number>`failures - 1` })
        .where('key_hash', '=', keyHash)
        .where('failures', '>', 0)
        .execute();
    },

    async clearAuthFailures(keyHash) {
      await db.deleteFrom('auth_failures').where('key_hash', '=', keyHash).execute();
    },

    async purgeAuthFailures(beforeMs) {
      const result = await db
        .deleteFrom('auth_failures')
        .where('window_started_ms', '<', beforeMs)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
