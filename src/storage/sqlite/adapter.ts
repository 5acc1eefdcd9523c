import { sql } from 'kysely';
import type { DialectAdapter } from '../dialect-adapter.js';

/**
 * SQLite's terms (`dialect-adapter.ts`): JSON arrays read by `json_each` as one parameter,
 * decimals kept as text and summed by the functions `sqlite/decimal-sum.ts` registers, JSON
 * members by path, and no row locks: one write transaction runs at a time, so what a writer read
 * stays as read.
 */
export const sqliteAdapter: DialectAdapter = {
  dialect: 'sqlite',
  textIn: (column, values) =>
    sql<boolean>`${sql.ref(column)} in (select value from json_each(${JSON.stringify(values)}))`,
  integerIn: (column, values) =>
    sql<boolean>`${sql.ref(column)} in (select value from json_each(${JSON.stringify(values)}))`,
  decimalText: (column) => sql<string>`${sql.ref(column)}`,
  decimalSum: (column) => sql<string>`decimal_sum(${sql.ref(column)})`,
  decimalAdd: (left, right) => sql<string>`decimal_add(${left}, ${right})`,
  jsonMember: (column, key) =>
    // A JSON path names a key in double quotes, which have no escape there: a key holding one is
    // read through json_each, slower but exact.
    /["\\]/.test(key)
      ? sql`(select value from json_each(${sql.ref(column)}) where key = ${key})`
      : sql`json_extract(${sql.ref(column)}, ${`$."${key}"`})`,
  jsonContains(column, object) {
    const members = Object.entries(object).map(
      ([key, value]) => sql`${sqliteAdapter.jsonMember(column, key)} = ${value}`,
    );
    return members.length === 0 ? sql<boolean>`1 = 1` : sql<boolean>`${sql.join(members, sql` and `)}`;
  },
  jsonRows: (json, alias, columns) =>
    sql`(select ${sql.raw(
      columns.map((c) => `json_extract(value, '$.${c.name}') as ${c.name}`).join(', '),
    )} from json_each(${json})) as ${sql.raw(alias)}`,
  rowsByKeys: (table, keyColumn, keys, alias) =>
    sql`(select * from ${sql.table(table)} where ${sql.ref(keyColumn)} in (select value from json_each(${JSON.stringify(keys)}))) as ${sql.raw(alias)}`,
  forUpdate: (query) => query,
  forShare: (query) => query,
  async lockTables() {},
  async lockRows() {},
  skipLocked: sql``,
};
