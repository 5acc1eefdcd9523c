/**
 * What a withdrawal of journals (`reversal-write.ts`) reads and the one update that withdraws
 * them: the journals' rows as it reads them (`JournalRow`), their lines, and `withdraw`, the
 * at-most-once guard, on each dialect.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { ReversibleJournal } from '../../modules/accounting/store.js';
import type { Database } from '../schema.js';
import { byDialect, type DialectAdapter } from '../store.js';
import type { JournalLinesTable } from '../tables/accounting.js';

/** A journal's row as a withdrawal reads it. */
export interface JournalRow {
  journal_id: string;
  ingestion_id: string;
  record_id: number | string;
  core_date: string;
  journal_type: string;
  accounting_config: string;
  node: string;
  reverses: string | null;
  reversed_by: string | null;
  withdrawn_by: string | null;
  origin_journal_id: string | null;
}

/** The columns of a `JournalRow`, in the order they are selected and returned. */
export const JOURNAL_ROW_COLUMNS = [
  'journal_id',
  'ingestion_id',
  'record_id',
  'core_date',
  'journal_type',
  'accounting_config',
  'node',
  'reverses',
  'reversed_by',
  'withdrawn_by',
  'origin_journal_id',
] as const;

/** The lines of `ids`, in journal and line order, by one index lookup per journal (`rowsByKeys`). */
async function linesOf(db: Kysely<Database>, adapter: DialectAdapter, ids: readonly string[]) {
  const { rows } = await sql<Omit<JournalLinesTable, 'line_id'>>`
    select l.journal_id, l.line_no, l.account, ${adapter.decimalText('l.amount')} as amount, l.currency,
      l.extras
    from ${adapter.rowsByKeys('journal_lines', 'journal_id', ids, 'l')}
    order by l.journal_id, l.line_no`.execute(db);
  return rows;
}

/** The lines of the journals `ids`, as reversible lines by journal id. */
export async function reversibleLinesOf(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  ids: readonly string[],
): Promise<Map<string, ReversibleJournal['lines'][number][]>> {
  const linesById = new Map<string, ReversibleJournal['lines'][number][]>();
  for (const line of await linesOf(db, adapter, ids)) {
    const list = linesById.get(line.journal_id) ?? [];
    list.push({
      lineId: '',
      lineNo: Number(line.line_no),
      account: line.account,
      amount: String(line.amount),
      currency: line.currency,
      extras: JSON.parse(line.extras) as Record<string, unknown>,
    });
    linesById.set(line.journal_id, list);
  }
  return linesById;
}

/**
 * Sets `withdrawn_by` (and `reversed_by` where null) of each journal of `pairs` that no reversal
 * has withdrawn yet, and returns those journals' rows (the header of `reversal-write.ts`: the at-most-once guard). The
 * one write that withdraws a journal: reversals by selection and rollbacks
 * (`rollback-write.ts`) both go through it.
 *
 * On PostgreSQL the journals are found by `journal_id = any(ids)` with sequential scans off for
 * the statement: the planner costs a thousand primary-key lookups above one scan of a table of
 * some ten thousand pages (and, on journals written since the last analyse, takes
 * `withdrawn_by is null` for rare), so it scanned every journal once per batch, which grows
 * with the square of the journals stored. The setting is the transaction's and is put back
 * right after.
 */
export async function withdraw(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
  pairs: readonly { journalId: string; reversalJournalId: string }[],
): Promise<JournalRow[]> {
  if (pairs.length === 0) return [];
  // Sorted: concurrent withdrawals lock shared journals in one order.
  const sorted = [...pairs].sort((a, b) => (a.journalId < b.journalId ? -1 : 1));
  const update = byDialect(adapter.dialect, { postgres: withdrawByArrays, sqlite: withdrawByJsonPairs });
  return update(trx, sorted);
}

const RETURNING_JOURNAL_ROW = sql.join(JOURNAL_ROW_COLUMNS.map((c) => sql.ref(c)));

/** PostgreSQL: the ids and their reversals as two arrays, sequential scans off for the statement (see `withdraw`). */
async function withdrawByArrays(
  trx: Transaction<Database>,
  sorted: readonly { journalId: string; reversalJournalId: string }[],
): Promise<JournalRow[]> {
  const ids = sorted.map((p) => p.journalId);
  const { rows: setting } = await sql<{ was: string }>`
    select current_setting('enable_seqscan') as was, set_config('enable_seqscan', 'off', true)`.execute(trx);
  const reversals = sql`(${sorted.map((p) => p.reversalJournalId)}::text[])[array_position(${ids}::text[], journal_id)]`;
  const { rows } = await sql<JournalRow>`
    update journals set withdrawn_by = ${reversals}, reversed_by = coalesce(reversed_by, ${reversals})
    where journal_id = any(${ids}::text[]) and withdrawn_by is null
    returning ${RETURNING_JOURNAL_ROW}`.execute(trx);
  await sql`select set_config('enable_seqscan', ${setting[0]?.was ?? 'on'}, true)`.execute(trx);
  return rows;
}

/** SQLite: the pairs as one JSON parameter, joined by `UPDATE … FROM`. */
async function withdrawByJsonPairs(
  trx: Transaction<Database>,
  sorted: readonly { journalId: string; reversalJournalId: string }[],
): Promise<JournalRow[]> {
  const { rows } = await sql<JournalRow>`
    update journals set withdrawn_by = v.rid, reversed_by = coalesce(journals.reversed_by, v.rid)
    from (select json_extract(value, '$[0]') as jid, json_extract(value, '$[1]') as rid
      from json_each(${JSON.stringify(sorted.map((p) => [p.journalId, p.reversalJournalId]))})) as v
    where journals.journal_id = v.jid and journals.withdrawn_by is null
    returning ${RETURNING_JOURNAL_ROW}`.execute(trx);
  return rows;
}
