/**
 * Asynchronous extractions (docs/reference.md, Asynchronous extractions; docs/adr/0023-extract-
 * executions.md), when the feature flag `extracts-in-bulk` is on: a trigger, a change through the
 * change runner (`extract-changes.ts`), fixes the window of the extract (the pending one of an
 * incremental configuration) and queues an execution in one transaction; a maker
 * on some instance produces its file run by run, each run a part of at most
 * `EXTRACT_RUN_ROWS` rows stored with the cursor after it. A maker that dies leaves its lease to
 * end; the next maker (another instance, or this one restarted) goes on from the cursor. A
 * completed file is kept for `EXTRACT_FILE_KEEP_HOURS`, then deleted.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import type { ChangeOptions, ChangeRunner, Outcome } from '../changes/runner.js';
import {
  type ExecutionView,
  type ExtractChangeTables,
  triggerChange,
  executionViewOf as viewOf,
} from './extract-changes.js';
import type { ExtractService } from './service.js';
import type { ExecutionRun, ExecutionStore, ExtractFormat, RowKey, StoredExecution } from './store.js';

export { EXTRACTS_IN_BULK_FLAG, type ExecutionView } from './extract-changes.js';

/** Rows per run: one part of the file, written in one transaction. */
export const EXTRACT_RUN_ROWS = 10_000;
/** How long a maker holds an execution without writing a run before another may take it over. */
export const EXTRACT_LEASE_MS = 15_000;
/** How long a finished execution's file is kept. */
export const EXTRACT_FILE_KEEP_HOURS = 168;
/** How often a maker looks for work besides being woken (a restart, another instance's trigger). */
export const EXTRACT_POLL_MS = 2_000;
/** Most runs an execution's details list. */
export const EXTRACT_RUNS_SHOWN_MAX = 1000;
/** Parts read per query of a download. */
const PARTS_PER_READ = 4;

/** Triggers, lists and makes asynchronous extractions. */
export class ExtractExecutions {
  readonly #store: ExecutionStore;
  readonly #trigger: ReturnType<typeof triggerChange>;
  readonly #runner: ChangeRunner<ExtractChangeTables>;
  readonly #extracts: ExtractService;
  readonly #clock: Clock;
  readonly #flagOn: () => Promise<boolean>;
  readonly #onError: (error: unknown) => void;
  #timer: NodeJS.Timeout | undefined;
  #working: Promise<void> | undefined;
  #again = false;
  #closed = false;
  readonly #makes: boolean;

  /**
   * A trigger runs through `runner` (`extract-changes.ts`). `flagOn` reads the feature flag from
   * the current configuration. With `makes` false this
   * instance triggers, lists and serves executions but never makes one: the maker of this process
   * runs where its processing runs (`composition/processing.ts`), off the event loop that answers
   * requests, and finds queued executions within `EXTRACT_POLL_MS`.
   */
  constructor(
    store: ExecutionStore,
    runner: ChangeRunner<ExtractChangeTables>,
    extracts: ExtractService,
    clock: Clock,
    flagOn: () => Promise<boolean>,
    onError: (error: unknown) => void,
    options: { makes: boolean } = { makes: true },
  ) {
    this.#store = store;
    this.#runner = runner;
    this.#trigger = triggerChange(() => this.wake());
    this.#extracts = extracts;
    this.#clock = clock;
    this.#flagOn = flagOn;
    this.#onError = onError;
    this.#makes = options.makes;
  }

