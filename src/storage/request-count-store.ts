import { type Kysely, sql } from 'kysely';
import type { RequestCountStore } from '../modules/auth/store.js';
import type { Database } from './schema.js';

/**
 * Rows per statement of one sync: three parameters each, far below the parameter limits of both
 * dialects.
 */
const REQUEST_COUNT_ROWS_PER_STATEMENT_MAX = 1_000;

/** The request limiter's counters over Kysely; the same statements on SQLite and PostgreSQL. */
export function createRequestCountStore(db: Kysely<Database>): RequestCountStore {
  return {
    async addRequestCounts(updates) {
      const totals = new Map<string, { windowStartedMs: number; requests: number }>();
      // Sorted, so two instances upserting the same keys lock their rows in one order and never
      // deadlock on PostgreSQL.
      const sorted = [...updates].sort((a, b) =>
        a.keyHash < b.keyHash ? -1 : a.keyHash > b.keyHash ? 1 : 0,
      );
      for (let start = 0; start < sorted.length; start += REQUEST_COUNT_ROWS_PER_STATEMENT_MAX) {
        const batch = sorted.slice(start, start + REQUEST_COUNT_ROWS_PER_STATEMENT_MAX);
        const same = sql<boolean>`request_counts.window_started_ms = excluded.window_started_ms`;
        const older = sql<boolean>`request_counts.window_started_ms < excluded.window_started_ms`;
        const rows = await db
          .insertInto('request_counts')
          .values(
            batch.map((update) => ({
              key_hash: update.keyHash,
              window_started_ms: update.windowStartedMs,
              requests: update.requests,
            })),
          )
          .onConflict((oc) =>
            oc.column('key_hash').doUpdateSet({
              requests: sql<number>`case when ${same} then request_counts.requests + excluded.requests when ${older} then excluded.requests else request_counts.requests end`,
              window_started_ms: sql<number>`case when ${older} then excluded.window_started_ms else request_counts.window_started_ms end`,
            }),
          )
          .returning(['key_hash', 'window_started_ms', 'requests'])
          .execute();
        for (const row of rows) {
          totals.set(row.key_hash, {
            windowStartedMs: Number(row.window_started_ms),
            requests: Number(row.requests),
          });
        }
      }
      return totals;
    },

    async purgeRequestCounts(beforeMs) {
      const result = await db
        .deleteFrom('request_counts')
        .where('window_started_ms', '<', beforeMs)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
