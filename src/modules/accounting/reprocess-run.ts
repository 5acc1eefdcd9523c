/**
 * A reprocessing run as the change runner (`modules/changes/runner.ts`) starts it, by hand or by
 * the schedule: the run recorded and the records of the selected open errors put back into the
 * processing queue in the runner's transaction, with its audit entry (the run before and after,
 * the configuration revision it was queued under); the processor is woken once it is committed.
 * A run's dry run is not the runner's: it runs the engine over the same records
 * (`dryRunFailedRecords`, `reprocessing.ts`).
 */
import type { Change } from '../changes/runner.js';
import type { ReprocessRun, ReprocessRunInput, ReprocessRunTables } from './store.js';

/** The tables a run writes. */
export interface ReprocessRunChangeTables {
  reprocessRuns: ReprocessRunTables;
}

/** What a run is started with; who starts it and when are the runner's. */
export type ReprocessRunRequest = Omit<ReprocessRunInput, 'actor' | 'at'>;

/**
 * Starts a run; null, changing nothing, when a scheduled run is no longer due (another instance
 * started it). `wake` is called once a run that queued records is committed.
 */
export function reprocessRunChange(
  wake: () => void,
): Change<ReprocessRunRequest, ReprocessRun | null, ReprocessRunChangeTables> {
  return {
    action: 'processing.reprocess',
    // The attempts' maximum is read from the schedule for this attempt.
    requestOf: ({ trigger, selection }) => ({ trigger, selection }),
    async apply(tx, request, { at, actor }) {
      const queued = await tx.reprocessRuns.queueRun({ ...request, actor: actor.user, at });
      if (queued === undefined) return { answer: null, audit: null };
      const { run, revision } = queued;
      const counts = { queued: run.queued, skipped: run.skipped };
      return {
        answer: run,
        audit: {
          before: null,
          after: { run: run.id, state: run.state, ...counts },
          configuration: { version: null, revision, sections: {}, deleted: null },
          details: { run: run.id, trigger: run.trigger, selection: run.selection, ...counts },
        },
        ...(run.queued > 0 ? { afterCommit: wake } : {}),
      };
    },
  };
}
