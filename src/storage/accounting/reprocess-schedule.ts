/**
 * The schedule of reprocessing runs, part of the reprocessing port (`reprocess-store.ts`): one
 * row, its settings changed with their audit entry, its next due instant moved only while it is
 * still the one expected (one instance wins a scheduled run).
 */
import type { Selectable } from 'kysely';
import type { ReprocessSchedule, ReprocessStore } from '../../modules/accounting/store.js';
import { appendAudit } from '../audit-trail.js';
import { storedRevision } from '../configuration-store.js';
import type { Store } from '../store.js';
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

/** The schedule's settings as the audit trail pictures them before and after a change. */
function scheduleSummaryOf(row: Selectable<ReprocessScheduleTable>): Record<string, unknown> {
  return {
    mode: row.mode,
    dailyAt: row.daily_at,
    intervalMinutes: Number(row.interval_minutes),
    maxAttempts: Number(row.max_attempts),
  };
}

/** The schedule's part of the reprocessing port over `store`. */
export function createScheduleStore(
  store: Store,
): Pick<ReprocessStore, 'schedule' | 'saveSchedule' | 'moveNextDue'> {
  const { db, adapter } = store;
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

    saveSchedule(settings, at, actor) {
      return db.transaction().execute(async (trx) => {
        // The settings before the change, for the audit entry: locked on PostgreSQL so that a
        // concurrent change is seen as it was committed.
        const current = trx.selectFrom('reprocess_schedule').selectAll().where('id', '=', SCHEDULE_ROW_ID);
        const previous = await adapter.forUpdate(current).executeTakeFirst();
        const row = await trx
          .updateTable('reprocess_schedule')
          .set({
            mode: settings.mode,
            daily_at: settings.dailyAt,
            interval_minutes: settings.intervalMinutes,
            max_attempts: settings.maxAttempts,
            next_due_at: settings.nextDueAt,
            updated_at: at,
            updated_by: actor.user,
          })
          .where('id', '=', SCHEDULE_ROW_ID)
          .returningAll()
          .executeTakeFirstOrThrow();
        const revision = await storedRevision(trx);
        await appendAudit(trx, adapter, {
          at,
          action: 'processing.reprocess-schedule',
          actor,
          before: previous === undefined ? null : scheduleSummaryOf(previous),
          after: scheduleSummaryOf(row),
          configuration: { version: null, revision, sections: {}, deleted: null },
          details: { ...settings },
        });
        return scheduleOf(row);
      });
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
