import type { Clock } from '../../lib/clock.js';
import { newTimeOrderedUuid } from '../../lib/ids.js';
import {
  BUSINESS_EVENT_ROLLBACK_ENTITY_NAME,
  JOURNAL_ENTITY_NAME,
  LEDGER_NAMESPACE,
} from '../configuration/model.js';
import type { ConfigurationSnapshots } from '../configuration/snapshot.js';
import { nodeBusinessDate, processBusinessEvent, processDirectJournals } from './engine.js';
import { processRollbackChunk } from './event-rollback.js';
import { ChunkAbandoned, giveUpWhenStopping, type ProcessingContext } from './journal-draft.js';
import type { PeriodStates } from './periods.js';
import type { PreparedAccountingRevision } from './prepare.js';
import { failureDetailOf, processingFailedError } from './processing-error.js';
import type { AccountingStore, ChunkOutcome, ChunkProcessing, ChunkRef, ClaimedChunk } from './store.js';

/** How often an idle processor looks for records stored by other instances. */
export const PROCESSING_POLL_INTERVAL_MS = 250;
/** How often unposted journals are checked against their node's business date. */
export const POSTING_INTERVAL_MS = 60_000;
/** Pause after a failed round before trying again, so a broken store is not hammered. */
const PROCESSING_RETRY_DELAY_MS = 2_000;
/**
 * Attempts at one chunk that fail with a fault that may pass (a lost connection, a timeout, a
 * conflict with a concurrent writer) before its records are recorded as `processing-failed`.
 */
export const PROCESSING_CHUNK_ATTEMPTS_MAX = 5;
/**
 * Pause before the second attempt at a chunk whose first failed with a fault that may pass;
 * it doubles for each further attempt (1, 2, 4, 8 s: about 15 s in all before the chunk fails).
 */
export const PROCESSING_CHUNK_RETRY_DELAY_MS_MIN = 1_000;
/**
 * Times in a row a round may be told to try again (a configuration stored meanwhile, a chunk
 * processed by another thread meanwhile) before it gives up as failed: each such answer
 * means something changed under it, so an endless run of them is a fault to report, not work.
 */
export const PROCESSING_RETRIES_IN_A_ROW_MAX = 16;
/** Chunks whose failed attempts are remembered; past it the oldest is forgotten (and starts over). */
const CHUNKS_RETRIED_TRACKED_MAX = 1_000;

/**
 * A failure of one chunk's processing, as the processor reports it (logged, never thrown). It
 * carries what the error says of itself as it is stored (`failureDetailOf`), not the error:
 * a log line gets no more than the processing error does.
 */
class ChunkProcessingError extends Error {
  constructor(chunk: ChunkRef, outcome: string, cause: unknown) {
    super(
      `processing chunk ${chunk.chunkSeq} of ${chunk.ingestionId} failed (${failureDetailOf(cause)}); ${outcome}`,
    );
    this.name = 'ChunkProcessingError';
  }
}

/** The key of a chunk in the processor's memory of failed attempts. */
function chunkKey(chunk: ChunkRef): string {
  return `${chunk.ingestionId}/${chunk.chunkSeq}`;
}

/** Processes one claimed chunk; the processor's default is {@link processChunk}. */
export type ChunkHandler<T extends PreparedAccountingRevision> = (
  prepared: T,
  chunk: ClaimedChunk,
  ctx: ProcessingContext,
) => ChunkOutcome | Promise<ChunkOutcome>;

/**
 * Processes one claimed chunk with the pure engine (docs/domain/accounting.md): each business event
 * on its own, the journal lines of a chunk together, grouped by origin journal id, and rollback
 * records as requests the write path settles (event-rollback.ts).
 */
