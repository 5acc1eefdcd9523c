import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, type Migration, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { add, type Decimal, decimal, toDecimalString, ZERO } from '../lib/decimal.js';
import * as initial from './migrations/0001-initial.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

/** How long a SQLite writer waits for the lock before giving up. */
const SQLITE_BUSY_TIMEOUT_MS = 10_000;
/** Connections per service instance in the PostgreSQL pool. */
const POSTGRES_POOL_SIZE_MAX = 10;

/**
 * An open store: the Kysely instance every adapter uses, which dialect it speaks, and, for
 * SQLite, the underlying connection for the few bulk statements that are much faster as a
 * prepared statement loop (records of a chunk). Kysely serialises SQLite work on that one
 * connection, so raw statements issued inside a Kysely transaction belong to it.
 */
export interface Store {
  db: Kysely<Database>;
  dialect: Dialect;
  sqlite: SqliteDatabase.Database | undefined;
  close(): Promise<void>;
}

/**
 * Opens the store named by a `DATABASE_URL` (contract section 1): `sqlite:PATH`,
 * `sqlite::memory:` or `postgres://...`. SQLite files are created with their folder, in WAL mode
 * with full synchronous commits, so that an answered write survives a crash of the process or
 * the machine. Does not migrate; call `migrateToLatest`.
 */
export function openStore(databaseUrl: string, onIdleError: (error: Error) => void = () => {}): Store {
  if (databaseUrl.startsWith('sqlite:')) {
    const path = databaseUrl.slice('sqlite:'.length);
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const sqlite = new SqliteDatabase(path);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = FULL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
    registerDecimalSum(sqlite);
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    return { db, dialect: 'sqlite', sqlite, close: () => db.destroy() };
  }
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: POSTGRES_POOL_SIZE_MAX,
    types: {
      // int8 (counters, serial ids) as JS numbers: every value we store is far below 2^53.
      // NUMERIC stays a string (the default), so amounts are never binary floats.
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === 20
          ? (value: string) => Number(value)
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle pooled connection that the server drops (restart, failover, admin termination)
  // emits 'error' on the pool; without a listener that would end the process. The pool has
  // already discarded the connection and the next query opens a new one.
  pool.on('error', (error) => onIdleError(error));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: 'postgres', sqlite: undefined, close: () => db.destroy() };
}

/**
 * `decimal_sum(text)`: an exact sum of decimal strings for SQLite, which has no decimal type
 * (its NUMERIC affinity means binary floats). PostgreSQL uses `sum` over `NUMERIC` instead.
 */
function registerDecimalSum(sqlite: SqliteDatabase.Database): void {
  sqlite.aggregate('decimal_sum', {
    start: () => ZERO,
    step: (total: Decimal, value: unknown) =>
      typeof value === 'string' ? add(total, decimal(value)) : total,
    result: (total: Decimal) => toDecimalString(total),
  });
}

/**
 * Runs every migration not yet applied, in order. Kysely's migrator takes a lock first, so
 * several instances starting at once on one PostgreSQL migrate exactly once.
 */
export async function migrateToLatest(store: Store): Promise<void> {
  const withDialect = (m: { up(db: Kysely<unknown>, dialect: Dialect): Promise<void> }): Migration => ({
    up: (db) => m.up(db, store.dialect),
  });
  const migrator = new Migrator({
    db: store.db,
    provider: { getMigrations: async () => ({ '0001-initial': withDialect(initial) }) },
  });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
}
