/**
 * The schedule of reprocessing runs: when the next run is due, and the change of its settings as
 * the change runner runs it (`modules/changes/`), with its audit entry (the settings, and the
 * schedule pictured before and after).
 */
import { AppError } from '../../lib/errors.js';
import type { Change } from '../changes/runner.js';
import type { ReprocessSchedule, ReprocessScheduleTables } from './store.js';

/** The shortest interval between scheduled runs. */
export const REPROCESS_INTERVAL_MINUTES_MIN = 180;
/** The longest interval between scheduled runs (30 days). */
export const REPROCESS_INTERVAL_MINUTES_MAX = 43_200;

/** The settings a caller may change. */
export type ReprocessScheduleSettings = Pick<
  ReprocessSchedule,
  'mode' | 'dailyAt' | 'intervalMinutes' | 'maxAttempts'
>;

/** The tables a change of the schedule touches. */
export interface ReprocessScheduleChangeTables {
  reprocessSchedule: ReprocessScheduleTables;
}

/** `HH:MM` of `dailyAt` as minutes of the day. */
function minutesOfDay(dailyAt: string): number {
  const [h, m] = dailyAt.split(':').map(Number);
  return (h ?? 0) * 60 + (m ?? 0);
}

/**
 * When the next scheduled run is due after `now`: the next `dailyAt` (UTC) strictly after it, or
 * `intervalMinutes` after it; null when disabled.
 */
export function nextDueAfter(
  schedule: Pick<ReprocessSchedule, 'mode' | 'dailyAt' | 'intervalMinutes'>,
  now: Date,
): string | null {
  if (schedule.mode === 'disabled') return null;
  if (schedule.mode === 'interval')
    return new Date(now.getTime() + schedule.intervalMinutes * 60_000).toISOString();
  const day = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  let due = day + minutesOfDay(schedule.dailyAt) * 60_000;
  if (due <= now.getTime()) due += 86_400_000;
  return new Date(due).toISOString();
}

/** The schedule's settings as the audit trail pictures them before and after a change. */
function summaryOf(schedule: ReprocessSchedule): Record<string, unknown> {
  const { mode, dailyAt, intervalMinutes, maxAttempts } = schedule;
  return { mode, dailyAt, intervalMinutes, maxAttempts };
}

/**
 * Changes the schedule; the next run is due by the new settings from the change's moment.
 * Refuses an interval under REPROCESS_INTERVAL_MINUTES_MIN (`validation-failed`).
 */
export const scheduleChange: Change<
  ReprocessScheduleSettings,
  ReprocessSchedule,
  ReprocessScheduleChangeTables
> = {
  action: 'processing.reprocess-schedule',
  async apply(tx, settings, { at, actor }) {
    if (settings.mode === 'interval' && settings.intervalMinutes < REPROCESS_INTERVAL_MINUTES_MIN)
      throw new AppError(
        'validation-failed',
        `intervalMinutes must be at least ${REPROCESS_INTERVAL_MINUTES_MIN}`,
        {
          errors: [{ path: '/intervalMinutes', message: `must be >= ${REPROCESS_INTERVAL_MINUTES_MIN}` }],
        },
      );
    const saved = { ...settings, nextDueAt: nextDueAfter(settings, new Date(at)) };
    const { before, after } = await tx.reprocessSchedule.saveSchedule(saved, at, actor.user);
    return {
      answer: after,
      audit: {
        details: saved,
        before: before === undefined ? null : summaryOf(before),
        after: summaryOf(after),
      },
    };
  },
};
