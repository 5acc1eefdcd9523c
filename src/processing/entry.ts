import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { createProcessing, createSnapshots } from '../composition/processing.js';
import { systemClock } from '../lib/clock.js';
import { openStore } from '../storage/store.js';
import {
  type ProcessingThreadData,
  type ProcessingThreadReport,
  type ProcessingThreadRequest,
  reportedErrorOf,
} from './messages.js';

/**
 * Entry of the processing thread (docs/adr/0013-processing-thread.md): the background processor,
 * its flows and its posting timer, on a worker thread with a store connection of its own, so
 * that processing a backlog does not hold the event loop that answers requests. The main thread
 * has migrated the store before it starts this thread. Answers `wake` (records were stored) and
 * `stop` (finish the rounds in progress, close the store, then say `stopped`); background errors
 * go to the main thread, which logs them.
 */
const port = parentPort;
if (port === null) throw new Error('processing/entry.js runs as a worker thread of the service');
const data = workerData as ProcessingThreadData;

function report(message: ProcessingThreadReport): void {
  port?.postMessage(message);
}

/**
 * This thread's nice value on Linux, where a thread's scheduling priority is its own: when the
 * machine's cores are all busy, the event loop that answers ingestion gets them before processing
 * does, and processing takes what is left (docs/adr/0013-processing-thread.md). Other systems
 * would lower the whole process, so they keep the default.
 */
const PROCESSING_THREAD_NICE = 10;
if (process.platform === 'linux') {
  try {
    // Never below the nice value the process was started with: raising priority needs privileges.
    setPriority(Math.max(getPriority(), PROCESSING_THREAD_NICE));
  } catch {
    // A system that refuses leaves the thread at the process's priority; processing is unchanged.
  }
}

const store = openStore(data.databaseUrl, {
  onIdleError: (error) => report({ kind: 'idle-error', error: reportedErrorOf(error) }),
  connectTimeoutMs: data.databaseConnectTimeoutMs,
  statementTimeoutMs: data.databaseStatementTimeoutMs,
  // The event loop's writes (ingestion) go before this thread's.
  ...(data.sqliteWriteTurn === undefined
    ? {}
    : { sqliteWriteTurn: { buffer: data.sqliteWriteTurn, priority: false } }),
});
const processing = createProcessing(store, createSnapshots(store), systemClock, data.settings, (error) =>
  report({ kind: 'error', error: reportedErrorOf(error) }),
);
processing.start();

let stopping = false;
port.on('message', (message: ProcessingThreadRequest) => {
  if (message.kind === 'wake') {
    processing.processor.wake();
    return;
  }
  if (stopping) return;
  stopping = true;
  processing
    .close()
    .then(() => store.close())
    .then(() => report({ kind: 'stopped' }))
    .catch((error: unknown) => report({ kind: 'stop-failed', error: reportedErrorOf(error) }))
    // Nothing holds the thread any more: it ends by itself once its last tasks (the isolates'
    // disposal among them) are done, rather than being torn down in the middle of them.
    .finally(() => port.close());
});
report({ kind: 'started' });
