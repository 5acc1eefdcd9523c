import type { Statement } from 'better-sqlite3';
import { sql, type Transaction } from 'kysely';
import type { Store } from './database.js';
import type { Database } from './schema.js';

/** A column of a bulk insert and its PostgreSQL array element type. */
export interface BulkColumn {
  name: string;
  pgType: 'text' | 'int' | 'bigint' | 'numeric';
}

/** Inserts many rows of one table inside the caller's transaction. */
export type BulkInsert = (
  trx: Transaction<Database>,
  table: keyof Database,
  columns: readonly BulkColumn[],
  rows: readonly (readonly unknown[])[],
) => Promise<void>;

/**
 * The fast path for writing many rows (a chunk's records, a chunk's journals and lines), one
 * per dialect. PostgreSQL: a single `INSERT … SELECT * FROM unnest($1::text[], …)` with one
 * array parameter per column, whatever the row count. SQLite: a prepared single-row INSERT run
 * per row; better-sqlite3 is synchronous and Kysely holds the store's only connection for the
 * transaction, so the rows belong to it. Both are several times faster than multi-row VALUES
 * statements built per call. Table and column names come from code, never from input.
 */
export function createBulkInsert(store: Store): BulkInsert {
  const statements = new Map<string, Statement>();
  return async (trx, table, columns, rows) => {
    if (rows.length === 0) return;
    const names = columns.map((c) => c.name).join(', ');
    if (store.dialect === 'postgres') {
      const arrays = columns.map(
        (column, i) => sql`${rows.map((row) => row[i] ?? null)}::${sql.raw(column.pgType)}[]`,
      );
      await sql`insert into ${sql.raw(table)} (${sql.raw(names)}) select * from unnest(${sql.join(arrays)})`.execute(
        trx,
      );
      return;
    }
    if (store.sqlite === undefined) throw new Error('the SQLite store has no connection handle');
    const key = `${table}(${names})`;
    let statement = statements.get(key);
    if (statement === undefined) {
      statement = store.sqlite.prepare(
        `insert into ${table} (${names}) values (${columns.map(() => '?').join(', ')})`,
      );
      statements.set(key, statement);
    }
    for (const row of rows) statement.run(...row);
  };
}
