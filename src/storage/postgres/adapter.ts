import { sql } from 'kysely';
import type { DialectAdapter } from '../dialect-adapter.js';

/**
 * PostgreSQL's terms (`dialect-adapter.ts`): arrays as one parameter, `NUMERIC` arithmetic cast
 * to text, `jsonb` for JSON text, and row locks, since several connections and instances write
 * at the same time.
 */
export const postgresAdapter: DialectAdapter = {
  dialect: 'postgres',
  textIn: (column, values) => sql<boolean>`${sql.ref(column)} = any(${[...values]}::text[])`,
  integerIn: (column, values) => sql<boolean>`${sql.ref(column)} = any(${[...values]}::bigint[])`,
  decimalText: (column) => sql<string>`${sql.ref(column)}::text`,
  decimalSum: (column) => sql<string>`sum(${sql.ref(column)})::text`,
  decimalAdd: (left, right) => sql<string>`${left} + ${right}`,
  jsonMember: (column, key) => sql`(${sql.ref(column)}::jsonb ->> ${key})`,
  jsonContains: (column, object) =>
    sql<boolean>`${sql.ref(column)}::jsonb @> ${JSON.stringify(object)}::jsonb`,
  jsonRows: (json, alias, columns) =>
    sql`json_to_recordset(${json}::json) as ${sql.raw(alias)}(${sql.raw(
      columns.map((c) => `${c.name} ${c.type}`).join(', '),
    )})`,
  rowsByKeys: (table, keyColumn, keys, alias) =>
    sql`unnest(${[...keys]}::text[]) as keys(key) cross join lateral (
      select * from ${sql.table(table)} where ${sql.ref(`${table}.${keyColumn}`)} = keys.key offset 0
    ) as ${sql.raw(alias)}`,
  forUpdate: (query) => query.forUpdate(),
  forShare: (query) => query.forShare(),
  async lockTables(trx, tables) {
    for (const table of tables) await sql`lock table ${sql.table(table)} in exclusive mode`.execute(trx);
  },
  async lockRows(query) {
    await query.forUpdate().execute();
  },
  skipLocked: sql`for update skip locked`,
};
