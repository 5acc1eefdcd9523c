import { Worker } from 'node:worker_threads';
import type { ProcessingSettings } from './services.js';
import { SqliteWriteTurn } from './storage/sqlite-write-turn.js';

/** What the processing thread is started with (its `workerData`). */
export interface ProcessingThreadData {
  databaseUrl: string;
  databaseConnectTimeoutMs: number;
  databaseStatementTimeoutMs: number;
  /** SQLite: the main thread's turn to write (`Store.sqliteWriteTurn`), shared, not copied. */
  sqliteWriteTurn: SharedArrayBuffer | undefined;
  settings: ProcessingSettings;
}

/** Messages from the main thread to the processing thread. */
export type ProcessingThreadRequest = { kind: 'wake' } | { kind: 'stop' };

/** An error as the processing thread reports it: what a log line needs, nothing else. */
export interface ReportedError {
  name: string;
  message: string;
  stack: string | undefined;
}

/** Messages from the processing thread to the main thread. */
export type ProcessingThreadReport =
  | { kind: 'started' }
  | { kind: 'stopped' }
  | { kind: 'error'; error: ReportedError }
  | { kind: 'idle-error'; error: ReportedError }
  | { kind: 'stop-failed'; error: ReportedError };

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
const PROCESSING_THREAD_ENTRY = new URL('./processing-thread.js', import.meta.url);

/** Times the thread is started again after dying unexpectedly, before processing moves in-process. */
export const PROCESSING_THREAD_RESTARTS_MAX = 3;
/** Pause before starting a thread that died again, so a thread that dies at once is not spun. */
const PROCESSING_THREAD_RESTART_DELAY_MS = 1_000;

function errorOf(error: unknown): ReportedError {
  return error instanceof Error
    ? { name: error.name, message: error.message, stack: error.stack }
    : { name: 'Error', message: String(error), stack: undefined };
}

/**
 * Runs the background processor on a worker thread with its own store connection
 * (docs/adr/0013-processing-thread.md). A thread that dies unexpectedly is logged and started
 * again, at most PROCESSING_THREAD_RESTARTS_MAX times; after that the processor on the main
 * thread takes over, so records are still processed, only with the event loop shared again.
 * Processing is exactly once whichever runs it: a chunk whose write did not commit is claimed
 * again.
 */
export class ProcessingThread {
  readonly #data: ProcessingThreadData;
  readonly #inProcess: InProcessProcessor;
  readonly #log: ProcessingThreadLog;
  readonly #entry: URL;
  #worker: Worker | undefined;
  #restarts = 0;
  #inProcessRunning = false;
  #stopping = false;
  #restartTimer: NodeJS.Timeout | undefined;

  /** `entry` is the thread's script; tests give one that misbehaves on purpose. */
  constructor(
    data: ProcessingThreadData,
    inProcess: InProcessProcessor,
    log: ProcessingThreadLog,
    entry = PROCESSING_THREAD_ENTRY,
  ) {
    this.#data = data;
    this.#inProcess = inProcess;
    this.#log = log;
    this.#entry = entry;
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
      lastError = errorOf(error);
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
    if (this.#inProcessRunning) await this.#inProcess.stop();
    const worker = this.#worker;
    if (worker === undefined) return;
    await new Promise<void>((resolve, reject) => {
      worker.on('message', (message: ProcessingThreadReport) => {
        if (message.kind === 'stopped') resolve();
        else if (message.kind === 'stop-failed')
          reject(new Error(`processing thread: ${message.error.message}`));
      });
      worker.on('exit', () => resolve());
      worker.postMessage({ kind: 'stop' } satisfies ProcessingThreadRequest);
    });
    await worker.terminate();
  }

  #died(exitCode: number, error: ReportedError | undefined): void {
    const restarting = this.#restarts < PROCESSING_THREAD_RESTARTS_MAX;
    this.#log.threadDied({ exitCode, error, restarting });
    if (!restarting) {
      this.#inProcessRunning = true;
      this.#inProcess.start();
      return;
    }
    this.#restarts += 1;
    this.#restartTimer = setTimeout(() => {
      if (!this.#stopping) this.start();
    }, PROCESSING_THREAD_RESTART_DELAY_MS);
  }
}
