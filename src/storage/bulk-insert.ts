import type { Statement } from 'better-sqlite3';
import { CompiledQuery, type Transaction } from 'kysely';
import { CopyData } from './postgres/copy-data.js';
import type { Database } from './schema.js';
import { byDialect, type Store } from './store.js';

/** Inserts many rows of one table inside the caller's transaction. */
export type BulkInsert = (
  trx: Transaction<Database>,
  table: keyof Database,
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
) => Promise<void>;

/** Characters that PostgreSQL's COPY text format reads as syntax, and how a value writes them. */
const COPY_SPECIAL = /[\\\n\r\t]/;
const COPY_SPECIAL_ALL = /[\\\n\r\t]/g;
const COPY_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

/** One value as a field of PostgreSQL's COPY text format: `\N` for null, syntax characters escaped. */
function copyField(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  const text = String(value);
  return COPY_SPECIAL.test(text) ? text.replace(COPY_SPECIAL_ALL, (c) => COPY_ESCAPES[c] ?? c) : text;
}

/** Rows in PostgreSQL's COPY text format: tab-separated fields, one line per row. */
export function copyText(rows: readonly (readonly unknown[])[]): string {
  let text = '';
  for (const row of rows) {
    for (let i = 0; i < row.length; i += 1) text += (i === 0 ? '' : '\t') + copyField(row[i]);
    text += '\n';
  }
  return text;
}

/**
 * The fast path for writing many rows (a chunk's records on SQLite, the journals and lines of a
 * processed chunk), one per dialect; on PostgreSQL a chunk's records go in with the chunk's one
 * statement instead (`chunk-write-postgres.ts`). PostgreSQL: `COPY table (columns) FROM STDIN`
 * with the rows in the text format, streamed on the transaction's connection (`CopyData`,
 * `postgres/copy-data.ts`); measured 1.3 to 1.7 times as fast as one `INSERT … SELECT * FROM
 * unnest(…)` with an array per column, and faster than multi-row VALUES
 * (docs/adr/0014-storage-fast-paths.md). SQLite: a prepared single-row INSERT run per row;
 * better-sqlite3 is synchronous and Kysely holds the store's only connection for the
 * transaction, so the rows belong to it. Table and column names come from code, never from input.
 */
export function createBulkInsert(store: Store): BulkInsert {
  return byDialect(store.dialect, { postgres: copyInsert, sqlite: preparedInsert })(store);
}

/** PostgreSQL: `COPY … FROM STDIN`, the rows streamed in its text format. */
function copyInsert(): BulkInsert {
  return async (trx, table, columns, rows) => {
    if (rows.length === 0) return;
    await trx.executeQuery(
      CompiledQuery.raw(`copy ${table} (${columns.join(', ')}) from stdin`, [new CopyData(copyText(rows))]),
    );
  };
}

/** SQLite: one prepared statement per table and columns, run once per row on the store's connection. */
function preparedInsert(store: Store): BulkInsert {
  const statements = new Map<string, Statement>();
  return async (_trx, table, columns, rows) => {
    if (rows.length === 0) return;
    if (store.sqlite === undefined) throw new Error('the SQLite store has no connection handle');
    const names = columns.join(', ');
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
