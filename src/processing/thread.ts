import { Worker } from 'node:worker_threads';
import { SqliteWriteTurn } from '../storage/sqlite/write-turn.js';
import {
  type ProcessingStatus,
  type ProcessingThreadData,
  type ProcessingThreadReport,
  type ProcessingThreadRequest,
  type ReportedError,
  reportedErrorOf,
} from './messages.js';
import { raiseStoppingFlag } from './stopping.js';

/** The processor on the main thread, which takes over when the thread cannot be kept running. */
export interface InProcessProcessor {
  start(): void;
  wake(): void;
  stop(): Promise<void>;
}

/** How the main thread's logger is told about the processing thread. */
export interface ProcessingThreadLog {
  /** The thread has opened its store and started its processor. */
  started(): void;
  /** A background error of the processor (it retries by itself). */
  processingError(error: ReportedError): void;
  /** An idle database connection of the thread was lost. */
  idleConnectionLost(error: ReportedError): void;
  /** The thread ended unexpectedly; `restarting` false means processing moved to the main thread. */
  threadDied(detail: {
    exitCode: number | undefined;
    error: ReportedError | undefined;
    restarting: boolean;
  }): void;
}

/** The script of the processing thread, built next to this file. */
const PROCESSING_THREAD_ENTRY = new URL('./entry.js', import.meta.url);

/**
 * Restarts of a thread that died unexpectedly the host keeps in hand: each restart takes one, and
 * one comes back every PROCESSING_THREAD_RESTART_REFILL_INTERVAL_MS, up to this many. With none
 * left, processing moves to the main thread for the rest of the process's life.
 */
export const PROCESSING_THREAD_RESTARTS_MAX = 3;
/**
 * How long it takes for one restart to come back: a thread that dies now and then (a lost
 * database, once a day) is always started again; one that dies more often than every 10 minutes
 * on average uses the restarts up.
 */
export const PROCESSING_THREAD_RESTART_REFILL_INTERVAL_MS = 10 * 60_000;
/** Pause before starting a thread that died again, so a thread that dies at once is not spun. */
const PROCESSING_THREAD_RESTART_DELAY_MS = 1_000;

/** What tests change of the host: the thread's script, the clock of the refill, the pause. */
export interface ProcessingThreadOptions {
  entry?: URL;
  /** Milliseconds of a monotonic clock; `performance.now` by default. */
  now?: () => number;
  restartDelayMs?: number;
}

/**
 * Runs the background processor on a worker thread with its own store connection
 * (docs/adr/0013-processing-thread.md). A thread that dies unexpectedly is logged and started
 * again while restarts are in hand (PROCESSING_THREAD_RESTARTS_MAX, one back every
 * PROCESSING_THREAD_RESTART_REFILL_INTERVAL_MS); with none left the processor on the main
 * thread takes over, so records are still processed, only with the event loop shared again,
 * and `status` says processing is degraded.
 * Processing is exactly once whichever runs it: a chunk whose write did not commit is claimed
 * again.
 */
export class ProcessingThread {
  readonly #data: ProcessingThreadData;
  readonly #inProcess: InProcessProcessor;
  readonly #log: ProcessingThreadLog;
  readonly #entry: URL;
  readonly #now: () => number;
  readonly #restartDelayMs: number;
  #worker: Worker | undefined;
  #restartsLeft = PROCESSING_THREAD_RESTARTS_MAX;
  /** When the restarts in hand were last counted up (`#now`). */
  #restartsCountedAt: number;
  #restartsDone = 0;
  #inProcessRunning = false;
  #stopping = false;
  #restartTimer: NodeJS.Timeout | undefined;

  /** `options` are for tests: a thread script that misbehaves on purpose, a clock, a shorter pause. */
  constructor(
    data: ProcessingThreadData,
    inProcess: InProcessProcessor,
    log: ProcessingThreadLog,
    options: ProcessingThreadOptions = {},
  ) {
    this.#data = data;
    this.#inProcess = inProcess;
    this.#log = log;
    this.#entry = options.entry ?? PROCESSING_THREAD_ENTRY;
    this.#now = options.now ?? (() => performance.now());
    this.#restartDelayMs = options.restartDelayMs ?? PROCESSING_THREAD_RESTART_DELAY_MS;
    this.#restartsCountedAt = this.#now();
  }

