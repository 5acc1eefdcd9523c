import { setTimeout as sleep } from 'node:timers/promises';
import { threadId } from 'node:worker_threads';
import { StoreUnavailableError } from '../errors.js';

/**
 * Slots of the shared state: who holds the turn (0: nobody), how many priority writers wait for
 * it, and how many more priority writes are queued behind those (`queueWrites`).
 */
const HOLDER = 0;
const PRIORITY_WAITING = 1;
const PRIORITY_QUEUED = 2;
const NOBODY = 0;
const STATE_SLOTS = 3;
/**
 * Writers with priority waiting at once (for the turn, or queued behind one that waits for it)
 * from which a writer without priority leaves the turn for twice as long as its last hold rather
 * than as long: a queue that long is many clients sending chunks at once, whose answers wait on
 * the writes, while a few clients are served well with processing keeping half the turn.
 */
const PRIORITY_QUEUE_LONG = 8;

/** The shared memory of a write turn, made once per process and handed to every thread's store. */
export function createSqliteWriteTurnBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(STATE_SLOTS * Int32Array.BYTES_PER_ELEMENT);
}

/** A thread's mark in the holder slot: its `threadId` plus one, so that no thread marks 0. */
function markOf(thread: number): number {
  return thread + 1;
}

/** Frees the turn if `mark` holds it, and wakes the writers waiting for it. */
function release(state: Int32Array, mark: number): void {
  if (Atomics.compareExchange(state, HOLDER, mark, NOBODY) === mark) Atomics.notify(state, HOLDER);
}

/** The writers with priority waiting for the turn, or queued behind one that does. */
function priorityWriters(state: Int32Array): number {
  return Atomics.load(state, PRIORITY_WAITING) + Atomics.load(state, PRIORITY_QUEUED);
}

/** Waits until `state[index]` is no longer `value`, or the deadline passes. */
async function waitWhile(state: Int32Array, index: number, value: number, deadlineMs: number): Promise<void> {
  const waiting = Atomics.waitAsync(state, index, value, Math.max(0, deadlineMs - Date.now()));
  if (waiting.async) await waiting.value;
}

/**
 * The turn to write to one SQLite file, shared by the threads of one process (the event loop and
 * the processing thread, each with its own connection; docs/adr/0013-processing-thread.md).
 *
 * SQLite lets one connection write at a time. A connection that finds the lock taken retries
 * in its busy handler, which sleeps 1, 2, 5, 10 … up to 100 ms between tries, so it goes on
 * sleeping for up to that long after the lock was freed; better-sqlite3 sleeps on the thread
 * that asked, the event loop included. Threads of one process take this turn first instead, in
 * shared memory (`Atomics`): a writer waits without blocking its event loop (`Atomics.waitAsync`)
 * and starts the moment the other one is done. Writers with priority (the event loop, which
 * answers ingestion) go before waiting writers without it (the processing thread), so a backlog
 * never makes a chunk wait for more than the one write in progress. A writer without priority
 * whose write kept one with priority waiting then leaves the turn for as long as it held it, or
 * twice as long when `PRIORITY_QUEUE_LONG` writers with priority wait (writes queued for the
 * next group commit count, `queueWrites`), so under a steady load of
 * chunks the processing thread takes at most about half the turn's time, a third under many
 * clients (with 64 clients on SQLite it had taken about 55 %, and chunks waited for it; with
 * half, chunk answers had a p99 of 614 ms, with a third 496 ms; a third for every load cost
 * business events sent by 4 clients a tenth of their end-to-end speed); it has all of it when
 * nothing else writes.
 *
 * The writers of one thread line up first, in the order they asked (first come, first served),
 * and only the first of them waits in shared memory: a writer that asks just as the turn is
 * given back cannot go before those already waiting, and giving the turn back wakes one writer
 * of the thread, not every one (with 64 clients, waking all of them on every write cost more
 * than the writes).
 *
 * Other processes on the same file (the command line's store commands) still meet SQLite's own
 * lock and busy timeout.
 */
export class SqliteWriteTurn {
  readonly #state: Int32Array;
  readonly #priority: boolean;
  readonly #timeoutMs: number;
  /** This thread's mark in the holder slot. */
  readonly #self = markOf(threadId);
  /** Whether a writer of this thread holds the turn or is first in line for it. */
  #lineTaken = false;
  /** The writers of this thread waiting behind it, in the order they asked. */
  readonly #line: Array<() => void> = [];
  /** When this thread last took the turn (`performance.now()`). */
  #takenAtMs = 0;
  /**
   * Without priority: how long to leave the turn to others before taking it again, because the
   * last hold kept writers with priority waiting (as long as that hold lasted).
   */
  #yieldUntilMs = 0;

