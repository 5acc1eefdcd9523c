/**
 * Reprocessing of failed records (docs/reference.md, Reprocessing;
 * docs/adr/0019-reprocessing-through-the-queue.md). A run puts the records of selected open
 * processing errors back into the processing queue under the current configuration; the
 * processor takes them exactly once, like any waiting record, and each either posts (its error
 * is closed) or fails again (its error keeps its row with the new code and one attempt more). A
 * dry run, and the what-if of a candidate configuration, run the same engine work over the same
 * records and write nothing. The schedule starts runs by itself, once a day or every N minutes.
 */
import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { newTimeOrderedUuid } from '../../lib/ids.js';
import { invariant } from '../../lib/invariant.js';
import { type AuditActor, systemActor } from '../audit/entry.js';
import type { ChangeOptions, ChangeRunner, Outcome } from '../changes/runner.js';
import type { ConfigurationSnapshots } from '../configuration/snapshot.js';
import type { ProcessingContext } from './journal-draft.js';
import type { PreparedAccountingRevision } from './prepare.js';
import type { ChunkHandler } from './processor.js';
import { type ReprocessRunChangeTables, reprocessRunChange } from './reprocess-run.js';
import {
  nextDueAfter,
  type ReprocessScheduleChangeTables,
  type ReprocessScheduleSettings,
  scheduleChange,
} from './reprocess-schedule.js';
import type {
  ReprocessExample,
  ReprocessRun,
  ReprocessSchedule,
  ReprocessSelection,
  ReprocessStore,
} from './store.js';

export {
  nextDueAfter,
  REPROCESS_INTERVAL_MINUTES_MAX,
  REPROCESS_INTERVAL_MINUTES_MIN,
  type ReprocessScheduleChangeTables,
  type ReprocessScheduleSettings,
} from './reprocess-schedule.js';

/** Records one run queues at most; the rest of a selection waits for the next run. */
export const REPROCESS_RECORDS_PER_RUN_MAX = 200_000;
/** The bounds of the maximum number of attempts per record. */
export const REPROCESS_MAX_ATTEMPTS_MIN = 1;
export const REPROCESS_MAX_ATTEMPTS_MAX = 100;
/** Failed records a dry run reads and works on at a time, between turns of the event loop. */
const DRY_RUN_RECORDS_PER_STEP = 1_000;
/** Examples an answer lists. */
export const REPROCESS_EXAMPLES_MAX = 5;
/** Who starts the runs of the schedule: the service itself, and why. */
export const SCHEDULED_RUN_ACTOR: AuditActor = systemActor('the reprocessing schedule was due');

/** What running the engine over failed records would do (a dry run, or a what-if). */
export interface ReprocessDryRun {
  /** Selected records that would be run (below the maximum number of attempts). */
  selected: number;
  /** Selected records left out: they reached the maximum number of attempts. */
  skipped: number;
  wouldPost: number;
  /** Records that would fail again, by the code they would fail with. */
  wouldStillFail: Record<string, number>;
  examples: ReprocessExample[];
}

/**
 * What the configuration's keep-data dry run asks: given a prepared candidate configuration (the
 * form processing uses) and a selection, what would today's failed records do under it.
 */
export type ReprocessWhatIf<T extends PreparedAccountingRevision> = (
  prepared: T,
  selection: ReprocessSelection,
) => Promise<ReprocessDryRun>;

/** Refuses a selection that names nothing unless it says `all`: reprocessing everything is asked for by name. */
function checkSelection(selection: ReprocessSelection): void {
  const { all, ...narrowing } = selection;
  const names = Object.values(narrowing).some((v) => v !== undefined);
  if (!names && all !== true)
    throw new AppError('validation-failed', 'the selection must name what to reprocess, or say all: true', {
      errors: [
        { path: '/selection', message: 'must name ingestionId, entity, code, from or to, or say all: true' },
      ],
    });
  if (selection.from !== undefined && selection.to !== undefined && selection.from >= selection.to)
    throw new AppError('validation-failed', 'the selection must end after it starts', {
      errors: [{ path: '/to', message: 'must be after from' }],
    });
}

/**
 * Runs `work` over the open failed records of `selection` with `prepared`, a chunk at a time as
 * the processor would, and counts what would post and what would fail, by code; writes nothing.
 * The context is that of a processing round now (`ctx`), so the answer is what a run started now
 * would do with the same configuration and records.
 */
