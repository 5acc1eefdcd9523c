import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';
import type { SqliteWriteTurn } from './write-turn.js';

/**
 * SQLite transactions that take the write lock when they begin (`BEGIN IMMEDIATE`), after the
 * process's turn to write (`SqliteWriteTurn`). A deferred transaction that reads first and writes
 * later cannot wait for the lock if another connection wrote in between (SQLITE_BUSY at once,
 * busy_timeout or not); with the processing thread's own connection
 * (docs/adr/0013-processing-thread.md) every transaction waits its turn instead. A statement
 * outside a transaction that may write takes the turn for itself. `hooks.afterWrite`, when given,
 * runs once a write has committed and the turn is given back (the processing thread's
 * checkpoints, `open.ts`); `hooks.durable`, when given, is awaited after that with the connection
 * given back, before the write returns (the event loop's commits, synced off the event loop:
 * `wal-sync.ts`). While a write waits for the turn, the connection serves the thread's reads.
 */
export class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #turn: SqliteWriteTurn;
  readonly #hooks: WriteHooks;

  constructor(config: SqliteDialectConfig, turn: SqliteWriteTurn, hooks: WriteHooks = {}) {
    super(config);
    this.#config = config;
    this.#turn = turn;
    this.#hooks = hooks;
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config, this.#turn, this.#hooks);
  }
}

/** What runs after a write has committed and the turn to write is given back. */
export interface WriteHooks {
  /** Runs at once (the processing thread's checkpoints). */
  afterWrite?: () => void;
  /** Awaited with the connection given back, before the write returns (the log brought to the disk). */
  durable?: () => Promise<void>;
}

class ImmediateSqliteDriver extends SqliteDriver {
  readonly #turn: SqliteWriteTurn;
  readonly #hooks: WriteHooks;
  /** Whether this connection holds the turn for a transaction. */
  #inTransaction = false;
  /** Whether a write committed since the connection was last lent. */
  #committed = false;

  constructor(config: SqliteDialectConfig, turn: SqliteWriteTurn, hooks: WriteHooks) {
    super(config);
    this.#turn = turn;
    this.#hooks = hooks;
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    return {
      executeQuery: async <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
        // Reads never wait: in WAL mode they see the last commit while another connection writes.
        if (this.#inTransaction || query.query.kind === 'SelectQueryNode')
          return connection.executeQuery<R>(query);
        await this.#givenBackWhile(() => this.#turn.take());
        let result: QueryResult<R>;
        try {
          result = await connection.executeQuery<R>(query);
        } finally {
          this.#turn.give();
          this.#wrote();
        }
        return result;
      },
      streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
    };
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await this.#givenBackWhile(() => this.#turn.take());
    this.#inTransaction = true;
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
    this.#wrote();
  }

  /**
   * Gives the connection back, then, when it wrote since it was lent, waits for `hooks.durable`:
   * the next query or transaction goes on meanwhile. Kysely awaits this before a transaction or
   * a single write returns (a failure of `durable` is then theirs); a transaction begun by
   * `startTransaction` is given back without waiting, so its owner awaits `durable` itself
   * (`group-commit.ts`).
   */
  override async releaseConnection(): Promise<void> {
    const wrote = this.#committed;
    this.#committed = false;
    await super.releaseConnection();
    if (wrote) await this.#hooks.durable?.();
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await connection.executeQuery(CompiledQuery.raw('rollback'));
    } finally {
      this.#endTransaction();
    }
  }

  /**
   * Gives the connection back while `wait` runs and takes it again after, before its caller goes
   * on. SQLite has one connection per thread, and Kysely lends it to one query or transaction at
   * a time: without this, every read of the thread waited while a write waited for the turn (for
   * the other thread's write), which under 64 clients kept the connection from the reads about a
   * third of the time. No transaction is open meanwhile: the turn is awaited before `begin`.
   */
  async #givenBackWhile(wait: () => Promise<void>): Promise<void> {
    await super.releaseConnection();
    try {
      await wait();
    } finally {
      await super.acquireConnection();
    }
  }

  /** A write committed and the turn was given back. */
  #wrote(): void {
    this.#committed = true;
    this.#hooks.afterWrite?.();
  }

  #endTransaction(): void {
    this.#inTransaction = false;
    this.#turn.give();
  }
}