export function processChunk(
  prepared: PreparedAccountingRevision,
  chunk: ClaimedChunk,
  ctx: ProcessingContext,
): ChunkOutcome {
  if (chunk.namespace === LEDGER_NAMESPACE && chunk.entity === BUSINESS_EVENT_ROLLBACK_ENTITY_NAME)
    return processRollbackChunk(prepared, chunk, ctx);
  const outcome: ChunkOutcome = { journals: [], errors: [] };
  const accounting = prepared.accounting;
  if (chunk.entity === JOURNAL_ENTITY_NAME) {
    const groups = processDirectJournals(
      accounting,
      chunk.records.map((r) => r.data),
      {
        ...ctx,
        seenOriginJournalIds: chunk.seenOriginJournalIds,
        bookedOriginJournals: chunk.bookedOriginJournals,
      },
    );
    for (const group of groups) {
      const records = group.recordIndexes.map((i) => chunk.records[i]).filter((r) => r !== undefined);
      const first = records[0];
      if (first === undefined) continue;
      if (group.outcome.ok) {
        for (const draft of group.outcome.journals)
          outcome.journals.push({ recordId: first.recordId, draft });
      } else {
        const { code, message } = group.outcome.error;
        for (const record of records)
          outcome.errors.push({ recordId: record.recordId, code, message, record: record.data });
      }
    }
    return outcome;
  }
  for (const record of chunk.records) {
    giveUpWhenStopping(ctx);
    const result = processBusinessEvent(accounting, record.data, ctx);
    if (result.ok) {
      for (const draft of result.journals) outcome.journals.push({ recordId: record.recordId, draft });
    } else {
      outcome.errors.push({
        recordId: record.recordId,
        code: result.error.code,
        message: result.error.message,
        record: record.data,
      });
    }
  }
  return outcome;
}

/**
 * Turns accepted records into journals in the background, with no request needed
 * (docs/domain/accounting.md, Guarantees). Each instance runs one; they share the work through the
 * store's chunk claims. A round processes chunks until none is left; new chunks wake it at once,
 * and it also polls, to see chunks stored by other instances. Unposted journals are posted when
 * their node's business date reaches them, checked every POSTING_INTERVAL_MS.
 */
export class AccountingProcessor<T extends PreparedAccountingRevision = PreparedAccountingRevision> {
  readonly #store: AccountingStore;
  readonly #snapshots: ConfigurationSnapshots<T>;
  readonly #work: ChunkHandler<T>;
  readonly #clock: Clock;
  readonly #businessDatePinned: string | undefined;
  readonly #onError: (error: unknown) => void;
  readonly #postingIntervalMs: number;
  readonly #concurrency: number;
  readonly #pauseAfterChunkMs: (chunkMs: number) => number;
  readonly #stopping: () => boolean;
  /**
   * Until when (`performance.now()`) no round claims a chunk: the pause after the last chunk
   * processed (`pauseAfterChunkMs`). One for all rounds, so that a pause leaves the machine to
   * others rather than to this processor's other rounds.
   */
  #claimsResumeAtMs = 0;
  #running = false;
  /** Set by `stop`: rounds in progress end with their current chunk, given up between records. */
  #stopRequested = false;
  readonly #rounds = new Set<Promise<void>>();
  #again = false;
  #timers: NodeJS.Timeout[] = [];
  readonly #chunkRetryDelayMsMin: number;
  /** Failed attempts per chunk (`ingestionId/chunkSeq`) that may still succeed. */
  readonly #chunkAttempts = new Map<string, number>();
  /** Ends the pauses in progress, so that `stop` does not wait for them. */
  readonly #pausesEnd = new Set<() => void>();
  /**
   * The period states chunks are processed with, read again only when a claim finds the store's
   * version moved (`stale-periods`), so the hot path's period check stays a memo comparison.
   */
  #periods: PeriodStates | undefined;