  #now(): string {
    return this.#clock.now().toISOString();
  }

  #later(ms: number): string {
    return new Date(this.#clock.now().getTime() + ms).toISOString();
  }

  /**
   * Queues an extraction of the Active configuration `id`, its window fixed as a read fixes it,
   * and wakes the maker once committed. Errors: `conflict` when `extracts-in-bulk` is off or the
   * configuration is not Active; `not-found`; `entity-not-found` as a read.
   */
  async trigger(id: number, options: ChangeOptions, format?: ExtractFormat): Promise<Outcome<ExecutionView>> {
    // What the configuration stored now says is read before the change's transaction.
    const flagOn = await this.#flagOn();
    const entities = await this.#extracts.entitiesNow();
    return this.#runner.run(this.#trigger, { id, format, flagOn, entities }, options);
  }

  /** The executions of configuration `id`, newest first, before execution `before`. Errors: `not-found`. */
  async list(
    id: number,
    before: number,
    limit: number,
  ): Promise<{ rows: ExecutionView[]; next: number | undefined }> {
    await this.#extracts.get(id);
    const rows = await this.#store.list(id, before, limit);
    const kept = rows.slice(0, limit);
    return { rows: kept.map(viewOf), next: rows.length > limit ? kept.at(-1)?.id : undefined };
  }

  /** One execution with its runs. Errors: `not-found`. */
  async get(id: number): Promise<ExecutionView & { runs: ExecutionRun[] }> {
    const execution = await this.#store.find(id);
    if (execution === undefined) throw new AppError('not-found', `no extraction execution ${id}`);
    return { ...viewOf(execution), runs: await this.#store.runs(id, EXTRACT_RUNS_SHOWN_MAX) };
  }

  /**
   * The file of a completed execution, part by part. Errors: `not-found` (also once it
   * expired); `conflict` while it is not completed.
   */
  async file(id: number): Promise<{ execution: ExecutionView; parts: AsyncGenerator<string> }> {
    const execution = await this.#store.find(id);
    if (execution === undefined) throw new AppError('not-found', `no extraction execution ${id}`);
    if (execution.status !== 'completed')
      throw new AppError(
        'conflict',
        `extraction execution ${id} is ${execution.status}: its file is ready once completed`,
      );
    const store = this.#store;
    async function* parts(): AsyncGenerator<string> {
      let after = 0;
      for (;;) {
        const read = await store.parts(id, after, PARTS_PER_READ);
        for (const part of read) {
          yield part.content;
          after = part.runNo;
        }
        if (read.length < PARTS_PER_READ) return;
      }
    }
    return { execution: viewOf(execution), parts: parts() };
  }

  /** Starts looking for work every `EXTRACT_POLL_MS` (executions left by a restart included). */
  start(): void {
    if (this.#timer !== undefined || this.#closed || !this.#makes) return;
    this.#timer = setInterval(() => this.wake(), EXTRACT_POLL_MS);
    this.#timer.unref();
    this.wake();
  }

  /** Makes the waiting executions now; a call while making asks for one more look after. */
  wake(): void {
    if (this.#closed || !this.#makes) return;
    if (this.#working !== undefined) {
      this.#again = true;
      return;
    }
    this.#working = this.#work()
      .catch(this.#onError)
      .finally(() => {
        this.#working = undefined;
        if (this.#again) {
          this.#again = false;
          this.wake();
        }
      });
  }

  /** Waits for the work in progress (tests). */
  async idle(): Promise<void> {
    while (this.#working !== undefined) await this.#working;
  }

  /** Stops looking for work and waits for the run in progress. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    await this.#working;
  }

  async #work(): Promise<void> {
    await this.#store.sweep(this.#now());
    for (;;) {
      if (this.#closed) return;
      const execution = await this.#store.claim(this.#now(), this.#later(EXTRACT_LEASE_MS));
      if (execution === undefined) return;
      await this.#make(execution);
    }
  }

  /** Makes an execution's remaining runs, from its cursor, while this maker holds its lease. */
  async #make(execution: StoredExecution): Promise<void> {
    let lease = execution.leaseUntil ?? '';
    const finish = (status: 'completed' | 'failed', failure: string | null) =>
      this.#store.finish(execution.id, lease, {
        status,
        at: this.#now(),
        expiresAt: this.#later(EXTRACT_FILE_KEEP_HOURS * 3_600_000),
        failure,
      });
    let config: Awaited<ReturnType<ExtractService['get']>>;
    try {
      config = await this.#extracts.get(execution.configurationId);
    } catch (error) {
      await finish('failed', error instanceof Error ? error.message : String(error));
      return;
    }
    let cursor: RowKey | undefined = execution.cursor ?? undefined;
    let runNo = execution.runs;
    for (;;) {
      if (this.#closed) return;
      const startedAt = this.#now();
      let content = '';
      let records = 0;
      for await (const piece of this.#extracts.lines(config, execution.window, execution.format, cursor)) {
        content += piece.text;
        records += piece.rows;
        if (piece.last !== undefined) cursor = piece.last;
        if (records >= EXTRACT_RUN_ROWS) break;
      }
      if (content === '') {
        await finish('completed', null);
        return;
      }
      runNo += 1;
      const nextLease = this.#later(EXTRACT_LEASE_MS);
      const saved = await this.#store.saveRun(
        execution.id,
        lease,
        {
          runNo,
          records,
          startedAt,
          completedAt: this.#now(),
          content,
          bytes: Buffer.byteLength(content),
          cursor: cursor ?? null,
        },
        nextLease,
      );
      // Another maker took it over (this one was too slow for its lease): it goes on from the cursor.
      if (!saved) return;
      lease = nextLease;
      if (records === 0 || records < EXTRACT_RUN_ROWS) {
        await finish('completed', null);
        return;
      }
      await nextTurn();
    }
  }
}
