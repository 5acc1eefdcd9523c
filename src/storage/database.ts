// Over 500 lines on purpose for now: opening, migrating and classifying the errors of both
// dialects, which share the error codes and the driver wrappers. Splitting it by dialect belongs
// with the split of storage/ by concern.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { finished } from 'node:stream/promises';
import SqliteDatabase from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  type Migration,
  Migrator,
  type PostgresCursor,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQueryResult,
  type QueryResult,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { add, type Decimal, decimal, toDecimalString, ZERO } from '../lib/decimal.js';
import { StoreUnavailableError } from './errors.js';
import * as initial from './migrations/0001-initial.js';
import * as auditDeleted from './migrations/0002-audit-deleted.js';
import * as chunkOutcome from './migrations/0003-chunk-outcome.js';
import * as adminSessions from './migrations/0004-admin-sessions.js';
import * as authFailures from './migrations/0005-auth-failures.js';
import * as refreshAnswersAndRequestCounts from './migrations/0006-refresh-answers-and-request-counts.js';
import * as originJournalOnce from './migrations/0007-origin-journal-once.js';
import * as csrfDerived from './migrations/0008-csrf-derived.js';
import * as rejectedChunksUncounted from './migrations/0009-rejected-chunks-uncounted.js';
import * as adminOneTimeViews from './migrations/0010-admin-one-time-views.js';
import type { Database } from './schema.js';
import { createSqliteWriteTurnBuffer, SqliteWriteTurn } from './sqlite-write-turn.js';

export { StoreUnavailableError };

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
  /**
   * SQLite: the shared memory of the turn to write, for the other threads of this process that
   * open the same file (`StoreOptions.sqliteWriteTurn`).
   */
  sqliteWriteTurn: SharedArrayBuffer | undefined;
  close(): Promise<void>;
}

/** Default longest wait for a PostgreSQL connection, new or from the pool (`DATABASE_CONNECT_TIMEOUT_MS`). */
export const DATABASE_CONNECT_TIMEOUT_MS_DEFAULT = 5_000;
/**
 * Default longest a PostgreSQL statement may run, and a transaction may sit idle
 * (`DATABASE_STATEMENT_TIMEOUT_MS`).
 */
export const DATABASE_STATEMENT_TIMEOUT_MS_DEFAULT = 30_000;
/**
 * How much longer than the statement timeout the client waits for an answer before it gives the
 * connection up: a server that still answers cancels the statement first, with a clean error.
 */
const QUERY_TIMEOUT_GRACE_MS = 1_000;
/** Idle time before TCP keepalive probes start, so a silently dead peer is found. */
const POSTGRES_KEEPALIVE_INITIAL_DELAY_MS = 10_000;

/** How a store is opened; `sqliteWriteTurn` is for SQLite, the others for PostgreSQL. */
export interface StoreOptions {
  /** Told once of each pooled connection lost while idle (the pool has already dropped it). */
  onIdleError?: (error: Error) => void;
  /** Longest wait for a connection, new or from the pool, in milliseconds. */
  connectTimeoutMs?: number;
  /** Longest a statement may run, and a transaction may sit idle, in milliseconds. */
  statementTimeoutMs?: number;
  /**
   * SQLite: the turn to write shared with another thread's store on the same file (its
   * `Store.sqliteWriteTurn`), and whether this connection's writes go first. A store opened
   * without one makes its own, with priority.
   */
  sqliteWriteTurn?: { buffer: SharedArrayBuffer; priority: boolean };
}

/**
 * Opens the store named by a `DATABASE_URL`: `sqlite:PATH`, `sqlite::memory:` or
 * `postgres://...`. SQLite files are created with their folder, in WAL mode
 * with full synchronous commits, so that an answered write survives a crash of the process or
 * the machine. Does not migrate; call `migrateToLatest`. Opening a PostgreSQL store does not
 * connect yet; call `ensureDatabase` first to create a missing database and to turn an
 * unreachable server into a one-line error. On PostgreSQL, a lost connection or one that does
 * not answer within the timeouts of `options` fails the query with `StoreUnavailableError`,
 * never the process; the next query opens a new connection.
 */
