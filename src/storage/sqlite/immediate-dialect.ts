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
 * outside a transaction that may write takes the turn for itself. `afterWrite`, when given, runs
 * once a write has committed and the turn is given back (the processing thread's checkpoints,
 * `open.ts`).
 */
export class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #turn: SqliteWriteTurn;
  readonly #afterWrite: () => void;

  constructor(config: SqliteDialectConfig, turn: SqliteWriteTurn, afterWrite: () => void = () => undefined) {
    super(config);
    this.#config = config;
    this.#turn = turn;
    this.#afterWrite = afterWrite;
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config, this.#turn, this.#afterWrite);
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  readonly #turn: SqliteWriteTurn;
  readonly #afterWrite: () => void;
  /** Whether this connection holds the turn for a transaction. */
  #inTransaction = false;

  constructor(config: SqliteDialectConfig, turn: SqliteWriteTurn, afterWrite: () => void) {
    super(config);
    this.#turn = turn;
    this.#afterWrite = afterWrite;
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
          this.#afterWrite();
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
    this.#afterWrite();
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
