import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { registerDecimalAdd, registerDecimalSum } from './decimal-sum.js';
import { ImmediateSqliteDialect } from './immediate-dialect.js';
import { withStatementCache } from './statement-cache.js';
import { createSqliteWriteTurnBuffer, SqliteWriteTurn } from './write-turn.js';

/**
 * How long a SQLite writer waits before giving up, in two places that must agree: SQLite's own
 * `busy_timeout` (the file's lock, held by another process or connection) and the process's
 * turn to write (`SqliteWriteTurn`, held by another thread of this process). A write that waits
 * longer on either fails with a store error, answered 503.
 */
const SQLITE_WAIT_MS = 10_000;

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
 * Opens the SQLite file at `path` (`:memory:` for none), creating its folder: WAL mode with full
 * synchronous commits, foreign keys on, `decimal_sum` and `decimal_add` registered, every write after the
 * process's turn to write (`immediate-dialect.ts`), and prepared statements reused
 * (`statement-cache.ts`).
 */
export function openSqlite(
  path: string,
  options: SqliteOptions,
): { db: Kysely<Database>; sqlite: SqliteDatabase.Database; sqliteWriteTurn: SharedArrayBuffer } {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new SqliteDatabase(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${SQLITE_WAIT_MS}`);
  registerDecimalSum(sqlite);
  registerDecimalAdd(sqlite);
  const { buffer, priority } = options.sqliteWriteTurn ?? {
    buffer: createSqliteWriteTurnBuffer(),
    priority: true,
  };
  const turn = new SqliteWriteTurn(buffer, { priority, timeoutMs: SQLITE_WAIT_MS });
  const db = new Kysely<Database>({
    dialect: new ImmediateSqliteDialect({ database: withStatementCache(sqlite) }, turn),
  });
  return { db, sqlite, sqliteWriteTurn: buffer };
}
