import type SqliteDatabase from 'better-sqlite3';
import type { SqliteDatabase as KyselySqliteDatabase } from 'kysely';

/**
 * Prepared statements kept per connection, by their SQL text. Kysely's SQLite driver prepares
 * every query again each time it runs it; preparing (SQLite parses and plans the statement) took
 * about 5 % of the event loop's time under 64 clients and about 1 % of the processing thread's.
 * Most queries repeat with other parameters, so their statements are reused; queries whose text
 * varies (a list of `in (?, ?, …)` of every length) push the least recently used out.
 */
export const STATEMENT_CACHE_ENTRIES_MAX = 200;
/**
 * Longest SQL text whose statement is kept. Longer texts are those of many rows or values at once
 * (an insert of a whole batch), whose text changes with their count and whose statement is large:
 * they are prepared each time, a cost shared by all their rows.
 */
export const STATEMENT_CACHE_SQL_LENGTH_MAX = 2_000;

/**
 * The connection as Kysely sees it, with prepared statements reused. A statement still being
 * iterated (a streamed read, `busy`) cannot run again until it is done; a query that finds its
 * statement busy gets one of its own, not kept, and so does a query of a long text.
 */
export function withStatementCache(
  sqlite: SqliteDatabase.Database,
  entriesMax = STATEMENT_CACHE_ENTRIES_MAX,
): KyselySqliteDatabase {
  // A Map keeps insertion order: the first key is the least recently used.
  const statements = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql) {
      if (sql.length > STATEMENT_CACHE_SQL_LENGTH_MAX) return sqlite.prepare(sql);
      const cached = statements.get(sql);
      if (cached !== undefined) {
        if (cached.busy) return sqlite.prepare(sql);
        statements.delete(sql);
        statements.set(sql, cached);
        return cached;
      }
      const statement = sqlite.prepare(sql);
      statements.set(sql, statement);
      if (statements.size > entriesMax) {
        const oldest = statements.keys().next();
        if (oldest.done !== true) statements.delete(oldest.value);
      }
      return statement;
    },
  };
}
