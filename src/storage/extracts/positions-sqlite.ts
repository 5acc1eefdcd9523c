import { sql } from 'kysely';
import type { RowKey, SourceWindow } from '../../modules/extracts/store.js';
import { allOf, type ExtractPositions, type LineRow } from './positions.js';

/**
 * SQLite: a position is a number and a window is `[from, to)`. The one writer hands numbers out
 * in commit order: processing errors and records are numbered by their id (AUTOINCREMENT), and
 * journals by the append-only `extract_journal_log`, one row per journal written (posted or not)
 * and one per posting; its rows of `posted = 1` are the posted journals, of `posted = 0` the
 * journals written unposted. The log has no index but its number: a window is a range of it, and
 * the few rows of the other kind in it are skipped as they are met.
 */
export const sqlitePositions: ExtractPositions = {
  start: '0',
  // The last number handed out plus one: every number handed out is committed when another
  // connection reads it.
  bound: (source) =>
    source === 'processing-errors' || source === 'records'
      ? sql<string>`cast(coalesce((select seq from sqlite_sequence where name = ${source === 'records' ? 'records' : 'processing_errors'}), 0) + 1 as text)`
      : sql<string>`cast(coalesce((select max(position) from extract_journal_log), 0) + 1 as text)`,
  inWindow: (column: string, window: SourceWindow) =>
    sql`${sql.ref(column)} >= ${Number(window.from)} and ${sql.ref(column)} < ${Number(window.to)}`,
  positionText: (column) => sql<string>`cast(${sql.ref(column)} as text)`,
  journalSource: (posted) => ({
    from: sql`extract_journal_log as g join journals as j on j.journal_id = g.journal_id`,
    column: 'g.position',
    condition: sql`g.posted = ${posted ? 1 : 0}`,
  }),
  // A log position is unique, and the condition on it alone is what the log's index serves.
  afterJournal: (column: string, after: RowKey, orEqual: boolean) =>
    orEqual
      ? sql`${sql.ref(column)} >= ${Number(after[0] ?? 0)}`
      : sql`${sql.ref(column)} > ${Number(after[0] ?? 0)}`,
  async linePage(db, journalConditions, after, limit) {
    const { from } = sqlitePositions.journalSource(true);
    const lineCondition =
      after === undefined
        ? sql`1 = 1`
        : sql`(g.position, l.line_no) > (${Number(after[0] ?? 0)}, ${Number(after[2])})`;
    // The planner walks the log in order and looks each journal and its lines up by itself.
    const { rows } = await sql<LineRow>`
      select j.journal_id, j.ingestion_id, j.core_date, j.journal_type, j.accounting_config, j.node,
        j.reverses, j.reversed_by, j.origin_journal_id, cast(g.position as text) as position,
        l.line_id, l.line_no, l.account, l.amount, l.currency, l.extras
      from ${from}
      join journal_lines as l on l.journal_id = j.journal_id
      where ${allOf([...journalConditions, lineCondition])}
      order by g.position, l.line_no
      limit ${limit + 1}
    `.execute(db);
    return rows;
  },
  writtenKey: (alias, idColumn) => ({
    column: `${alias}.${idColumn}`,
    after: (after) => sql`${sql.ref(`${alias}.${idColumn}`)} > ${Number(after[1])}`,
    order: sql`${sql.ref(`${alias}.${idColumn}`)}`,
  }),
};
