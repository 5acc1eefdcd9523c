import { type RawBuilder, sql } from 'kysely';
import type { RowKey, SourceWindow } from '../../modules/extracts/store.js';
import { allOf, type ExtractPositions, type LineRow } from './positions.js';

/** A position as PostgreSQL compares it: a transaction id. */
function positionOf(position: string | number): RawBuilder<unknown> {
  return sql`${String(position)}::xid8`;
}

/**
 * PostgreSQL: a position is a snapshot (`pg_current_snapshot()` as text), and a row's is the id of
 * the transaction that wrote it (or posted it). The window holds the rows whose transaction is
 * visible in its end snapshot and was not in its start snapshot, so a transaction enters exactly
 * one window, the first whose snapshot was taken after it ended, however long another
 * transaction runs. The range on the column lets the index bound the scan.
 */
export const postgresPositions: ExtractPositions = {
  // A snapshot that sees no transaction.
  start: '1:1:',
  bound: () => sql<string>`pg_current_snapshot()::text`,
  inWindow(column: string, window: SourceWindow) {
    const ref = sql.ref(column);
    const from = sql`${window.from}::pg_snapshot`;
    const to = sql`${window.to}::pg_snapshot`;
    return sql`${ref} >= pg_snapshot_xmin(${from}) and ${ref} < pg_snapshot_xmax(${to})
      and pg_visible_in_snapshot(${ref}, ${to}) and not pg_visible_in_snapshot(${ref}, ${from})`;
  },
  positionText: (column) => sql<string>`${sql.ref(column)}::text`,
  // The posting transaction for posted journals and their lines, the writing one for journals
  // written unposted: both are columns of the journals themselves.
  journalSource: (posted) =>
    posted
      ? { from: sql`journals as j`, column: 'j.posted_xid', condition: sql`j.posted = 1` }
      : {
          from: sql`journals as j`,
          column: 'j.written_xid',
          // Written unposted: unposted still, or posted later by another transaction.
          condition: sql`(j.posted = 0 or j.posted_xid <> j.written_xid)`,
        },
  afterJournal(column: string, after: RowKey, orEqual: boolean) {
    const position = positionOf(after[0] ?? 0);
    return orEqual
      ? sql`(${sql.ref(column)}, j.journal_id) >= (${position}, ${String(after[1])})`
      : sql`(${sql.ref(column)}, j.journal_id) > (${position}, ${String(after[1])})`;
  },
  async linePage(db, journalConditions, after, limit) {
    const lineCondition =
      after === undefined
        ? sql`1 = 1`
        : sql`(j.posted_xid, j.journal_id, l.line_no) > (${positionOf(after[0] ?? 0)}, ${String(after[1])}, ${Number(after[2])})`;
    // The page's journals first, from the posting index, then each one's lines by one index
    // lookup (a lateral join): a plan that does not hang on the planner's estimates, which for
    // the window's snapshot conditions are guesses (a join of the whole tables was planned as a
    // hash join over every line, 230 ms a page at a million lines). Each journal has a line, so
    // `limit + 2` journals (the cursor's may have none left) give `limit + 1` lines.
    const { rows } = await sql<LineRow>`
      with page as materialized (
        select j.journal_id, j.ingestion_id, j.core_date, j.journal_type, j.accounting_config, j.node,
          j.reverses, j.reversed_by, j.origin_journal_id, j.posted_xid
        from journals as j
        where ${allOf(journalConditions)}
        order by j.posted_xid, j.journal_id
        limit ${limit + 2}
      )
      select j.journal_id, j.ingestion_id, j.core_date, j.journal_type, j.accounting_config, j.node,
        j.reverses, j.reversed_by, j.origin_journal_id, j.posted_xid::text as position,
        l.line_id, l.line_no, l.account, l.amount::text as amount, l.currency, l.extras
      from page as j
      cross join lateral (
        select l.line_id, l.line_no, l.account, l.amount, l.currency, l.extras
        from journal_lines as l
        where l.journal_id = j.journal_id and ${lineCondition}
        order by l.line_no
      ) as l
      order by j.posted_xid, j.journal_id, l.line_no
      limit ${limit + 1}
    `.execute(db);
    return rows;
  },
  writtenKey: (alias, idColumn) => ({
    column: `${alias}.written_xid`,
    after: (after) =>
      sql`(${sql.ref(`${alias}.written_xid`)}, ${sql.ref(`${alias}.${idColumn}`)}) > (${positionOf(after[0] ?? 0)}, ${Number(after[1])})`,
    order: sql`${sql.ref(`${alias}.written_xid`)}, ${sql.ref(`${alias}.${idColumn}`)}`,
  }),
};
