/**
 * The schedule of reprocessing runs, part of the reprocessing port (`reprocess-store.ts`): one
 * row, its settings changed through the change runner (`reprocessScheduleTablesIn`), its next due
 * instant moved only while it is still the one expected (one instance wins a scheduled run).
 */
import type { Kysely, Selectable } from 'kysely';
import type {
  ReprocessSchedule,
  ReprocessScheduleTables,
  ReprocessStore,
} from '../../modules/accounting/store.js';
import type { Database } from '../schema.js';
import type { DialectAdapter, Store } from '../store.js';
import type { ReprocessScheduleTable } from '../tables/accounting.js';

/** The single row that holds the schedule. */
export const SCHEDULE_ROW_ID = 1;

function scheduleOf(row: Selectable<ReprocessScheduleTable>): ReprocessSchedule {
  return {
    mode: row.mode,
    dailyAt: row.daily_at,
    intervalMinutes: Number(row.interval_minutes),
    maxAttempts: Number(row.max_attempts),
    nextDueAt: row.next_due_at,
    updatedAt: row.updated_at,
    updatedBy: row.updated_by,
  };
}

/** The schedule's part of the reprocessing port over `store`. */
export function createScheduleStore(store: Store): Pick<ReprocessStore, 'schedule' | 'moveNextDue'> {
  const { db } = store;
  return {
    async schedule() {
      return scheduleOf(
        await db
          .selectFrom('reprocess_schedule')
          .selectAll()
          .where('id', '=', SCHEDULE_ROW_ID)
          .executeTakeFirstOrThrow(),
      );
    },

    async moveNextDue(expected, next) {
      const result = await db
        .updateTable('reprocess_schedule')
        .set({ next_due_at: next })
        .where('id', '=', SCHEDULE_ROW_ID)
        .where((eb) => (expected === null ? eb('next_due_at', 'is', null) : eb('next_due_at', '=', expected)))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
  };
}

/** The schedule's tables in the change runner's transaction `trx`. */
export function reprocessScheduleTablesIn(
  trx: Kysely<Database>,
  adapter: DialectAdapter,
): ReprocessScheduleTables {
  return {
    async saveSchedule(settings, at, user) {
      // The settings before the change: locked on PostgreSQL so that a concurrent change is seen
      // as it was committed.
      const current = trx.selectFrom('reprocess_schedule').selectAll().where('id', '=', SCHEDULE_ROW_ID);
      const before = await adapter.forUpdate(current).executeTakeFirst();
      const row = await trx
        .updateTable('reprocess_schedule')
        .set({
          mode: settings.mode,
          daily_at: settings.dailyAt,
          interval_minutes: settings.intervalMinutes,
          max_attempts: settings.maxAttempts,
          next_due_at: settings.nextDueAt,
          updated_at: at,
          updated_by: user,
        })
        .where('id', '=', SCHEDULE_ROW_ID)
        .returningAll()
        .executeTakeFirstOrThrow();
      return { before: before === undefined ? undefined : scheduleOf(before), after: scheduleOf(row) };
    },
  };
}
