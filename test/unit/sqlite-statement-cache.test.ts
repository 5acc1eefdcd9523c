import SqliteDatabase from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  STATEMENT_CACHE_SQL_LENGTH_MAX,
  withStatementCache,
} from '../../src/storage/sqlite/statement-cache.js';

describe('the prepared statements of a SQLite connection', () => {
  let sqlite: SqliteDatabase.Database;

  beforeEach(() => {
    sqlite = new SqliteDatabase(':memory:');
    sqlite.exec('create table t (n integer primary key)');
    sqlite.prepare('insert into t (n) values (1), (2), (3)').run();
  });
  afterEach(() => {
    if (sqlite.open) sqlite.close();
  });

  it('reuses the statement of a query run again with other parameters', () => {
    const database = withStatementCache(sqlite);
    const first = database.prepare('select n from t where n = ?');
    expect(first.all([1])).toEqual([{ n: 1 }]);
    const again = database.prepare('select n from t where n = ?');
    expect(again).toBe(first);
    expect(again.all([2])).toEqual([{ n: 2 }]);
  });

  it('gives a query whose statement is still being iterated a statement of its own', () => {
    const database = withStatementCache(sqlite);
    const sql = 'select n from t order by n';
    const streaming = database.prepare(sql).iterate([]);
    expect(streaming.next().value).toEqual({ n: 1 });
    // The statement is busy until the iteration ends; the same query meanwhile runs on another one.
    expect(database.prepare(sql).all([])).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect([...streaming]).toEqual([{ n: 2 }, { n: 3 }]);
    expect(database.prepare(sql).all([])).toHaveLength(3);
  });

  it('keeps at most the given number of statements, dropping the least recently used', () => {
    const database = withStatementCache(sqlite, 2);
    const a = database.prepare('select 1 as a');
    const b = database.prepare('select 2 as b');
    expect(database.prepare('select 1 as a')).toBe(a);
    database.prepare('select 3 as c');
    // `b` was used least recently: it went, `a` stayed.
    expect(database.prepare('select 1 as a')).toBe(a);
    expect(database.prepare('select 2 as b')).not.toBe(b);
  });

  it('prepares a query of a long text (many rows at once) each time', () => {
    const database = withStatementCache(sqlite);
    const values = Array.from({ length: STATEMENT_CACHE_SQL_LENGTH_MAX / 4 }, () => '(?)').join(', ');
    const sql = `select * from (values ${values})`;
    expect(sql.length).toBeGreaterThan(STATEMENT_CACHE_SQL_LENGTH_MAX);
    expect(database.prepare(sql)).not.toBe(database.prepare(sql));
  });

  it('closes the connection it wraps', () => {
    withStatementCache(sqlite).close();
    expect(sqlite.open).toBe(false);
  });
});
