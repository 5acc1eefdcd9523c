import { finished } from 'node:stream/promises';
import {
  Kysely,
  type PostgresCursor,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQueryResult,
} from 'kysely';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { StoreUnavailableError } from '../errors.js';
import type { Database } from '../schema.js';
import { CopyData } from './copy-data.js';
import { storeErrorOf } from './unavailable.js';

/** Connections per service instance in the PostgreSQL pool. */
const POSTGRES_POOL_SIZE_MAX = 10;
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

/** How a PostgreSQL store is opened. */
export interface PostgresOptions {
  /** Told once of each pooled connection lost while idle (the pool has already dropped it). */
  onIdleError?: (error: Error) => void;
  /** Longest wait for a connection, new or from the pool, in milliseconds. */
  connectTimeoutMs?: number;
  /** Longest a statement may run, and a transaction may sit idle, in milliseconds. */
  statementTimeoutMs?: number;
}

/**
 * Kysely over a pool of `databaseUrl`: int8 as numbers, NUMERIC as strings, statement and idle
 * transaction timeouts on the server, a query timeout a little longer on the client, TCP
 * keepalive, and every connection guarded (`GuardedClient`). Does not connect yet.
 */
export function openPostgres(databaseUrl: string, options: PostgresOptions): Kysely<Database> {
  const statementTimeoutMs = options.statementTimeoutMs ?? DATABASE_STATEMENT_TIMEOUT_MS_DEFAULT;
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: POSTGRES_POOL_SIZE_MAX,
    connectionTimeoutMillis: options.connectTimeoutMs ?? DATABASE_CONNECT_TIMEOUT_MS_DEFAULT,
    statement_timeout: statementTimeoutMs,
    // Every statement of the service is short and index-bound. JIT compiling pays only for long
    // analytic queries; on a plan the planner misjudges it added 45 ms of compiling to a
    // 50-journal page.
    options: '-c jit=off',
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
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool: guardedPool(pool) }) });
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
