/**
 * The rows of each extract source in a window of positions (docs/adr/0022-gap-free-extract-
 * offsets.md): one keyed statement per page, read from an index in the order of the source's
 * key, so a page costs the same however deep, and a page of a window that is final always holds
 * the same rows. PostgreSQL positions are `xid8` values, SQLite's integers; both travel as text.
 * One file on purpose: the six sources share the window, the key and the two dialects' position
 * arithmetic, and each source's statement reads best beside the others.
 */
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type {
  ExtractFilters,
  ExtractJournal,
  ExtractSource,
  RowKey,
  SourceRow,
  SourceWindow,
} from '../../modules/extracts/store.js';
import type { Database } from '../schema.js';
import type { Dialect } from '../store.js';

/** The position of a row key as the dialect compares it: a transaction id, or a number. */
function positionOf(dialect: Dialect, position: string | number): RawBuilder<unknown> {
  return dialect === 'postgres' ? sql`${String(position)}::xid8` : sql`${Number(position)}`;
}

/**
 * The rows of `column` in `window`. On PostgreSQL a position is a snapshot
 * (`pg_current_snapshot()` as text): the window holds the rows whose transaction is visible in
 * its end snapshot and was not in its start snapshot, so a transaction enters exactly one window,
 * the first whose snapshot was taken after it ended, however long another transaction runs. The
 * range on the column lets the index bound the scan. On SQLite a position is a number: the
 * window is `[from, to)`.
 */
function inWindow(dialect: Dialect, column: string, window: SourceWindow): RawBuilder<unknown> {
  const ref = sql.ref(column);
  if (dialect === 'postgres') {
    const from = sql`${window.from}::pg_snapshot`;
    const to = sql`${window.to}::pg_snapshot`;
    return sql`${ref} >= pg_snapshot_xmin(${from}) and ${ref} < pg_snapshot_xmax(${to})
      and pg_visible_in_snapshot(${ref}, ${to}) and not pg_visible_in_snapshot(${ref}, ${from})`;
  }
  return sql`${ref} >= ${Number(window.from)} and ${ref} < ${Number(window.to)}`;
}

/** The position column as text, whichever dialect. */
function positionText(dialect: Dialect, column: string): RawBuilder<string> {
  return dialect === 'postgres'
    ? sql<string>`${sql.ref(column)}::text`
    : sql<string>`cast(${sql.ref(column)} as text)`;
}

/** The condition that the journal's node holds every field value of `node`. */
function nodeCondition(dialect: Dialect, column: string, node: Record<string, string>): RawBuilder<unknown> {
  if (dialect === 'postgres') return sql`${sql.ref(column)}::jsonb @> ${JSON.stringify(node)}::jsonb`;
  const parts = Object.entries(node).map(
    ([field, value]) => sql`json_extract(${sql.ref(column)}, ${`$."${field}"`}) = ${value}`,
  );
  return sql.join(parts, sql` and `);
}

/** Joins conditions with `and`; `true` when there are none. */
function allOf(conditions: RawBuilder<unknown>[]): RawBuilder<unknown> {
  return conditions.length === 0 ? sql`1 = 1` : sql.join(conditions, sql` and `);
}

interface JournalRow {
  journal_id: string;
  ingestion_id: string;
  core_date: string;
  original_core_date: string | null;
  journal_type: string;
  accounting_config: string;
  node: string;
  posted: number;
  reverses: string | null;
  reversed_by: string | null;
  withdrawn_by: string | null;
  origin_journal_id: string | null;
  line_count: number;
  created_at: string;
  revision: number;
  position: string;
}

const JOURNAL_COLUMNS = sql`j.journal_id, j.ingestion_id, j.core_date, j.original_core_date, j.journal_type,
  j.accounting_config, j.node, j.posted, j.reverses, j.reversed_by, j.withdrawn_by, j.origin_journal_id,
  j.line_count, j.created_at, j.revision`;

/**
 * The journal of a row; `nodes` keeps the parsed nodes of one page by their text, since a page's
 * journals share a handful of nodes and the lines of one journal repeat its node.
 */