export function openStore(databaseUrl: string, options: StoreOptions = {}): Store {
  if (databaseUrl.startsWith('sqlite:')) {
    const path = databaseUrl.slice('sqlite:'.length);
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const sqlite = new SqliteDatabase(path);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = FULL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
    registerDecimalSum(sqlite);
    const { buffer, priority } = options.sqliteWriteTurn ?? {
      buffer: createSqliteWriteTurnBuffer(),
      priority: true,
    };
    const turn = new SqliteWriteTurn(buffer, { priority, timeoutMs: SQLITE_BUSY_TIMEOUT_MS });
    const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database: sqlite }, turn) });
    return { db, dialect: 'sqlite', sqlite, sqliteWriteTurn: buffer, close: () => db.destroy() };
  }
  const statementTimeoutMs = options.statementTimeoutMs ?? DATABASE_STATEMENT_TIMEOUT_MS_DEFAULT;
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: POSTGRES_POOL_SIZE_MAX,
    connectionTimeoutMillis: options.connectTimeoutMs ?? DATABASE_CONNECT_TIMEOUT_MS_DEFAULT,
    statement_timeout: statementTimeoutMs,
    idle_in_transaction_session_timeout: statementTimeoutMs,
    query_timeout: statementTimeoutMs + QUERY_TIMEOUT_GRACE_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: POSTGRES_KEEPALIVE_INITIAL_DELAY_MS,
    types: {
      // int8 (counters, serial ids) as JS numbers: every value we store is far below 2^53.
      // NUMERIC stays a string (the default), so amounts are never binary floats.
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === 20
          ? (value: string) => Number(value)
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // A connection that fails emits 'error' on its client; with no listener that would end the
  // process. The failure reaches its caller as the rejected query (checked out) or through the
  // pool's 'error' below (idle), so the client's own listener has nothing left to do.
  pool.on('connect', (client) => client.on('error', () => {}));
  // An idle pooled connection that the server drops (restart, failover, admin termination)
  // emits 'error' on the pool. The pool has already discarded the connection.
  const onIdleError = options.onIdleError ?? (() => {});
  pool.on('error', (error) => onIdleError(error));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: guardedPool(pool) }) });
  return {
    db,
    dialect: 'postgres',
    sqlite: undefined,
    sqliteWriteTurn: undefined,
    close: () => db.destroy(),
  };
}

/**
 * SQLite transactions that take the write lock when they begin (`BEGIN IMMEDIATE`), after the
 * process's turn to write (`SqliteWriteTurn`). A deferred transaction that reads first and writes
 * later cannot wait for the lock if another connection wrote in between (SQLITE_BUSY at once,
 * busy_timeout or not); with the processing thread's own connection
 * (docs/adr/0013-processing-thread.md) every transaction waits its turn instead. A statement
 * outside a transaction that may write takes the turn for itself.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #turn: SqliteWriteTurn;

  constructor(config: SqliteDialectConfig, turn: SqliteWriteTurn) {
    super(config);
    this.#config = config;
    this.#turn = turn;
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config, this.#turn);
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  readonly #turn: SqliteWriteTurn;
  /** Whether this connection holds the turn for a transaction. */
  #inTransaction = false;

  constructor(config: SqliteDialectConfig, turn: SqliteWriteTurn) {
    super(config);
    this.#turn = turn;
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    return {
      executeQuery: async <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
        // Reads never wait: in WAL mode they see the last commit while another connection writes.
        if (this.#inTransaction || query.query.kind === 'SelectQueryNode')
          return connection.executeQuery<R>(query);
        await this.#turn.take();
        try {
          return await connection.executeQuery<R>(query);
        } finally {
          this.#turn.give();
        }
      },
      streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
    };
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    this.#inTransaction = true;
    await this.#turn.take().catch((error: unknown) => {
      this.#inTransaction = false;
      throw error;
    });
    try {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    } catch (error) {
      this.#endTransaction();
      throw error;
    }
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    // A failed commit is followed by a rollback, which gives the turn back.
    await connection.executeQuery(CompiledQuery.raw('commit'));
    this.#endTransaction();
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await connection.executeQuery(CompiledQuery.raw('rollback'));
    } finally {
      this.#endTransaction();
    }
  }

  #endTransaction(): void {
    this.#inTransaction = false;
    this.#turn.give();
  }
}

/** SQLSTATEs that say the server is going away, refuses connections, or gave up waiting. */
const SERVER_UNAVAILABLE_STATES = new Set([
  '57P01', // admin_shutdown: terminated by an administrator or a fast shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or in recovery
  '53300', // too_many_connections
  '57014', // query_canceled: only our statement_timeout cancels statements
  '25P03', // idle_in_transaction_session_timeout
]);
/** Node socket error codes of a connection that cannot be made or was lost. */
const CONNECTION_LOST_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
/**
 * The messages of the errors node-postgres raises itself, without a code: a connection ended
 * or timed out, the pool waited too long, no answer within `query_timeout`, a client that
 * already failed.
 */
const DRIVER_UNAVAILABLE_MESSAGE =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Client was closed)/;

