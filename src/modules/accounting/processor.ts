import type { Clock } from '../../lib/clock.js';
import { newTimeOrderedUuid } from '../../lib/ids.js';
import { JOURNAL_ENTITY_NAME } from '../configuration/model.js';
import type { ConfigurationSnapshots } from '../configuration/snapshot.js';
import { nodeBusinessDate, processBusinessEvent, processDirectJournals } from './engine.js';
import type { ProcessingContext } from './journal-draft.js';
import type { PreparedAccountingRevision } from './prepare.js';
import { type AccountingStore, type ChunkOutcome, type ClaimedChunk, STALE_CONFIGURATION } from './store.js';

/** How often an idle processor looks for records stored by other instances. */
export const PROCESSING_POLL_INTERVAL_MS = 250;
/** How often unposted journals are checked against their node's business date. */
export const POSTING_INTERVAL_MS = 60_000;
/** Pause after a failed round before trying again, so a broken store is not hammered. */
const PROCESSING_RETRY_DELAY_MS = 2_000;

/** Processes one claimed chunk; the processor's default is {@link processChunk}. */
export type ChunkWork<T extends PreparedAccountingRevision> = (
  prepared: T,
  chunk: ClaimedChunk,
  ctx: ProcessingContext,
) => ChunkOutcome | Promise<ChunkOutcome>;

/**
 * Processes one claimed chunk with the pure engine (docs/domain/accounting.md): each business event
 * on its own, the journal lines of a chunk together, grouped by origin journal id.
 */
export function processChunk(
  prepared: PreparedAccountingRevision,
  chunk: ClaimedChunk,
  ctx: ProcessingContext,
): ChunkOutcome {
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
  readonly #work: ChunkWork<T>;
  readonly #clock: Clock;
  readonly #businessDatePinned: string | undefined;
  readonly #onError: (error: unknown) => void;
  readonly #postingIntervalMs: number;
  readonly #concurrency: number;
  #running = false;
  /** Set by `stop`: rounds in progress end after their current chunk. */
  #stopRequested = false;
  readonly #rounds = new Set<Promise<void>>();
  #again = false;
  #timers: NodeJS.Timeout[] = [];

  constructor(
    store: AccountingStore,
    snapshots: ConfigurationSnapshots<T>,
    clock: Clock,
    options: {
      businessDatePinned: string | undefined;
      /** How a claimed chunk is processed; {@link processChunk} when absent (flows add theirs). */
      work?: ChunkWork<T>;
      onError?: (error: unknown) => void;
      postingIntervalMs?: number;
      /** Rounds run side by side: more than one only where the store lets them claim apart. */
      concurrency?: number;
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
   * Stops scheduling rounds and waits for the rounds in progress to finish the chunk they work
   * on; the chunks still waiting stay for the next start, so a stop does not wait for a backlog.
   */
  async stop(): Promise<void> {
    this.#running = false;
    this.#stopRequested = true;
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers = [];
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
        await new Promise((resolve) => setTimeout(resolve, PROCESSING_RETRY_DELAY_MS).unref());
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

  /** Processes chunks until none is waiting; returns how many records it processed. */
  async drain(): Promise<number> {
    let total = 0;
    while (!this.#stopRequested) {
      const { prepared } = await this.#snapshots.current();
      const ctx: ProcessingContext = {
        ingestionId: '',
        now: this.#clock.now(),
        newId: newTimeOrderedUuid,
        ...(this.#businessDatePinned === undefined ? {} : { businessDatePinned: this.#businessDatePinned }),
      };
      const processed = await this.#store.processNextChunk(
        prepared.revision,
        ctx.now.toISOString(),
        (chunk) => this.#work(prepared, chunk, { ...ctx, ingestionId: chunk.ingestionId }),
      );
      // A new configuration was stored since the snapshot: take it and try again.
      if (processed === STALE_CONFIGURATION) continue;
      if (processed === 0) return total;
      total += processed;
    }
    return total;
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