function journalOf(row: JournalRow, nodes: Map<string, Record<string, string>>): ExtractJournal {
  let node = nodes.get(row.node);
  if (node === undefined) {
    node = JSON.parse(row.node) as Record<string, string>;
    nodes.set(row.node, node);
  }
  return {
    journalId: row.journal_id,
    status: Number(row.posted) === 1 ? 'posted' : 'unposted',
    coreDate: row.core_date,
    originalCoreDate: row.original_core_date,
    journalType: row.journal_type,
    accountingConfig: row.accounting_config,
    ingestionId: row.ingestion_id,
    node,
    reverses: row.reverses,
    reversedBy: row.reversed_by,
    withdrawnBy: row.withdrawn_by,
    originJournalId: row.origin_journal_id,
    lineCount: Number(row.line_count),
    createdAt: row.created_at,
    revision: Number(row.revision),
  };
}

/** The journal conditions of the filters (accounting configuration, node). */
function journalFilters(dialect: Dialect, filters: ExtractFilters): RawBuilder<unknown>[] {
  const conditions: RawBuilder<unknown>[] = [];
  if (filters.accountingConfig !== undefined)
    conditions.push(sql`j.accounting_config = ${filters.accountingConfig}`);
  if (filters.node !== undefined && Object.keys(filters.node).length > 0)
    conditions.push(nodeCondition(dialect, 'j.node', filters.node));
  return conditions;
}

/**
 * Where the journals of a source and their positions are read. On PostgreSQL from the journals
 * themselves: the posting transaction for posted journals and their lines, the writing one for
 * journals written unposted. On SQLite from the append-only `extract_journal_log`, one row per
 * journal written (posted or not) and one per posting, numbered in commit order; its rows of
 * `posted = 1` are the posted journals, of `posted = 0` the journals written unposted. The log
 * has no index but its number: a window is a range of it, and the few rows of the other kind in
 * it are skipped as they are met.
 */
function journalSource(
  dialect: Dialect,
  posted: boolean,
): { from: RawBuilder<unknown>; column: string; condition: RawBuilder<unknown> } {
  if (dialect === 'postgres')
    return posted
      ? { from: sql`journals as j`, column: 'j.posted_xid', condition: sql`j.posted = 1` }
      : {
          from: sql`journals as j`,
          column: 'j.written_xid',
          // Written unposted: unposted still, or posted later by another transaction.
          condition: sql`(j.posted = 0 or j.posted_xid <> j.written_xid)`,
        };
  return {
    from: sql`extract_journal_log as g join journals as j on j.journal_id = g.journal_id`,
    column: 'g.position',
    condition: sql`g.posted = ${posted ? 1 : 0}`,
  };
}

/**
 * The rows after the journal key `after` (position, journal id): on SQLite a log position is
 * unique, and the condition on it alone is what the log's index serves.
 */
function afterJournal(
  dialect: Dialect,
  column: string,
  after: RowKey,
  orEqual: boolean,
): RawBuilder<unknown> {
  const position = positionOf(dialect, after[0] ?? 0);
  if (dialect === 'sqlite')
    return orEqual ? sql`${sql.ref(column)} >= ${position}` : sql`${sql.ref(column)} > ${position}`;
  return orEqual
    ? sql`(${sql.ref(column)}, j.journal_id) >= (${position}, ${String(after[1])})`
    : sql`(${sql.ref(column)}, j.journal_id) > (${position}, ${String(after[1])})`;
}

async function readJournals(
  db: Kysely<Database>,
  dialect: Dialect,
  source: 'posted-journals' | 'unposted-journals',
  filters: ExtractFilters,
  window: SourceWindow,
  after: RowKey | undefined,
  limit: number,
): Promise<{ rows: SourceRow[]; keys: RowKey[] }> {
  const { from, column, condition } = journalSource(dialect, source === 'posted-journals');
  const conditions = [condition, inWindow(dialect, column, window), ...journalFilters(dialect, filters)];
  if (after !== undefined) conditions.push(afterJournal(dialect, column, after, false));
  const { rows } = await sql<JournalRow>`
    select ${JOURNAL_COLUMNS}, ${positionText(dialect, column)} as position
    from ${from}
    where ${allOf(conditions)}
    order by ${sql.ref(column)}, j.journal_id
    limit ${limit + 1}
  `.execute(db);
  const nodes = new Map<string, Record<string, string>>();
  return {
    rows: rows.map((row) => ({ kind: 'journal', journal: journalOf(row, nodes) })),
    keys: rows.map((row) => [row.position, row.journal_id]),
  };
}