  constructor(buffer: SharedArrayBuffer, options: { priority: boolean; timeoutMs: number }) {
    this.#state = new Int32Array(buffer);
    this.#priority = options.priority;
    this.#timeoutMs = options.timeoutMs;
  }

  /** Waits for the turn; fails with StoreUnavailableError when another writer keeps it past the timeout. */
  async take(): Promise<void> {
    const deadlineMs = Date.now() + this.#timeoutMs;
    const state = this.#state;
    // A writer with priority counts as waiting from the moment it asks, in line or not.
    if (this.#priority) Atomics.add(state, PRIORITY_WAITING, 1);
    try {
      await this.#takeLine(deadlineMs);
      try {
        const yieldMs = this.#yieldUntilMs - performance.now();
        if (yieldMs > 0) await sleep(Math.min(yieldMs, Math.max(0, deadlineMs - Date.now())));
        await this.#takeShared(deadlineMs);
        this.#takenAtMs = performance.now();
      } catch (error) {
        this.#passLine();
        throw error;
      }
    } finally {
      if (this.#priority) {
        Atomics.sub(state, PRIORITY_WAITING, 1);
        Atomics.notify(state, PRIORITY_WAITING);
      }
    }
  }

  /**
   * Counts `count` writes with priority (a negative count: no longer) that wait in a queue of
   * their own behind a writer that takes the turn for them, such as the writes waiting for the
   * next group of `group-commit.ts`: they do not take the turn themselves, but a writer without
   * priority that kept them waiting yields for longer when they are many (`PRIORITY_QUEUE_LONG`).
   */
  static queueWrites(buffer: SharedArrayBuffer, count: number): void {
    Atomics.add(new Int32Array(buffer), PRIORITY_QUEUED, count);
  }

  /** The writers with priority that wait for the turn of `buffer`, or queued behind one that does. */
  static priorityWriters(buffer: SharedArrayBuffer): number {
    return priorityWriters(new Int32Array(buffer));
  }

  /** Gives the turn back; the first writer of this thread in line, if any, goes next. */
  give(): void {
    const state = this.#state;
    const waiting = this.#priority ? 0 : priorityWriters(state);
    if (waiting > 0) {
      const now = performance.now();
      this.#yieldUntilMs = now + (waiting >= PRIORITY_QUEUE_LONG ? 2 : 1) * (now - this.#takenAtMs);
    }
    release(state, this.#self);
    this.#passLine();
  }

  /** Waits until this writer is first in this thread's line. */
  async #takeLine(deadlineMs: number): Promise<void> {
    if (!this.#lineTaken) {
      this.#lineTaken = true;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          const at = this.#line.indexOf(next);
          if (at >= 0) this.#line.splice(at, 1);
          reject(this.#unavailable());
        },
        Math.max(0, deadlineMs - Date.now()),
      );
      const next = () => {
        clearTimeout(timer);
        resolve();
      };
      this.#line.push(next);
    });
  }

  /** The next writer of this thread in line goes first, or the line is free. */
  #passLine(): void {
    const next = this.#line.shift();
    if (next === undefined) this.#lineTaken = false;
    else next();
  }

  #unavailable(): StoreUnavailableError {
    return new StoreUnavailableError(
      `the SQLite database stayed locked by another writer of this process for ${this.#timeoutMs} ms`,
    );
  }

  /** Waits for the turn shared with the other threads. */
  async #takeShared(deadlineMs: number): Promise<void> {
    const state = this.#state;
    for (;;) {
      if (Date.now() > deadlineMs) throw this.#unavailable();
      const priorityWaiting = this.#priority ? 0 : Atomics.load(state, PRIORITY_WAITING);
      if (priorityWaiting > 0) {
        await waitWhile(state, PRIORITY_WAITING, priorityWaiting, deadlineMs);
        continue;
      }
      const holder = Atomics.compareExchange(state, HOLDER, NOBODY, this.#self);
      if (holder === NOBODY) return;
      await waitWhile(state, HOLDER, holder, deadlineMs);
    }
  }

  /**
   * Frees the turn of a thread that ended while holding it (its connection, closed with the
   * thread, no longer holds SQLite's lock). `thread` is that thread's `threadId`.
   */
  static freeHeldBy(buffer: SharedArrayBuffer, thread: number): void {
    release(new Int32Array(buffer), markOf(thread));
  }
}