/** Whether a driver error means the store cannot be reached or did not answer in time. */
function isUnavailableError(error: unknown): boolean {
  const code = errorCodeOf(error);
  if (code !== undefined && (code.startsWith('08') || SERVER_UNAVAILABLE_STATES.has(code))) return true;
  if (code !== undefined && CONNECTION_LOST_CODES.has(code)) return true;
  return error instanceof Error && DRIVER_UNAVAILABLE_MESSAGE.test(error.message);
}

/**
 * Error codes of faults that may pass, so the same work may succeed when tried again: a
 * serialization failure or deadlock (PostgreSQL `40001`, `40P01`), a lock not available
 * (`55P03`), a unique violation on PostgreSQL (`23505`: a concurrent writer won, and the next
 * attempt sees its rows), SQLite's lock held too long (`SQLITE_BUSY`, `SQLITE_LOCKED`). On
 * SQLite one writer holds the lock at a time, so a unique violation there is no race and is
 * not retried.
 */
const RETRYABLE_ERROR_CODES: ReadonlySet<string> = new Set([
  '40001',
  '40P01',
  '55P03',
  '23505',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
]);

/** Whether work that failed with `error` may succeed when tried again: the store was unreachable, or one of RETRYABLE_ERROR_CODES. */
export function isRetryableStoreError(error: unknown): boolean {
  if (error instanceof StoreUnavailableError) return true;
  const code = errorCodeOf(error);
  return code !== undefined && RETRYABLE_ERROR_CODES.has(code);
}

/** The error a query or a connection attempt fails with: unavailability as StoreUnavailableError. */
function storeErrorOf(error: unknown): unknown {
  if (!isUnavailableError(error)) return error;
  return new StoreUnavailableError(
    `PostgreSQL is unreachable or did not answer in time (${messageOf(error)})`,
    { cause: error },
  );
}

/**
 * The rows of a `COPY table (columns) FROM STDIN` statement in PostgreSQL's text format, passed
 * as the statement's one parameter: the pooled connection streams them to the server instead of
 * binding them (`storage/bulk-insert.ts`).
 */
export class CopyData {
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }
}

/**
 * A pooled connection as Kysely uses it. A failure that means the store is unavailable becomes
 * `StoreUnavailableError`; the connection then fails every later query at once and is closed
 * when released rather than handed out again: after a timeout its statement may still be
 * running, or its peer be gone.
 */
class GuardedClient implements PostgresPoolClient {
  readonly #client: pg.PoolClient;
  #failure: StoreUnavailableError | undefined;

  constructor(client: pg.PoolClient) {
    this.#client = client;
  }

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(
    sqlOrCursor: string | PostgresCursor<R>,
    parameters: ReadonlyArray<unknown> = [],
  ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    // Kysely passes a cursor only when the dialect configures one; this store configures none.
    if (typeof sqlOrCursor !== 'string') throw new TypeError('this store does not stream through cursors');
    return this.#run<R>(sqlOrCursor, parameters);
  }

  async #run<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    if (this.#failure !== undefined) throw this.#failure;
    try {
      const [data] = parameters;
      if (parameters.length === 1 && data instanceof CopyData) return await this.#copy<R>(sql, data);
      const result = await this.#client.query<R & pg.QueryResultRow>(sql, [...parameters]);
      return {
        command: result.command as PostgresQueryResult<R>['command'],
        rowCount: result.rowCount ?? 0,
        rows: result.rows,
      };
    } catch (error) {
      const storeError = storeErrorOf(error);
      if (storeError instanceof StoreUnavailableError) this.#failure = storeError;
      throw storeError;
    }
  }

  /** Runs a `COPY … FROM STDIN` statement with its rows; a failure on either side rejects. */
  async #copy<R>(sql: string, data: CopyData): Promise<PostgresQueryResult<R>> {
    const stream = this.#client.query(copyFrom(sql));
    stream.end(data.text);
    await finished(stream);
    return { command: 'COPY' as PostgresQueryResult<R>['command'], rowCount: stream.rowCount, rows: [] };
  }

  release(): void {
    this.#client.release(this.#failure);
  }
}

/** The pool as Kysely uses it: each pg client guarded, connection failures as StoreUnavailableError. */
function guardedPool(pool: pg.Pool): PostgresPool {
  const guarded = new WeakMap<pg.PoolClient, GuardedClient>();
  return {
    async connect() {
      const client = await pool.connect().catch((error: unknown) => {
        throw storeErrorOf(error);
      });
      const known = guarded.get(client);
      if (known !== undefined) return known;
      const fresh = new GuardedClient(client);
      guarded.set(client, fresh);
      return fresh;
    },
    end: () => pool.end(),
  };
}