interface LineRow {
  journal_id: string;
  ingestion_id: string;
  core_date: string;
  journal_type: string;
  accounting_config: string;
  node: string;
  reverses: string | null;
  reversed_by: string | null;
  origin_journal_id: string | null;
  position: string;
  line_id: string;
  line_no: number;
  account: string;
  amount: string;
  currency: string;
  extras: string;
}

/**
 * Lines of posted journals in the order of their posting, then journal and line number, with
 * only the journal values a line record holds: this is the read of the largest extracts. The
 * journal part of the key is also a `>=` condition of its own, which the journals' posting index
 * serves; the line number is a filter on the first journal only.
 */
async function readLines(
  db: Kysely<Database>,
  dialect: Dialect,
  filters: ExtractFilters,
  window: SourceWindow,
  after: RowKey | undefined,
  limit: number,
): Promise<{ rows: SourceRow[]; keys: RowKey[] }> {
  const { from, column, condition } = journalSource(dialect, true);
  const journalConditions = [
    condition,
    inWindow(dialect, column, window),
    ...journalFilters(dialect, filters),
  ];
  let lineCondition = sql`1 = 1`;
  if (after !== undefined) {
    journalConditions.push(afterJournal(dialect, column, after, true));
    const position = positionOf(dialect, after[0] ?? 0);
    lineCondition =
      dialect === 'postgres'
        ? sql`(j.posted_xid, j.journal_id, l.line_no) > (${position}, ${String(after[1])}, ${Number(after[2])})`
        : sql`(g.position, l.line_no) > (${position}, ${Number(after[2])})`;
  }
  let rows: LineRow[];
  if (dialect === 'postgres') {
    // The page's journals first, from the posting index, then each one's lines by one index
    // lookup (a lateral join): a plan that does not hang on the planner's estimates, which for
    // the window's snapshot conditions are guesses (a join of the whole tables was planned as a
    // hash join over every line, 230 ms a page at a million lines). Each journal has a line, so
    // `limit + 2` journals (the cursor's may have none left) give `limit + 1` lines.
    ({ rows } = await sql<LineRow>`
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
    `.execute(db));
  } else {
    // SQLite's planner walks the log in order and looks each journal and its lines up by itself.
    ({ rows } = await sql<LineRow>`
      select j.journal_id, j.ingestion_id, j.core_date, j.journal_type, j.accounting_config, j.node,
        j.reverses, j.reversed_by, j.origin_journal_id, ${positionText(dialect, column)} as position,
        l.line_id, l.line_no, l.account, l.amount, l.currency, l.extras
      from ${from}
      join journal_lines as l on l.journal_id = j.journal_id
      where ${allOf([...journalConditions, lineCondition])}
      order by ${sql.ref(column)}, l.line_no
      limit ${limit + 1}
    `.execute(db));
  }
  const nodes = new Map<string, Record<string, string>>();
  return {
    rows: rows.map((row) => {
      let node = nodes.get(row.node);
      if (node === undefined) {
        node = JSON.parse(row.node) as Record<string, string>;
        nodes.set(row.node, node);
      }
      return {
        kind: 'line',
        journal: {
          journalId: row.journal_id,
          coreDate: row.core_date,
          journalType: row.journal_type,
          accountingConfig: row.accounting_config,
          ingestionId: row.ingestion_id,
          reverses: row.reverses,
          reversedBy: row.reversed_by,
          originJournalId: row.origin_journal_id,
          node,
        },
        line: {
          lineId: row.line_id,
          lineNo: Number(row.line_no),
          account: row.account,
          amount: String(row.amount),
          currency: row.currency,
          extras: row.extras === '{}' ? NO_EXTRAS : (JSON.parse(row.extras) as Record<string, unknown>),
        },
      };
    }),
    keys: rows.map((row) => [row.position, row.journal_id, Number(row.line_no)]),
  };
}

/** The extras of a line that has none, shared: most lines have none. */
const NO_EXTRAS: Readonly<Record<string, unknown>> = Object.freeze({});

interface ErrorRow {
  id: number | string;
  ingestion_id: string;
  record_id: number | string;
  namespace: string;
  entity: string;
  code: string;
  message: string;
  record: string;
  created_at: string;
  revision: number;
  state: string;
  attempts: number;
  position: string;
}

/**
 * Processing errors as recorded, in the order written: on SQLite their id is their position
 * (AUTOINCREMENT, single writer), on PostgreSQL their writing transaction.
 */