  constructor(
    store: AccountingStore,
    snapshots: ConfigurationSnapshots<T>,
    clock: Clock,
    options: {
      businessDatePinned: string | undefined;
      /** How a claimed chunk is processed; {@link processChunk} when absent (flows add theirs). */
      work?: ChunkHandler<T>;
      onError?: (error: unknown) => void;
      postingIntervalMs?: number;
      /** Rounds run side by side: more than one only where the store lets them claim apart. */
      concurrency?: number;
      /** PROCESSING_CHUNK_RETRY_DELAY_MS_MIN unless given (tests shorten it). */
      chunkRetryDelayMsMin?: number;
      /**
       * How long every round pauses after a chunk processed in `chunkMs`, to leave the machine to
       * the requests in progress (`processing/requests-in-progress.ts`); no pause unless given.
       */
      pauseAfterChunkMs?: (chunkMs: number) => number;
      /**
       * Whether the service is stopping, read between the records of a chunk: a stop signalled
       * from another thread (`processing/stopping.ts`), seen even while this thread's event loop
       * is busy with the chunk, which is then given up. Only `stop` says so when absent.
       */
      stopping?: () => boolean;
    },
  ) {
    this.#store = store;
    this.#snapshots = snapshots;
    this.#work = options.work ?? processChunk;
    this.#clock = clock;
    this.#businessDatePinned = options.businessDatePinned;
    this.#onError = options.onError ?? (() => {});
    this.#postingIntervalMs = options.postingIntervalMs ?? POSTING_INTERVAL_MS;
    this.#concurrency = options.concurrency ?? 1;
    this.#chunkRetryDelayMsMin = options.chunkRetryDelayMsMin ?? PROCESSING_CHUNK_RETRY_DELAY_MS_MIN;
    this.#pauseAfterChunkMs = options.pauseAfterChunkMs ?? (() => 0);
    const signalled = options.stopping ?? (() => false);
    this.#stopping = () => this.#stopRequested || signalled();
  }

