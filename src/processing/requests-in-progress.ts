/**
 * The requests the service is answering, counted in memory that the main thread shares with the
 * processing thread, so that processing leaves the machine to many clients at once
 * (docs/adr/0030-processing-yields-to-many-clients.md).
 *
 * The event loop counts each request from its arrival until its answer is sent or its connection
 * is lost (`http/arrival.ts`). After each chunk it processed, processing pauses while
 * REQUESTS_MANY requests or more are in progress, the longer the more there are: as long as the
 * chunk took at REQUESTS_MANY (it works half the time), up to PAUSE_CHUNKS_MAX times as long from
 * REQUESTS_MANY times that many (a ninth of the time), and catches up once they are fewer; with a
 * few it never pauses.
 */

/** Slots of the shared state: the requests in progress. */
const IN_PROGRESS = 0;
const STATE_SLOTS = 1;

/** Requests in progress from which processing pauses after each chunk. */
export const REQUESTS_MANY = 8;
/**
 * The longest pause after a chunk, in chunks' times: processing keeps at least a ninth of the
 * time under any load, so that nothing accepted waits for ever.
 */
export const PAUSE_CHUNKS_MAX = 8;

/** The shared memory of the count, made once per process and handed to the processing thread. */
export function createRequestsInProgressBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(STATE_SLOTS * Int32Array.BYTES_PER_ELEMENT);
}

/** Counts a request in progress; the returned function, called once, counts its end. */
export function requestBegins(buffer: SharedArrayBuffer): () => void {
  const state = new Int32Array(buffer);
  Atomics.add(state, IN_PROGRESS, 1);
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    Atomics.sub(state, IN_PROGRESS, 1);
  };
}

/** The requests in progress now. */
export function requestsInProgress(buffer: SharedArrayBuffer): number {
  return Atomics.load(new Int32Array(buffer), IN_PROGRESS);
}

/**
 * How long processing pauses after a chunk that took `chunkMs`: not at all under REQUESTS_MANY
 * requests in progress; from there `chunkMs` for every REQUESTS_MANY of them, at most
 * PAUSE_CHUNKS_MAX times `chunkMs`.
 */
export function processingPauseMs(buffer: SharedArrayBuffer, chunkMs: number): number {
  const inProgress = requestsInProgress(buffer);
  if (inProgress < REQUESTS_MANY) return 0;
  return chunkMs * Math.min(PAUSE_CHUNKS_MAX, inProgress / REQUESTS_MANY);
}