async function readErrors(
  db: Kysely<Database>,
  dialect: Dialect,
  filters: ExtractFilters,
  window: SourceWindow,
  after: RowKey | undefined,
  limit: number,
): Promise<{ rows: SourceRow[]; keys: RowKey[] }> {
  const column = dialect === 'postgres' ? 'e.written_xid' : 'e.id';
  const conditions = [inWindow(dialect, column, window)];
  if (filters.namespace !== undefined) conditions.push(sql`e.namespace = ${filters.namespace}`);
  if (filters.entity !== undefined) conditions.push(sql`e.entity = ${filters.entity}`);
  if (filters.code !== undefined) conditions.push(sql`e.code = ${filters.code}`);
  if (after !== undefined)
    conditions.push(
      dialect === 'postgres'
        ? sql`(e.written_xid, e.id) > (${positionOf(dialect, after[0] ?? 0)}, ${Number(after[1])})`
        : sql`e.id > ${Number(after[1])}`,
    );
  const order = dialect === 'postgres' ? sql`e.written_xid, e.id` : sql`e.id`;
  const { rows } = await sql<ErrorRow>`
    select e.id, e.ingestion_id, e.record_id, e.namespace, e.entity, e.code, e.message, e.record,
      e.created_at, e.revision, e.state, e.attempts, ${positionText(dialect, column)} as position
    from processing_errors as e
    where ${allOf(conditions)}
    order by ${order}
    limit ${limit + 1}
  `.execute(db);
  return {
    rows: rows.map((row) => ({
      kind: 'values',
      values: {
        errorId: Number(row.id),
        ingestionId: row.ingestion_id,
        recordId: Number(row.record_id),
        namespace: row.namespace,
        entity: row.entity,
        code: row.code,
        message: row.message,
        state: row.state,
        attempts: Number(row.attempts),
        createdAt: row.created_at,
        revision: Number(row.revision),
        record: JSON.parse(row.record) as unknown,
      },
    })),
    keys: rows.map((row) => [row.position, Number(row.id)]),
  };
}

interface RecordRow {
  record_id: number | string;
  ingestion_id: string;
  data: string;
  created_at: string;
  position: string;
}

/** The records of one entity in the order written, as the errors. */
async function readRecords(
  db: Kysely<Database>,
  dialect: Dialect,
  filters: ExtractFilters,
  window: SourceWindow,
  after: RowKey | undefined,
  limit: number,
): Promise<{ rows: SourceRow[]; keys: RowKey[] }> {
  const column = dialect === 'postgres' ? 'r.written_xid' : 'r.record_id';
  const conditions = [
    sql`r.namespace = ${filters.namespace ?? ''}`,
    sql`r.entity = ${filters.entity ?? ''}`,
    inWindow(dialect, column, window),
  ];
  if (after !== undefined)
    conditions.push(
      dialect === 'postgres'
        ? sql`(r.written_xid, r.record_id) > (${positionOf(dialect, after[0] ?? 0)}, ${Number(after[1])})`
        : sql`r.record_id > ${Number(after[1])}`,
    );
  const order = dialect === 'postgres' ? sql`r.written_xid, r.record_id` : sql`r.record_id`;
  const { rows } = await sql<RecordRow>`
    select r.record_id, r.ingestion_id, r.data, r.created_at, ${positionText(dialect, column)} as position
    from records as r
    where ${allOf(conditions)}
    order by ${order}
    limit ${limit + 1}
  `.execute(db);
  return {
    rows: rows.map((row) => ({
      kind: 'values',
      values: {
        ...(JSON.parse(row.data) as Record<string, unknown>),
        recordId: Number(row.record_id),
        ingestionId: row.ingestion_id,
        createdAt: row.created_at,
      },
    })),
    keys: rows.map((row) => [row.position, Number(row.record_id)]),
  };
}

interface BalanceRow {
  accounting_config: string;
  node: string;
  account: string;
  currency: string;
  balance: string;
}

/**
 * Balances now (the kept totals) or as of a day (the kept moves summed), in the order of their
 * key. A snapshot: no window, the key alone pages.
 */
