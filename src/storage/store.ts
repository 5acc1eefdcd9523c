/**
 * The one face of storage for the rest of the service (composition, main, the CLI, `/readyz`):
 * open a store by its `DATABASE_URL`, and the `Store` every adapter is built on. What each
 * dialect needs lives in `sqlite/` and `postgres/`; migrating is `migrations/index.ts`, creating
 * a missing PostgreSQL database `postgres/ensure-database.ts`.
 */
import type SqliteDatabase from 'better-sqlite3';
import { type Kysely, sql, type Transaction } from 'kysely';
import { byDialect, type Dialect, type DialectAdapter } from './dialect-adapter.js';
import { postgresAdapter } from './postgres/adapter.js';
import { openPostgres, type PostgresOptions } from './postgres/pool.js';
import type { Database } from './schema.js';
import { sqliteAdapter } from './sqlite/adapter.js';
import { SqliteGroupCommit } from './sqlite/group-commit.js';
import { openSqlite, type SqliteOptions } from './sqlite/open.js';

export { byDialect, type Dialect, type DialectAdapter } from './dialect-adapter.js';
export {
  DATABASE_CONNECT_TIMEOUT_MS_DEFAULT,
  DATABASE_STATEMENT_TIMEOUT_MS_DEFAULT,
} from './postgres/pool.js';

/**
 * An open store: the Kysely instance every adapter uses, which dialect it speaks, and, for
 * SQLite, the underlying connection for the few bulk statements that are much faster as a
 * prepared statement loop (records of a chunk). Kysely serialises SQLite work on that one
 * connection, so raw statements issued inside a Kysely transaction belong to it.
 */
export interface Store {
  db: Kysely<Database>;
  dialect: Dialect;
  /** What the dialect says its own way (`dialect-adapter.ts`): the one place the adapters of the ports ask. */
  adapter: DialectAdapter;
  sqlite: SqliteDatabase.Database | undefined;
  /**
   * SQLite: the shared memory of the turn to write, for the other threads of this process that
   * open the same file (`StoreOptions.sqliteWriteTurn`).
   */
  sqliteWriteTurn: SharedArrayBuffer | undefined;
  /**
   * SQLite: the short writes of this connection that share their commit when they ask at the
   * same time (`writeTogether`).
   */
  sqliteGroupCommit: SqliteGroupCommit | undefined;
  close(): Promise<void>;
}

/** How a store is opened; `sqliteWriteTurn` is for SQLite, the others for PostgreSQL. */
export interface StoreOptions extends PostgresOptions, SqliteOptions {}

/**
 * Opens the store named by a `DATABASE_URL`: `sqlite:PATH`, `sqlite::memory:` or
 * `postgres://...`. SQLite files are created with their folder, in WAL mode
 * with every commit on the disk before the write returns (`sqlite/open.ts`), so that an answered
 * write survives a crash of the process or the machine. Does not migrate; call `migrateToLatest`. Opening a PostgreSQL store does not
 * connect yet; call `ensureDatabase` first to create a missing database and to turn an
 * unreachable server into a one-line error. On PostgreSQL, a lost connection or one that does
 * not answer within the timeouts of `options` fails the query with `StoreUnavailableError`,
 * never the process; the next query opens a new connection.
 */
export function openStore(databaseUrl: string, options: StoreOptions = {}): Store {
  if (databaseUrl.startsWith('sqlite:')) {
    const { db, sqlite, sqliteWriteTurn, walSync } = openSqlite(databaseUrl.slice('sqlite:'.length), options);
    return {
      db,
      dialect: 'sqlite',
      adapter: sqliteAdapter,
      sqlite,
      sqliteWriteTurn,
      sqliteGroupCommit: new SqliteGroupCommit(db, sqliteWriteTurn, walSync),
      close: async () => {
        await db.destroy();
        await walSync?.close();
      },
    };
  }
  const db = openPostgres(databaseUrl, options);
  return {
    db,
    dialect: 'postgres',
    adapter: postgresAdapter,
    sqlite: undefined,
    sqliteWriteTurn: undefined,
    sqliteGroupCommit: undefined,
    close: () => db.destroy(),
  };
}

/**
 * Runs `body` in a transaction of its own on PostgreSQL. On SQLite, where a commit waits for the
 * file to reach the disk on the thread that commits, in the next group of the connection's writes
 * asked at the same time (`sqlite/group-commit.ts`): each inside a savepoint of its own, one
 * commit for all, none answered before it. For the writes of requests that many clients send at
 * once (chunks, sessions opened and closed, tokens); `rows` is the write's size, which bounds the
 * group.
 */
export function writeTogether<T>(
  store: Store,
  rows: number,
  body: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  const group = store.sqliteGroupCommit;
  return group === undefined ? store.db.transaction().execute(body) : group.write(rows, body);
}

/**
 * A write of one statement (`body` runs one): on PostgreSQL it commits by itself, one round trip;
 * on SQLite in the next group of the connection's writes, as `writeTogether`.
 */
export function writeStatement<T>(
  store: Store,
  rows: number,
  body: (db: Kysely<Database>) => Promise<T>,
): Promise<T> {
  const group = store.sqliteGroupCommit;
  return group === undefined ? body(store.db) : group.write(rows, body);
}

/**
 * What a PostgreSQL server lacks that the service relies on, as sentences for the start log:
 * with autovacuum off, no table is ever analysed or vacuumed, so the planner guesses at sizes
 * and the indexes of the processing queue keep every row ever processed. Empty on SQLite.
 */
export async function serverAdvice(store: Store): Promise<string[]> {
  return byDialect(store.dialect, { postgres: postgresAdvice, sqlite: async () => [] })(store);
}

async function postgresAdvice(store: Store): Promise<string[]> {
  const { rows } = await sql<{
    autovacuum: string;
  }>`select current_setting('autovacuum') as autovacuum`.execute(store.db);
  return rows[0]?.autovacuum === 'off'
    ? [
        'PostgreSQL runs with autovacuum off: tables are never analysed or vacuumed, so reads and processing slow down as data grows; turn it on (the server default) or run VACUUM ANALYZE regularly',
      ]
    : [];
}