  /** Where processing runs now ({@link ProcessingStatus}). */
  status(): ProcessingStatus {
    const threadRestarts = this.#restartsDone;
    if (this.#worker !== undefined)
      return { runsOn: 'processing-thread', degraded: false, detail: undefined, threadRestarts };
    if (this.#inProcessRunning) {
      return {
        runsOn: 'main-thread',
        degraded: true,
        detail:
          'the processing thread ended unexpectedly too often; processing runs on the main thread, sharing it with requests',
        threadRestarts,
      };
    }
    if (this.#stopping)
      return { runsOn: 'none', degraded: false, detail: 'processing is stopping', threadRestarts };
    return {
      runsOn: 'none',
      degraded: true,
      detail: 'the processing thread is not running; it is being started',
      threadRestarts,
    };
  }

  /**
   * Starts the thread. It loads and opens its store in the background; `wake` messages sent
   * meanwhile wait for it.
   */
  start(): void {
    const worker = new Worker(this.#entry, { workerData: this.#data });
    this.#worker = worker;
    // Read now: once the thread has ended, `worker.threadId` is -1.
    const { threadId } = worker;
    let lastError: ReportedError | undefined;
    worker.on('message', (message: ProcessingThreadReport) => {
      if (message.kind === 'started') this.#log.started();
      else if (message.kind === 'error') this.#log.processingError(message.error);
      else if (message.kind === 'idle-error') this.#log.idleConnectionLost(message.error);
      else if (message.kind === 'stop-failed') lastError = message.error;
    });
    worker.on('error', (error) => {
      lastError = reportedErrorOf(error);
    });
    worker.on('exit', (exitCode) => {
      // A thread that ended in the middle of a write no longer holds SQLite's lock: its turn is free.
      if (this.#data.sqliteWriteTurn !== undefined)
        SqliteWriteTurn.freeHeldBy(this.#data.sqliteWriteTurn, threadId);
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      if (this.#stopping) return;
      this.#died(exitCode, lastError);
    });
  }

  /** Records were stored: asks whichever processor runs for a round. */
  wake(): void {
    if (this.#worker !== undefined)
      this.#worker.postMessage({ kind: 'wake' } satisfies ProcessingThreadRequest);
    else if (this.#inProcessRunning) this.#inProcess.wake();
  }

  /**
   * Stops processing gracefully: the thread finishes its rounds in progress and closes its store.
   * Resolves when it has exited; rejects with the thread's error if it could not stop cleanly.
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#restartTimer);
    // Seen by the thread between two records, before its event loop takes the `stop` message.
    if (this.#data.settings.stopping !== undefined) raiseStoppingFlag(this.#data.settings.stopping);
    if (this.#inProcessRunning) await this.#inProcess.stop();
    const worker = this.#worker;
    if (worker === undefined) return;
    // Waits for the thread to end by itself after `stopped`: terminating it while native
    // addons (isolated-vm) still tear down their part of the thread can abort the process.
    let failure: Error | undefined;
    await new Promise<void>((resolve) => {
      worker.on('message', (message: ProcessingThreadReport) => {
        if (message.kind === 'stop-failed')
          failure = new Error(`processing thread: ${message.error.message}`);
      });
      worker.on('exit', () => resolve());
      worker.postMessage({ kind: 'stop' } satisfies ProcessingThreadRequest);
    });
    if (failure !== undefined) throw failure;
  }

  #died(exitCode: number, error: ReportedError | undefined): void {
    this.#countRestartsBack();
    const restarting = this.#restartsLeft > 0;
    this.#log.threadDied({ exitCode, error, restarting });
    if (!restarting) {
      this.#inProcessRunning = true;
      this.#inProcess.start();
      return;
    }
    this.#restartsLeft -= 1;
    this.#restartsDone += 1;
    this.#restartTimer = setTimeout(() => {
      if (!this.#stopping) this.start();
    }, this.#restartDelayMs);
  }

  /** Gives back one restart per PROCESSING_THREAD_RESTART_REFILL_INTERVAL_MS since last counted. */
  #countRestartsBack(): void {
    const now = this.#now();
    const back = Math.floor((now - this.#restartsCountedAt) / PROCESSING_THREAD_RESTART_REFILL_INTERVAL_MS);
    if (back <= 0) return;
    this.#restartsLeft = Math.min(PROCESSING_THREAD_RESTARTS_MAX, this.#restartsLeft + back);
    // With the restarts all in hand, the time since is not saved up for later.
    this.#restartsCountedAt =
      this.#restartsLeft === PROCESSING_THREAD_RESTARTS_MAX
        ? now
        : this.#restartsCountedAt + back * PROCESSING_THREAD_RESTART_REFILL_INTERVAL_MS;
  }
}
