/**
 * Whether the service is stopping, in memory the main thread shares with the processing thread.
 * The thread's `stop` message waits for its event loop, which is busy for as long as a chunk's
 * work lasts (seconds, on a loaded machine where the thread runs at a lower priority); the flag
 * is read between two records, so the chunk in progress is given up at once, nothing of it
 * written, and a stop never waits for a chunk's work (docs/adr/0013-processing-thread.md).
 */

/** The shared memory of the flag, made once per process and handed to the processing thread. */
export function createStoppingFlag(): SharedArrayBuffer {
  return new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
}

/** Says that the service stops; for good. */
export function raiseStoppingFlag(buffer: SharedArrayBuffer): void {
  Atomics.store(new Int32Array(buffer), 0, 1);
}

/** Whether the service stops, read from `buffer` through a view made once: it is read per record. */
export function stoppingFlagReader(buffer: SharedArrayBuffer): () => boolean {
  const flag = new Int32Array(buffer);
  return () => Atomics.load(flag, 0) === 1;
}
