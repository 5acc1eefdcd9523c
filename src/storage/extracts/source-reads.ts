/**
 * The rows of each extract source in a window of positions (docs/adr/0022-gap-free-extract-
 * offsets.md): one keyed statement per page, read from an index in the order of the source's
 * key, so a page costs the same however deep, and a page of a window that is final always holds
 * the same rows. How each dialect numbers rows is `positions.ts`; positions travel as text.
 * One file on purpose: the six sources share the window and the key, and each source's statement
 * reads best beside the others.
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
import { byDialect, type DialectAdapter } from '../store.js';
import { allOf, type ExtractPositions } from './positions.js';
import { postgresPositions } from './positions-postgres.js';
import { sqlitePositions } from './positions-sqlite.js';

/** How the dialect numbers the rows of the sources (`positions.ts`). */
function positionsOf(adapter: DialectAdapter): ExtractPositions {
  return byDialect(adapter.dialect, { postgres: postgresPositions, sqlite: sqlitePositions });
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
function journalFilters(adapter: DialectAdapter, filters: ExtractFilters): RawBuilder<unknown>[] {
  const conditions: RawBuilder<unknown>[] = [];
  if (filters.accountingConfig !== undefined)
    conditions.push(sql`j.accounting_config = ${filters.accountingConfig}`);
  if (filters.node !== undefined && Object.keys(filters.node).length > 0)
    conditions.push(adapter.jsonContains('j.node', filters.node));
  return conditions;
}

async function readJournals(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  source: 'posted-journals' | 'unposted-journals',
  filters: ExtractFilters,
  window: SourceWindow,
  after: RowKey | undefined,
  limit: number,
): Promise<{ rows: SourceRow[]; keys: RowKey[] }> {
  const positions = positionsOf(adapter);
  const { from, column, condition } = positions.journalSource(source === 'posted-journals');
  const conditions = [condition, positions.inWindow(column, window), ...journalFilters(adapter, filters)];
  if (after !== undefined) conditions.push(positions.afterJournal(column, after, false));
  const { rows } = await sql<JournalRow>`
    select ${JOURNAL_COLUMNS}, ${positions.positionText(column)} as position
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

/**
 * Lines of posted journals in the order of their posting, then journal and line number, with
 * only the journal values a line record holds: this is the read of the largest extracts. The
 * journal part of the key is also a `>=` condition of its own, which the journals' posting index
 * serves; the line number is a filter on the first journal only.
 */
async function readLines(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  filters: ExtractFilters,
  window: SourceWindow,
  after: RowKey | undefined,
  limit: number,
): Promise<{ rows: SourceRow[]; keys: RowKey[] }> {
  const positions = positionsOf(adapter);
  const { column, condition } = positions.journalSource(true);
  const journalConditions = [
    condition,
    positions.inWindow(column, window),
    ...journalFilters(adapter, filters),
  ];
  if (after !== undefined) journalConditions.push(positions.afterJournal(column, after, true));
  const rows = await positions.linePage(db, journalConditions, after, limit);
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
  adapter: DialectAdapter,
  filters: ExtractFilters,
  window: SourceWindow,
  after: RowKey | undefined,
  limit: number,
): Promise<{ rows: SourceRow[]; keys: RowKey[] }> {
  const positions = positionsOf(adapter);
  const key = positions.writtenKey('e', 'id');
  const conditions = [positions.inWindow(key.column, window)];
  if (filters.namespace !== undefined) conditions.push(sql`e.namespace = ${filters.namespace}`);
  if (filters.entity !== undefined) conditions.push(sql`e.entity = ${filters.entity}`);
  if (filters.code !== undefined) conditions.push(sql`e.code = ${filters.code}`);
  if (after !== undefined) conditions.push(key.after(after));
  const { rows } = await sql<ErrorRow>`
    select e.id, e.ingestion_id, e.record_id, e.namespace, e.entity, e.code, e.message, e.record,
      e.created_at, e.revision, e.state, e.attempts, ${positions.positionText(key.column)} as position
    from processing_errors as e
    where ${allOf(conditions)}
    order by ${key.order}
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
  adapter: DialectAdapter,
  filters: ExtractFilters,
  window: SourceWindow,
  after: RowKey | undefined,
  limit: number,
): Promise<{ rows: SourceRow[]; keys: RowKey[] }> {
  const positions = positionsOf(adapter);
  const key = positions.writtenKey('r', 'record_id');
  const conditions = [
    sql`r.namespace = ${filters.namespace ?? ''}`,
    sql`r.entity = ${filters.entity ?? ''}`,
    positions.inWindow(key.column, window),
  ];
  if (after !== undefined) conditions.push(key.after(after));
  const { rows } = await sql<RecordRow>`
    select r.record_id, r.ingestion_id, r.data, r.created_at, ${positions.positionText(key.column)} as position
    from records as r
    where ${allOf(conditions)}
    order by ${key.order}
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
  adapter: DialectAdapter,
  filters: ExtractFilters,
  after: RowKey | undefined,
  limit: number,
): Promise<{ rows: SourceRow[]; keys: RowKey[] }> {
  const conditions: RawBuilder<unknown>[] = [];
  if (filters.accountingConfig !== undefined)
    conditions.push(sql`b.accounting_config = ${filters.accountingConfig}`);
  if (filters.node !== undefined && Object.keys(filters.node).length > 0)
    conditions.push(adapter.jsonContains('b.node', filters.node));
  if (after !== undefined)
    conditions.push(
      sql`(b.accounting_config, b.node, b.account, b.currency) > (${String(after[0])}, ${String(after[1])}, ${String(after[2])}, ${String(after[3])})`,
    );
  let query: RawBuilder<BalanceRow>;
  if (filters.asOf === undefined) {
    const amount = adapter.decimalText('b.amount');
    query = sql<BalanceRow>`
      select b.accounting_config, b.node, b.account, b.currency, ${amount} as balance
      from balances as b
      where ${allOf(conditions)}
      order by b.accounting_config, b.node, b.account, b.currency
      limit ${limit + 1}
    `;
  } else {
    conditions.push(sql`b.core_date <= ${filters.asOf}`);
    const total = adapter.decimalSum('b.amount');
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

/** Where every offset starts: before every row (a snapshot that sees no transaction, or 0). */
export function startPositionOf(adapter: DialectAdapter): string {
  return positionsOf(adapter).start;
}

/** Up to `limit + 1` rows of `source` in `window` after `after`, with their keys. */
export function readSourceRows(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  source: ExtractSource,
  filters: ExtractFilters,
  window: SourceWindow,
  after: RowKey | undefined,
  limit: number,
): Promise<{ rows: SourceRow[]; keys: RowKey[] }> {
  switch (source) {
    case 'posted-journals':
    case 'unposted-journals':
      return readJournals(db, adapter, source, filters, window, after, limit);
    case 'journal-lines':
      return readLines(db, adapter, filters, window, after, limit);
    case 'processing-errors':
      return readErrors(db, adapter, filters, window, after, limit);
    case 'records':
      return readRecords(db, adapter, filters, window, after, limit);
    case 'balances':
      return readBalances(db, adapter, filters, after, limit);
  }
}

/**
 * The position that ends a new window, as an SQL expression: on PostgreSQL the current snapshot
 * (which transactions have ended); on SQLite the last number handed out plus one.
 */
export function boundExpression(adapter: DialectAdapter, source: ExtractSource): RawBuilder<string> {
  return positionsOf(adapter).bound(source);
}

/** The position that ends a window read now (`boundExpression`). */
export async function boundOf(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  source: ExtractSource,
): Promise<string> {
  const { rows } = await sql<{ bound: string }>`select ${boundExpression(adapter, source)} as bound`.execute(
    db,
  );
  return rows[0]?.bound ?? startPositionOf(adapter);
}