async function readBalances(
  db: Kysely<Database>,
  dialect: Dialect,
  filters: ExtractFilters,
  after: RowKey | undefined,
  limit: number,
): Promise<{ rows: SourceRow[]; keys: RowKey[] }> {
  const conditions: RawBuilder<unknown>[] = [];
  if (filters.accountingConfig !== undefined)
    conditions.push(sql`b.accounting_config = ${filters.accountingConfig}`);
  if (filters.node !== undefined && Object.keys(filters.node).length > 0)
    conditions.push(nodeCondition(dialect, 'b.node', filters.node));
  if (after !== undefined)
    conditions.push(
      sql`(b.accounting_config, b.node, b.account, b.currency) > (${String(after[0])}, ${String(after[1])}, ${String(after[2])}, ${String(after[3])})`,
    );
  let query: RawBuilder<BalanceRow>;
  if (filters.asOf === undefined) {
    const amount = dialect === 'postgres' ? sql`b.amount::text` : sql`b.amount`;
    query = sql<BalanceRow>`
      select b.accounting_config, b.node, b.account, b.currency, ${amount} as balance
      from balances as b
      where ${allOf(conditions)}
      order by b.accounting_config, b.node, b.account, b.currency
      limit ${limit + 1}
    `;
  } else {
    conditions.push(sql`b.core_date <= ${filters.asOf}`);
    const total = dialect === 'postgres' ? sql`sum(b.amount)::text` : sql`decimal_sum(b.amount)`;
    query = sql<BalanceRow>`
      select b.accounting_config, b.node, b.account, b.currency, ${total} as balance
      from balance_moves as b
      where ${allOf(conditions)}
      group by b.accounting_config, b.node, b.account, b.currency
      order by b.accounting_config, b.node, b.account, b.currency
      limit ${limit + 1}
    `;
  }
  const { rows } = await query.execute(db);
  return {
    rows: rows.map((row) => ({
      kind: 'values',
      values: {
        accountingConfig: row.accounting_config,
        node: JSON.parse(row.node) as Record<string, string>,
        account: row.account,
        currency: row.currency,
        balance: String(row.balance),
        ...(filters.asOf === undefined ? {} : { asOf: filters.asOf }),
      },
    })),
    keys: rows.map((row) => [row.accounting_config, row.node, row.account, row.currency]),
  };
}

/** Where every offset starts: before every row, in either dialect (a snapshot that sees no transaction). */
export const START_POSITIONS: { readonly [D in Dialect]: string } = { postgres: '1:1:', sqlite: '0' };

/** Up to `limit + 1` rows of `source` in `window` after `after`, with their keys. */
export function readSourceRows(
  db: Kysely<Database>,
  dialect: Dialect,
  source: ExtractSource,
  filters: ExtractFilters,
  window: SourceWindow,
  after: RowKey | undefined,
  limit: number,
): Promise<{ rows: SourceRow[]; keys: RowKey[] }> {
  switch (source) {
    case 'posted-journals':
    case 'unposted-journals':
      return readJournals(db, dialect, source, filters, window, after, limit);
    case 'journal-lines':
      return readLines(db, dialect, filters, window, after, limit);
    case 'processing-errors':
      return readErrors(db, dialect, filters, window, after, limit);
    case 'records':
      return readRecords(db, dialect, filters, window, after, limit);
    case 'balances':
      return readBalances(db, dialect, filters, after, limit);
  }
}

/**
 * The position that ends a new window, as an SQL expression: on PostgreSQL the current snapshot
 * (which transactions have ended); on SQLite the last number handed out plus one (one writer:
 * every number handed out is committed when another connection reads it).
 */
export function boundExpression(dialect: Dialect, source: ExtractSource): RawBuilder<string> {
  if (dialect === 'postgres') return sql<string>`pg_current_snapshot()::text`;
  if (source === 'processing-errors' || source === 'records')
    return sql<string>`cast(coalesce((select seq from sqlite_sequence where name = ${source === 'records' ? 'records' : 'processing_errors'}), 0) + 1 as text)`;
  return sql<string>`cast(coalesce((select max(position) from extract_journal_log), 0) + 1 as text)`;
}

/** The position that ends a window read now (`boundExpression`). */
export async function boundOf(
  db: Kysely<Database>,
  dialect: Dialect,
  source: ExtractSource,
): Promise<string> {
  const { rows } = await sql<{ bound: string }>`select ${boundExpression(dialect, source)} as bound`.execute(
    db,
  );
  return rows[0]?.bound ?? START_POSITIONS[dialect];
}