export async function dryRunFailedRecords<T extends PreparedAccountingRevision>(
  store: ReprocessStore,
  prepared: T,
  work: ChunkHandler<T>,
  selection: ReprocessSelection,
  options: { maxAttempts: number; ctx: Omit<ProcessingContext, 'ingestionId'> },
): Promise<ReprocessDryRun> {
  const answer: ReprocessDryRun = {
    selected: 0,
    skipped: await store.countAtMaximum(selection, options.maxAttempts),
    wouldPost: 0,
    wouldStillFail: {},
    examples: [],
  };
  let after = 0;
  /** The journals the dry run's rollbacks would withdraw so far, so each sees the ones before it. */
  const withdrawn = new Map<string, string>();
  for (;;) {
    const page = await store.failedRecords(selection, options.maxAttempts, after, DRY_RUN_RECORDS_PER_STEP);
    for (const chunk of page.chunks) {
      const outcome = await work(prepared, chunk, { ...options.ctx, ingestionId: chunk.ingestionId });
      // Rollbacks are settled against the journals stored, as the run's write path settles them.
      const errors =
        outcome.rollbacks === undefined
          ? outcome.errors
          : [...outcome.errors, ...(await store.rollbackErrors(outcome.rollbacks, withdrawn))];
      const failed = new Map<number, { code: string; message: string }>();
      for (const e of errors) if (!failed.has(e.recordId)) failed.set(e.recordId, e);
      for (const record of chunk.records) {
        answer.selected += 1;
        const error = failed.get(record.recordId);
        const previousCode = page.codes.get(record.recordId) ?? '';
        if (error === undefined) answer.wouldPost += 1;
        else answer.wouldStillFail[error.code] = (answer.wouldStillFail[error.code] ?? 0) + 1;
        if (answer.examples.length < REPROCESS_EXAMPLES_MAX)
          answer.examples.push({
            recordId: record.recordId,
            ingestionId: chunk.ingestionId,
            previousCode,
            ...(error === undefined ? {} : { code: error.code, message: error.message }),
          });
      }
    }
    if (page.next === undefined) return answer;
    after = page.next;
    // A long dry run gives the event loop a turn between steps.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A run as answered: the stored run with a few examples of its records. */
export type ReprocessRunView = ReprocessRun & { examples: ReprocessExample[] };

/**
 * Reprocessing runs, their dry runs and their schedule (see the header). `work` is the engine
 * work of the processor (flows included), so a dry run answers what a run would do.
 */
export class ReprocessingService<T extends PreparedAccountingRevision> {
  readonly #store: ReprocessStore;
  readonly #snapshots: ConfigurationSnapshots<T>;
  readonly #changes: ChangeRunner<ReprocessScheduleChangeTables & ReprocessRunChangeTables>;
  /** A run as the runner starts it, waking the processor once it queued records. */
  readonly #runChange: ReturnType<typeof reprocessRunChange>;
  readonly #clock: Clock;
  readonly #work: ChunkHandler<T>;
  readonly #businessDatePinned: string | undefined;
  readonly #onRunQueued: () => void;
  readonly #candidateWork: (() => { work: ChunkHandler<T>; close(): void }) | undefined;

  /**
   * `options.candidateWork` makes the work of one what-if and what releases it: flow isolates
   * are kept per revision number, and a candidate's number is not a stored one, so each what-if
   * gets isolates of its own. Without it the what-if uses `work`.
   */
  constructor(
    store: ReprocessStore,
    changes: ChangeRunner<ReprocessScheduleChangeTables & ReprocessRunChangeTables>,
    snapshots: ConfigurationSnapshots<T>,
    clock: Clock,
    work: ChunkHandler<T>,
    options: {
      businessDatePinned: string | undefined;
      onRunQueued?: () => void;
      candidateWork?: () => { work: ChunkHandler<T>; close(): void };
    },
  ) {
    this.#store = store;
    this.#changes = changes;
    this.#snapshots = snapshots;
    this.#clock = clock;
    this.#work = work;
    this.#businessDatePinned = options.businessDatePinned;
    this.#onRunQueued = options.onRunQueued ?? (() => {});
    this.#runChange = reprocessRunChange(() => this.#onRunQueued());
    this.#candidateWork = options.candidateWork;
  }

  /** The context of a processing round now, with the period states stored now. */
  async #ctx(): Promise<Omit<ProcessingContext, 'ingestionId'>> {
    return {
      now: this.#clock.now(),
      newId: newTimeOrderedUuid,
      periods: await this.#store.periodStates(),
      ...(this.#businessDatePinned === undefined ? {} : { businessDatePinned: this.#businessDatePinned }),
    };
  }

  /**
   * Starts a run over `selection` through the change runner (an `Idempotency-Key` replays its
   * first answer): its records wait for the processor, which wakes. Records at the schedule's
   * maximum number of attempts are skipped. Errors: `validation-failed` (an empty selection
   * without `all`, a range that ends before it starts), `idempotency-key-reused`.
   */
  async reprocess(
    selection: ReprocessSelection,
    options: Omit<ChangeOptions, 'dryRun'>,
  ): Promise<Outcome<ReprocessRunView>> {
    checkSelection(selection);
    const { maxAttempts } = await this.#store.schedule();
    const request = {
      trigger: 'manual' as const,
      selection,
      maxAttempts,
      recordsMax: REPROCESS_RECORDS_PER_RUN_MAX,
    };
    const outcome = await this.#changes.run(this.#runChange, request, options);
    invariant(outcome.answer !== null, 'a run by hand is always started', () => JSON.stringify(selection));
    return { ...outcome, answer: { ...outcome.answer, examples: [] } };
  }

  /** What a run over `selection` would do now, under the current configuration; writes nothing. */
  async dryRun(selection: ReprocessSelection): Promise<ReprocessDryRun> {
    checkSelection(selection);
    const { prepared } = await this.#snapshots.current();
    return this.whatIf(prepared, selection);
  }

  /** What a run over `selection` would do under the prepared configuration `prepared`. */
  readonly whatIf: ReprocessWhatIf<T> = async (prepared, selection) => {
    const { maxAttempts } = await this.#store.schedule();
    return dryRunFailedRecords(this.#store, prepared, this.#work, selection, {
      maxAttempts,
      ctx: await this.#ctx(),
    });
  };

  /** A run with a few examples. Errors: `not-found`. */
  async run(id: number): Promise<ReprocessRunView> {
    const run = await this.#store.findRun(id, this.#clock.now().toISOString());
    if (run === undefined) throw new AppError('not-found', `no reprocessing run ${id}`);
    return { ...run, examples: await this.#store.runExamples(id, REPROCESS_EXAMPLES_MAX) };
  }

  /** A page of runs, newest first. */
  runs(page: number, limit: number): Promise<{ rows: ReprocessRun[]; total: number }> {
    return this.#store.listRuns(page, limit);
  }

  /** Processing errors by state: open, queued in a run, closed by one. */
  errorStates(): Promise<{ open: number; queued: number; closed: number }> {
    return this.#store.countByState();
  }

  schedule(): Promise<ReprocessSchedule> {
    return this.#store.schedule();
  }

  /**
   * Changes the schedule; the next run is due by the new settings from now. Errors:
   * `validation-failed` (an interval under REPROCESS_INTERVAL_MINUTES_MIN, checked by the route
   * too).
   */
  setSchedule(
    settings: ReprocessScheduleSettings,
    options: ChangeOptions,
  ): Promise<Outcome<ReprocessSchedule>> {
    return this.#changes.run(scheduleChange, settings, options);
  }

  /**
   * Starts the scheduled run when it is due, on one instance only: the run is queued in the
   * transaction that moves the schedule's next due instant, conditionally on the instant it read,
   * so of several instances ticking at once one starts it and the others find it moved. Works out
   * the first due instant when none is stored. Returns the run it started, if any.
   */
  async tick(): Promise<ReprocessRun | undefined> {
    const schedule = await this.#store.schedule();
    const now = this.#clock.now();
    if (schedule.mode === 'disabled') return undefined;
    if (schedule.nextDueAt === null) {
      await this.#store.moveNextDue(null, nextDueAfter(schedule, now));
      return undefined;
    }
    if (schedule.nextDueAt > now.toISOString()) return undefined;
    const request = {
      trigger: 'scheduled' as const,
      selection: { all: true },
      maxAttempts: schedule.maxAttempts,
      recordsMax: REPROCESS_RECORDS_PER_RUN_MAX,
      due: { dueAt: schedule.nextDueAt, nextDueAt: nextDueAfter(schedule, now) },
    };
    const { answer } = await this.#changes.run(this.#runChange, request, { actor: SCHEDULED_RUN_ACTOR });
    return answer ?? undefined;
  }
}
