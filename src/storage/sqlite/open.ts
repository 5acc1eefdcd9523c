import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { registerDecimalAdd, registerDecimalSum } from './decimal-sum.js';
import { ImmediateSqliteDialect } from './immediate-dialect.js';
import { withStatementCache } from './statement-cache.js';
import { WalSync } from './wal-sync.js';
import { createSqliteWriteTurnBuffer, SqliteWriteTurn } from './write-turn.js';

/**
 * How long a SQLite writer waits before giving up, in two places that must agree: SQLite's own
 * `busy_timeout` (the file's lock, held by another process or connection) and the process's
 * turn to write (`SqliteWriteTurn`, held by another thread of this process). A write that waits
 * longer on either fails with a store error, answered 503.
 */
const SQLITE_WAIT_MS = 10_000;

/**
 * Copies what the WAL holds into the database file, as far as no reader still needs older pages,
 * without waiting for any writer (`PASSIVE`). A checkpoint that cannot run now (another one runs)
 * or fails is left to the next one: the WAL keeps every commit until then.
 */
function checkpoint(sqlite: SqliteDatabase.Database): void {
  try {
    sqlite.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // The next commit's checkpoint tries again; a fault of the file shows in the next statement.
  }
}

/** How a SQLite store is opened. */
export interface SqliteOptions {
  /**
   * SQLite: the turn to write shared with another thread's store on the same file (its
   * `Store.sqliteWriteTurn`), and whether this connection's writes go first. A store opened
   * without one makes its own, with priority.
   */
  sqliteWriteTurn?: { buffer: SharedArrayBuffer; priority: boolean };
}

/**
 * Opens the SQLite file at `path` (`:memory:` for none), creating its folder: WAL mode with every
 * commit on the disk before the write returns (synced in the commit, or after it off the event
 * loop for the connection with priority, `wal-sync.ts`), foreign keys on, `decimal_sum` and `decimal_add` registered, every write after the
 * process's turn to write (`immediate-dialect.ts`), and prepared statements reused
 * (`statement-cache.ts`).
 */
export function openSqlite(
  path: string,
  options: SqliteOptions,
): {
  db: Kysely<Database>;
  sqlite: SqliteDatabase.Database;
  sqliteWriteTurn: SharedArrayBuffer;
  walSync: WalSync | undefined;
} {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new SqliteDatabase(path);
  sqlite.pragma('journal_mode = WAL');
  const { buffer, priority } = options.sqliteWriteTurn ?? {
    buffer: createSqliteWriteTurnBuffer(),
    priority: true,
  };
  // The event loop's commits do not wait for the disk on the event loop: its connection commits
  // without a sync, and each write returns once a sync of the log on libuv's pool has followed
  // its commit (`wal-sync.ts`). Other threads sync in the commit.
  const walSync = priority && path !== ':memory:' && path !== '' ? new WalSync(path) : undefined;
  sqlite.pragma(walSync === undefined ? 'synchronous = FULL' : 'synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${SQLITE_WAIT_MS}`);
  registerDecimalSum(sqlite);
  registerDecimalAdd(sqlite);
  const turn = new SqliteWriteTurn(buffer, { priority, timeoutMs: SQLITE_WAIT_MS });
  // SQLite checkpoints the WAL in the commit that finds it over 1,000 pages, before that commit
  // returns: with the turn still held, and on the event loop when the event loop committed. A
  // writer without priority (the processing thread) checkpoints after each of its commits
  // instead, with the turn given back, so the event loop's writes go on meanwhile and its own
  // commits rarely find the WAL that long; the event loop keeps SQLite's automatic checkpoints
  // for when no such thread runs (docs/adr/0028-wal-checkpoints-off-the-write-turn.md).
  if (!priority) sqlite.pragma('wal_autocheckpoint = 0');
  const db = new Kysely<Database>({
    dialect: new ImmediateSqliteDialect(
      { database: withStatementCache(sqlite) },
      turn,
      priority
        ? walSync === undefined
          ? {}
          : { afterWrite: () => walSync.committed(), durable: () => walSync.sync() }
        : { afterWrite: () => checkpoint(sqlite) },
    ),
  });
  return { db, sqlite, sqliteWriteTurn: buffer, walSync };
}
