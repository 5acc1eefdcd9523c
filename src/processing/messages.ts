/**
 * What the main thread and the processing thread say to each other
 * (docs/adr/0013-processing-thread.md), and what the host says of where processing runs.
 */
import type { ProcessingSettings } from '../composition/processing.js';

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

/**
 * An error as it crosses between the threads and reaches the log: its name, message and stack,
 * no data of the records, no connection string. Whatever is thrown, an `Error` or not.
 */
export function reportedErrorOf(error: unknown): ReportedError {
  return error instanceof Error
    ? { name: error.name, message: error.message, stack: error.stack }
    : { name: 'Error', message: String(error), stack: undefined };
}

/**
 * Where processing runs now, for `/readyz` and the metrics. `degraded` when it does not run where
 * it should: on the main thread after the processing thread ended too often, or nowhere while a
 * thread that died waits to start again; `detail` then says which.
 */
export interface ProcessingStatus {
  runsOn: 'processing-thread' | 'main-thread' | 'none';
  degraded: boolean;
  detail: string | undefined;
  /** Times the processing thread was started again after ending unexpectedly, since start. */
  threadRestarts: number;
}