  /** Starts the background rounds and the posting timer. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#stopRequested = false;
    this.#timers.push(setInterval(() => this.wake(), PROCESSING_POLL_INTERVAL_MS).unref());
    this.#timers.push(
      setInterval(() => {
        this.postDue().catch((error: unknown) => this.#onError(error));
      }, this.#postingIntervalMs).unref(),
    );
    this.wake();
  }

  /**
   * Stops scheduling rounds and waits for the rounds in progress to end: a chunk whose work has
   * not ended is given up between two records (nothing of it written) and waits with the rest
   * for the next start, so a stop waits neither for a backlog nor for a chunk's work.
   */
  async stop(): Promise<void> {
    this.#running = false;
    this.#stopRequested = true;
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers = [];
    for (const end of this.#pausesEnd) end();
    await Promise.all(this.#rounds);
  }

  /** Asks for a round soon (new records were stored); cheap to call often. */
  wake(): void {
    if (!this.#running) return;
    if (this.#rounds.size >= this.#concurrency) {
      this.#again = true;
      return;
    }
    const round: Promise<void> = this.drain()
      .then(() => undefined)
      .catch(async (error: unknown) => {
        this.#onError(error);
        await this.#pause(PROCESSING_RETRY_DELAY_MS);
      })
      .finally(() => {
        this.#rounds.delete(round);
        if (this.#again) {
          this.#again = false;
          this.wake();
        }
      });
    this.#rounds.add(round);
  }

  /**
   * Processes chunks until none is waiting; returns how many records it processed, those
   * recorded as `processing-failed` included. A chunk whose processing throws never stops the
   * queue: a fault that may pass is tried again, after a pause that doubles, up to
   * PROCESSING_CHUNK_ATTEMPTS_MAX attempts; any other fault, or the last attempt's, is recorded
   * as the `processing-failed` error of each of the chunk's records, which then count as
   * processed, and the next chunk is taken. Throws when the store fails before a chunk is
   * claimed, or after PROCESSING_RETRIES_IN_A_ROW_MAX answers in a row to try again.
   */
  async drain(): Promise<number> {
    let total = 0;
    let retriesInARow = 0;
    while (!this.#stopRequested) {
      const resumeInMs = this.#claimsResumeAtMs - performance.now();
      if (resumeInMs > 0) {
        await this.#pause(resumeInMs);
        continue;
      }
      const { prepared } = await this.#snapshots.current();
      this.#periods ??= await this.#store.periodStates();
      const periods = this.#periods;
      const ctx: ProcessingContext = {
        ingestionId: '',
        now: this.#clock.now(),
        newId: newTimeOrderedUuid,
        periods,
        stopping: this.#stopping,
        ...(this.#businessDatePinned === undefined ? {} : { businessDatePinned: this.#businessDatePinned }),
      };
      const at = ctx.now.toISOString();
      const startedMs = performance.now();
      const result = await this.#store.processNextChunk(
        prepared.revision,
        at,
        (chunk) => this.#work(prepared, chunk, { ...ctx, ingestionId: chunk.ingestionId }),
        periods.version,
      );
      if (result.kind === 'idle') return total;
      if (result.kind === 'retry') {
        // A new configuration was stored since the snapshot, a period's state changed, or another
        // thread processed the chunk meanwhile: take the current ones and the next chunk.
        if (result.reason === 'stale-periods') this.#periods = undefined;
        retriesInARow += 1;
        if (retriesInARow >= PROCESSING_RETRIES_IN_A_ROW_MAX) {
          throw new Error(
            `processing was told to try again ${retriesInARow} times in a row (last: ${result.reason}); the round ends`,
          );
        }
        continue;
      }
      retriesInARow = 0;
      // Stopping: the chunk in progress was given up, nothing of it written; it waits.
      if (result.kind === 'failed' && result.error instanceof ChunkAbandoned) return total;
      if (result.kind === 'processed') {
        this.#chunkAttempts.delete(chunkKey(result.chunk));
        total += result.records;
        const endedMs = performance.now();
        const pauseMs = this.#pauseAfterChunkMs(endedMs - startedMs);
        this.#claimsResumeAtMs = Math.max(this.#claimsResumeAtMs, endedMs + pauseMs);
      } else {
        total += await this.#chunkFailed(result, at);
      }
    }
    return total;
  }

  /**
   * A chunk's processing threw: waits and lets the next claim try it again while the fault may
   * pass and attempts are left; else records its records as `processing-failed` (one transaction
   * with their processed marks, so they end processed exactly once). Returns the records marked.
   */
  async #chunkFailed(result: Extract<ChunkProcessing, { kind: 'failed' }>, at: string): Promise<number> {
    const key = chunkKey(result.chunk);
    const attempts = (this.#chunkAttempts.get(key) ?? 0) + 1;
    if (result.transient && attempts < PROCESSING_CHUNK_ATTEMPTS_MAX) {
      const delayMs = this.#chunkRetryDelayMsMin * 2 ** (attempts - 1);
      this.#chunkAttempts.delete(key);
      if (this.#chunkAttempts.size >= CHUNKS_RETRIED_TRACKED_MAX) {
        const oldest = this.#chunkAttempts.keys().next();
        if (oldest.done !== true) this.#chunkAttempts.delete(oldest.value);
      }
      this.#chunkAttempts.set(key, attempts);
      this.#onError(
        new ChunkProcessingError(
          result.chunk,
          `attempt ${attempts} of ${PROCESSING_CHUNK_ATTEMPTS_MAX}; trying again in ${delayMs} ms`,
          result.error,
        ),
      );
      await this.#pause(delayMs);
      return 0;
    }
    this.#onError(
      new ChunkProcessingError(result.chunk, 'its records are recorded as processing-failed', result.error),
    );
    const failed = await this.#store.failChunk(result.chunk, at, processingFailedError(result.error));
    this.#chunkAttempts.delete(key);
    return failed;
  }

  /** Waits `ms`, or less when the processor is stopped meanwhile. */
  #pause(ms: number): Promise<void> {
    if (this.#stopRequested) return Promise.resolve();
    return new Promise((resolve) => {
      const end = () => {
        clearTimeout(timer);
        this.#pausesEnd.delete(end);
        resolve();
      };
      const timer = setTimeout(end, ms).unref();
      this.#pausesEnd.add(end);
    });
  }

  /** Posts every unposted journal whose core date has come for its node; returns how many. */
  async postDue(): Promise<number> {
    const { prepared } = await this.#snapshots.current();
    let posted = 0;
    for (const node of await this.#store.unpostedNodes()) {
      const businessDate = nodeBusinessDate(prepared.accounting, node, {
        now: this.#clock.now(),
        ...(this.#businessDatePinned === undefined ? {} : { businessDatePinned: this.#businessDatePinned }),
      });
      if (businessDate !== undefined) posted += await this.#store.postDue(node, businessDate);
    }
    return posted;
  }
}
