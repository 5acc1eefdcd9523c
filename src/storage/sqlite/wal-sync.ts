import { type FileHandle, open } from 'node:fs/promises';
import { messageOf, StoreUnavailableError } from '../errors.js';

/**
 * The write-ahead log of a SQLite file brought to the disk on a thread of libuv's pool, not on
 * the thread that committed (docs/adr/0033-sqlite-commits-synced-off-the-event-loop.md).
 *
 * A connection that commits with `synchronous = NORMAL` appends its transaction to the log and
 * returns without waiting for the disk; `sync()` then waits, without holding the event loop, until
 * everything appended so far is on the disk (`fdatasync` of the log). A write is answered only
 * after it: durable as with `synchronous = FULL`, where SQLite syncs the log in the commit itself.
 *
 * The connection reports each commit (`committed`). Syncs do not pile up: a caller whose commits
 * the running sync covers waits for it; the others wait for the one after it, which covers all
 * they committed and starts once the running one ends; a caller with nothing left to sync waits
 * for nothing.
 */
export class WalSync {
  readonly #path: string;
  #file: Promise<FileHandle> | undefined;
  /** The sync in progress, if any. */
  #running: Promise<void> | undefined;
  /** The sync that starts when the running one ends, shared by everyone who asked meanwhile. */
  #next: Promise<void> | undefined;
  /** Commits reported, those the running sync covers, and those the last sync that succeeded covered. */
  #commits = 0;
  #runningCovers = 0;
  #syncedCovers = 0;
  #closed = false;

  /** `databasePath` is the SQLite file; its log is the file beside it with `-wal` appended. */
  constructor(databasePath: string) {
    this.#path = `${databasePath}-wal`;
  }

  /**
   * Resolves once everything the connection committed before the call is on the disk; rejects
   * with `StoreUnavailableError` when the log could not be synced (an I/O error: the write's
   * outcome is then unknown, as when a commit fails that way).
   */
  sync(): Promise<void> {
    const wanted = this.#commits;
    if (this.#running === undefined) return this.#syncedCovers >= wanted ? Promise.resolve() : this.#start();
    if (this.#runningCovers >= wanted) return this.#running;
    this.#next ??= this.#running.then(
      () => this.#startNext(),
      () => this.#startNext(),
    );
    return this.#next;
  }

  /** A commit of the connection returned: the next sync must cover it. */
  committed(): void {
    this.#commits += 1;
  }

  /** Waits for the syncs asked for, then closes the log's handle. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([this.#running, this.#next]);
    const file = this.#file;
    this.#file = undefined;
    if (file !== undefined) await (await file.catch(() => undefined))?.close();
  }

  #startNext(): Promise<void> {
    this.#next = undefined;
    return this.#start();
  }

  #start(): Promise<void> {
    const covers = this.#commits;
    const running = this.#fdatasync()
      .then(() => {
        this.#syncedCovers = Math.max(this.#syncedCovers, covers);
      })
      .finally(() => {
        if (this.#running === running) this.#running = undefined;
      });
    this.#running = running;
    this.#runningCovers = covers;
    return running;
  }

  async #fdatasync(): Promise<void> {
    if (this.#closed) throw new StoreUnavailableError('the SQLite store is closed');
    try {
      // The log exists from the first commit on, and SQLite keeps the same file while the
      // connection is open (a checkpoint truncates or rewrites it, it does not replace it).
      this.#file ??= open(this.#path, 'r');
      const file = await this.#file;
      await file.datasync();
    } catch (error) {
      // The next sync opens the log again.
      const failed = this.#file;
      this.#file = undefined;
      void failed?.then((file) => file.close()).catch(() => undefined);
      throw new StoreUnavailableError(`the SQLite write-ahead log could not be synced: ${messageOf(error)}`, {
        cause: error,
      });
    }
  }
}
