/**
 * What SQLite and PostgreSQL say differently, said once per dialect (as kysely's own dialect
 * adapters do): the adapters in `sqlite/adapter.ts` and `postgres/adapter.ts` implement this,
 * `openStore` gives a store its dialect's (`Store.adapter`), and the adapters of the ports in
 * storage ask it instead of branching on the dialect. Where a whole statement or algorithm
 * differs (a claim, a chunk's write, the extract positions), a concern keeps its two
 * implementations side by side and picks one when it is built (`byDialect`); migrations write per
 * dialect as they must. `test/unit/layering.test.ts` checks that no other file asks which
 * dialect it is on.
 */
import type { Kysely, RawBuilder } from 'kysely';
import type { Database } from './schema.js';

/** The SQL dialects the store speaks. */
export type Dialect = 'sqlite' | 'postgres';

/** The SQL terms and row locks each dialect writes its own way. */
export interface DialectAdapter {
  readonly dialect: Dialect;
  /**
   * `column` equals one of `values` (text), bound as one parameter however many values there
   * are: an array on PostgreSQL, a JSON array read by `json_each` on SQLite (whose statements
   * take at most 32,766 parameters).
   */
  textIn(column: string, values: readonly string[]): RawBuilder<boolean>;
  /** The same for whole numbers (ids). */
  integerIn(column: string, values: readonly number[]): RawBuilder<boolean>;
  /**
   * An exact decimal column as the text the service reads: PostgreSQL's `NUMERIC` cast to text;
   * SQLite keeps the text as written.
   */
  decimalText(column: string): RawBuilder<string>;
  /** The exact sum of a decimal column, as text (`decimal_sum` on SQLite, `sqlite/decimal-sum.ts`). */
  decimalSum(column: string): RawBuilder<string>;
  /** `left + right` for two exact decimals, as stored (`decimal_add` on SQLite). */
  decimalAdd(left: RawBuilder<unknown>, right: RawBuilder<unknown>): RawBuilder<string>;
  /** The value of the member `key` of the JSON object text in `column`, SQL NULL when absent or null. */
  jsonMember(column: string, key: string): RawBuilder<unknown>;
  /** Whether the JSON object text in `column` holds every member of `object` with the same value. */
  jsonContains(column: string, object: Readonly<Record<string, string>>): RawBuilder<boolean>;
  /**
   * The rows of a JSON array of objects as a table named `alias` with `columns` (name and SQL
   * type), one parameter for them all.
   */
  jsonRows(
    json: string,
    alias: string,
    columns: readonly { name: string; type: 'bigint' | 'text' }[],
  ): RawBuilder<unknown>;
  /**
   * The rows of `table` whose `keyColumn` is one of `keys`, as a FROM item named `alias`, found
   * by one index lookup per key. On PostgreSQL a lateral join over the keys: a long `IN` list
   * leaves the plan to the planner's statistics, which rows written since the last analyse are
   * not in (a page of lines was once a hash join over every line, a second at 2.5 million). On
   * SQLite an `IN` over the keys, which it looks up one by one.
   */
  rowsByKeys(table: string, keyColumn: string, keys: readonly string[], alias: string): RawBuilder<unknown>;
  /**
   * `query` locking the rows it reads until the transaction ends, where other writers may run
   * at the same time (PostgreSQL); SQLite runs one write transaction at a time, so the rows a
   * writer reads stay as read and the query is left as it is.
   */
  forUpdate<Q extends Lockable<Q>>(query: Q): Q;
  /** As {@link forUpdate}, a share lock: other readers may share it, writers wait. */
  forShare<Q extends Lockable<Q>>(query: Q): Q;
  /**
   * Takes the row locks of the rows `query` reads, in its order, where writers run at once
   * (PostgreSQL), so that transactions locking shared rows never wait on each other in a cycle;
   * nothing at all on SQLite, whose one writer needs no lock order (the query is not run).
   */
  lockRows<Q extends Lockable<Q> & Executable>(query: Q): Promise<void>;
  /**
   * Locks `tables`, in the order given, against every other write until the transaction ends
   * (reads go on): PostgreSQL's `EXCLUSIVE` table locks; nothing on SQLite, whose write
   * transaction already holds the whole file.
   */
  lockTables(trx: Kysely<Database>, tables: readonly (keyof Database & string)[]): Promise<void>;
  /** `for update skip locked` where several instances claim rows at once; nothing on SQLite. */
  readonly skipLocked: RawBuilder<unknown>;
}

/** A Kysely select that can lock what it reads. */
export interface Lockable<Q> {
  forUpdate(): Q;
  forShare(): Q;
}

/** A Kysely query that can run. */
export interface Executable {
  execute(): Promise<unknown>;
}

/**
 * One of two implementations of a concern, the one of `dialect`: for what differs by more than
 * a term (a statement's shape, an algorithm), so that a concern keeps both side by side and
 * picks once, where it is built.
 */
export function byDialect<T>(dialect: Dialect, implementations: { postgres: T; sqlite: T }): T {
  return implementations[dialect];
}