/** How long start-up waits for PostgreSQL to accept a connection before saying it cannot. */
const POSTGRES_CONNECT_TIMEOUT_MS = 10_000;
/** The database every PostgreSQL server has, used to create the service's own one. */
const POSTGRES_MAINTENANCE_DATABASE = 'postgres';

/** SQLSTATE and Node error codes that `ensureDatabase` tells apart. */
const DATABASE_MISSING = '3D000';
const DATABASE_EXISTS = '42P04';
const UNIQUE_VIOLATION = '23505';
const INSUFFICIENT_PRIVILEGE = '42501';
const LOGIN_REFUSED = new Set(['28P01', '28000']);
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

function errorCodeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}

/** A PostgreSQL identifier in double quotes, any double quote in it doubled. */
function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Connects, runs `work`, and always disconnects; connection failures become one-line errors. */
async function withClient<T>(url: URL, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({
    connectionString: url.toString(),
    connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
  });
  // A connection the server drops while we hold it must not end the process.
  client.on('error', () => {});
  try {
    await client.connect();
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Makes sure the database named by a `postgres://` `DATABASE_URL` exists, before `openStore` and
 * `migrateToLatest` use it. When it does not, connects to the `postgres` maintenance database of
 * the same server as the same user and creates it (`CREATE DATABASE`, the name quoted as an
 * identifier); another instance creating it at the same time counts as existing. Returns
 * whether this call created it. SQLite URLs need nothing (`openStore` creates the file) and
 * return `{ created: false }`. Errors: `StoreUnavailableError`, whose one-line message says
 * what to do, when the server cannot be reached, refuses the login, or the database is missing
 * and the user may not create it.
 */
export async function ensureDatabase(databaseUrl: string): Promise<{ created: boolean; database: string }> {
  if (databaseUrl.startsWith('sqlite:'))
    return { created: false, database: databaseUrl.slice('sqlite:'.length) };
  const url = new URL(databaseUrl);
  const database =
    decodeURIComponent(url.pathname.slice(1)) || decodeURIComponent(url.username) || 'postgres';
  const server = `${url.hostname || 'localhost'}:${url.port || '5432'}`;
  const user = decodeURIComponent(url.username) || 'the default user';
  const explain = (error: unknown, what: string): StoreUnavailableError => {
    const code = errorCodeOf(error);
    if (code !== undefined && LOGIN_REFUSED.has(code)) {
      return new StoreUnavailableError(
        `PostgreSQL at ${server} refused the login of ${user} (${messageOf(error)}); check the user and password in DATABASE_URL`,
      );
    }
    if ((code !== undefined && UNREACHABLE.has(code)) || /timeout|terminated/i.test(messageOf(error))) {
      return new StoreUnavailableError(
        `cannot reach PostgreSQL at ${server} (${code ?? messageOf(error)}); is the server running, and are the host and port in DATABASE_URL right?`,
      );
    }
    return new StoreUnavailableError(`${what} on PostgreSQL at ${server} failed: ${messageOf(error)}`);
  };
  try {
    await withClient(url, async () => undefined);
    return { created: false, database };
  } catch (error) {
    if (errorCodeOf(error) !== DATABASE_MISSING) throw explain(error, `opening database "${database}"`);
  }
  const maintenance = new URL(url);
  maintenance.pathname = `/${POSTGRES_MAINTENANCE_DATABASE}`;
  try {
    await withClient(maintenance, (client) => client.query(`CREATE DATABASE ${quoteIdentifier(database)}`));
    return { created: true, database };
  } catch (error) {
    const code = errorCodeOf(error);
    if (code === DATABASE_EXISTS || code === UNIQUE_VIOLATION) return { created: false, database };
    if (code === INSUFFICIENT_PRIVILEGE) {
      throw new StoreUnavailableError(
        `database "${database}" does not exist on PostgreSQL at ${server}, and ${user} may not create it; create it (createdb ${database}) or grant ${user} CREATEDB, then start again`,
      );
    }
    throw explain(error, `creating database "${database}" (it does not exist)`);
  }
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
    provider: {
      getMigrations: async () => ({
        '0001-initial': withDialect(initial),
        '0002-audit-deleted': withDialect(auditDeleted),
        '0003-chunk-outcome': withDialect(chunkOutcome),
        '0004-admin-sessions': withDialect(adminSessions),
        '0005-auth-failures': withDialect(authFailures),
        '0006-refresh-answers-and-request-counts': withDialect(refreshAnswersAndRequestCounts),
        '0007-origin-journal-once': withDialect(originJournalOnce),
        '0008-csrf-derived': withDialect(csrfDerived),
        '0009-rejected-chunks-uncounted': withDialect(rejectedChunksUncounted),
        '0010-admin-one-time-views': withDialect(adminOneTimeViews),
      }),
    },
  });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
}
