/**
 * The reads of journals and balances, part of the accounting port (`accounting-store.ts`):
 * journals by page with their lines, their counts (from the journal counters where the filter
 * allows), and the balances from the kept tables (`balances.ts`).
 */
import { type Kysely, type Selectable, sql } from 'kysely';
import type { AccountingStore, JournalFilter, StoredJournal } from '../../modules/accounting/store.js';
import { countRows } from '../count.js';
import { keyedPageOf } from '../keyed-page.js';
import type { Database } from '../schema.js';
import type { DialectAdapter, Store } from '../store.js';
import type { JournalLinesTable, JournalsTable } from '../tables/accounting.js';
import { readBalances } from './balances.js';

function toJournal(row: Selectable<JournalsTable>, lines: StoredJournal['lines']): StoredJournal {
  return {
    journalId: row.journal_id,
    status: Number(row.posted) === 1 ? 'posted' : 'unposted',
    coreDate: row.core_date,
    originalCoreDate: row.original_core_date,
    journalType: row.journal_type,
    accountingConfig: row.accounting_config,
    ingestionId: row.ingestion_id,
    reverses: row.reverses,
    reversedBy: row.reversed_by,
    withdrawnBy: row.withdrawn_by,
    reversalId: row.reversal_id,
    originJournalId: row.origin_journal_id,
    node: JSON.parse(row.node) as Record<string, string>,
    revision: Number(row.revision),
    lines,
  };
}

/** The journals `filter` selects (the WHERE of their page and of their count). */
function journalsMatching(db: Kysely<Database>, filter: JournalFilter) {
  let query = db.selectFrom('journals');
  if (filter.status !== undefined) query = query.where('posted', '=', filter.status === 'posted' ? 1 : 0);
  if (filter.ingestionId !== undefined) query = query.where('ingestion_id', '=', filter.ingestionId);
  if (filter.accountingConfig !== undefined)
    query = query.where('accounting_config', '=', filter.accountingConfig);
  if (filter.from !== undefined) query = query.where('core_date', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('core_date', '<', filter.to);
  if (filter.reversalId !== undefined) query = query.where('reversal_id', '=', filter.reversalId);
  return query;
}

/**
 * The lines of the journals of one page, in journal and line order, by one index lookup per
 * journal (`rowsByKeys`: the plan must not hang on the planner's statistics).
 */
async function linesOf(db: Kysely<Database>, adapter: DialectAdapter, journalIds: string[]) {
  const { rows } = await sql<Selectable<JournalLinesTable>>`
    select l.journal_id, l.line_id, l.line_no, l.account, ${adapter.decimalText('l.amount')} as amount,
      l.currency, l.extras
    from ${adapter.rowsByKeys('journal_lines', 'journal_id', journalIds, 'l')}
    order by l.journal_id, l.line_no`.execute(db);
  return rows;
}

/** The journals of `rows` with their lines. */
async function journalsWithLines(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  rows: Selectable<JournalsTable>[],
): Promise<StoredJournal[]> {
  if (rows.length === 0) return [];
  const lines = await linesOf(
    db,
    adapter,
    rows.map((r) => r.journal_id),
  );
  const byJournal = new Map<string, StoredJournal['lines']>();
  for (const line of lines) {
    const list = byJournal.get(line.journal_id) ?? [];
    list.push({
      lineId: line.line_id,
      lineNo: line.line_no,
      account: line.account,
      amount: String(line.amount),
      currency: line.currency,
      extras: JSON.parse(line.extras) as Record<string, unknown>,
    });
    byJournal.set(line.journal_id, list);
  }
  return rows.map((row) => toJournal(row, byJournal.get(row.journal_id) ?? []));
}

/** The journal and balance reads of the accounting port over `store`. */
export function createJournalReads(
  store: Store,
): Pick<AccountingStore, 'listJournals' | 'countJournals' | 'findJournal' | 'balances'> {
  const { db, adapter } = store;
  return {
    async listJournals(filter, start, limit) {
      let query = journalsMatching(db, filter);
      if ('after' in start) {
        const { coreDate, createdAt, journalId } = start.after;
        query = query.where((eb) =>
          eb(
            eb.refTuple('core_date', 'created_at', 'journal_id'),
            '>',
            eb.tuple(coreDate, createdAt, journalId),
          ),
        );
      } else query = query.offset(start.page * limit);
      const rows = await query
        .selectAll()
        .orderBy('core_date')
        .orderBy('created_at')
        .orderBy('journal_id')
        .limit(limit + 1)
        .execute();
      const page = keyedPageOf(rows, limit, (row) => ({
        coreDate: row.core_date,
        createdAt: row.created_at,
        journalId: row.journal_id,
      }));
      return { rows: await journalsWithLines(db, adapter, page.rows), next: page.next };
    },

    async countJournals(filter) {
      // A session's journals are counted on their index (`journals_session_page_order`): as
      // many as it made; a reversal request's on `journals_reversal`: as many as it made.
      if (filter.ingestionId !== undefined || filter.reversalId !== undefined)
        return countRows(journalsMatching(db, filter));
      // Otherwise every filter is a dimension of the journal counters (`statistics-counters.ts`).
      let counters = db.selectFrom('journal_day_counts');
      if (filter.status !== undefined)
        counters = counters.where('posted', '=', filter.status === 'posted' ? 1 : 0);
      if (filter.accountingConfig !== undefined)
        counters = counters.where('accounting_config', '=', filter.accountingConfig);
      if (filter.from !== undefined) counters = counters.where('core_date', '>=', filter.from);
      if (filter.to !== undefined) counters = counters.where('core_date', '<', filter.to);
      const row = await counters
        .select((eb) => eb.fn.sum<number | string | null>('journals').as('total'))
        .executeTakeFirstOrThrow();
      return Number(row.total ?? 0);
    },

    async findJournal(journalId) {
      const row = await db
        .selectFrom('journals')
        .selectAll()
        .where('journal_id', '=', journalId)
        .executeTakeFirst();
      return row === undefined ? undefined : (await journalsWithLines(db, adapter, [row]))[0];
    },

    balances(filter) {
      return readBalances(db, adapter, filter);
    },
  };
}
