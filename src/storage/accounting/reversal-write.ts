/**
 * The write of corrections (docs/domain/accounting.md, Corrections;
 * docs/adr/0020-corrections-as-reversal-journals.md): journals withdrawn by reversal journals,
 * inside the caller's transaction. Reversals by selection call it (`reversal-store.ts`), and so
 * may any other write that withdraws journals (a business-event rollback, from inside a
 * processing transaction).
 *
 * At most once: a journal is withdrawn by `update journals set withdrawn_by = … where
 * withdrawn_by is null` (`withdraw`, `withdraw.ts`); only the journals that update changed get a reversal journal. On
 * PostgreSQL a concurrent transaction withdrawing the same journal waits for the row lock, then
 * checks the condition again and changes nothing, so it reports the journal already reversed;
 * on SQLite one writer runs at a time. `reversed_by` is filled too where it is null; a journal
 * type with an automatic reversal has filled it already, and that automatic reversal is withdrawn
 * with its journal (so a correction removes the whole effect of the posting).
 *
 * Lock order on PostgreSQL: the journals withdrawn, batch by batch in id order, then the kept
 * balances (sorted, `balances.ts`), then the statistics counters (sorted, last), as every writer
 * of processing data takes them; the balances and counters of all batches are added once, at
 * the end, so no journal is locked after a balance row.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import { AppError } from '../../lib/errors.js';
import {
  type JournalDraft,
  type OpenWindowOf,
  type ReversalTotal,
  ReversalTotals,
  type ReversibleJournal,
  reversalDateOf,
  reversalJournalOf,
} from '../../modules/accounting/store.js';
import type { BulkInsert } from '../bulk-insert.js';
import { logWrittenJournals } from '../extract-journal-log.js';
import type { Database } from '../schema.js';
import { countJournals, type JournalCount } from '../statistics-counters.js';
import type { DialectAdapter } from '../store.js';
import { type BalanceMove, balanceMovesOf, keepBalances } from './balances.js';
import { canonicalNodeJson, JOURNAL_COLUMNS, journalRow, LINE_COLUMNS, lineRows } from './rows.js';
import { JOURNAL_ROW_COLUMNS, type JournalRow, reversibleLinesOf, withdraw } from './withdraw.js';

/** Journals withdrawn per statement: one read, one guarded update and one insert of each kind. */
export const WITHDRAW_BATCH_JOURNALS = 1_000;

/** The columns of a reversal journal row: a journal's, and the request that made it. */
const REVERSAL_JOURNAL_COLUMNS: readonly string[] = [...JOURNAL_COLUMNS, 'reversal_id'];

/** What a withdrawal is made with. */
export interface WithdrawalContext {
  /** The reversal request the reversal journals belong to (`journals.reversal_id`); null for others. */
  reversalId: string | null;
  /** The instant the reversal journals are stamped with. */
  at: string;
  /** The configuration revision the reversal journals are made under. */
  revision: number;
  /** A date for every reversal journal instead of the dating rule's (`reversal-journals.ts`). */
  postingDate?: string;
  openWindowOf: OpenWindowOf;
  newId: () => string;
  /**
   * When true the kept balances and the statistics counters are not written: the result holds
   * their moves and counts, for a caller that writes its own in the same transaction to add them
   * with, in one sorted write (the lock order of the header).
   */
  deferBalancesAndCounters?: boolean;
}

/** What a withdrawal did. */
export interface Withdrawal {
  /** Each journal withdrawn and its reversal journal, automatic reversals withdrawn with theirs included. */
  reversed: { journalId: string; reversalJournalId: string }[];
  /** Given journals withdrawn before (by an earlier correction, or a concurrent one that won). */
  alreadyReversed: string[];
  /**
   * Given reversal journals (automatic or corrections) whose original was not given: a reversal
   * journal is not reversed itself. One whose original was given goes with it.
   */
  notReversible: string[];
  /** Given ids of no journal. */
  unknown: string[];
  lines: number;
  totals: ReversalTotal[];
  /** With `deferBalancesAndCounters`: what the caller adds to the balances and counters. */
  balanceMoves: BalanceMove[];
  journalCounts: JournalCount[];
}

function batchesOf<T>(items: readonly T[], size: number): T[][] {
  const batches: T[][] = [];
  for (let at = 0; at < items.length; at += size) batches.push(items.slice(at, at + size));
  return batches;
}

/** The journals of `ids` (any number), in batches of WITHDRAW_BATCH_JOURNALS, by one index lookup per id (`rowsByKeys`). */
async function journalRows(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  ids: readonly string[],
): Promise<JournalRow[]> {
  const rows: JournalRow[] = [];
  for (const batch of batchesOf(ids, WITHDRAW_BATCH_JOURNALS)) {
    const found = await sql<JournalRow>`
      select ${sql.join(JOURNAL_ROW_COLUMNS.map((c) => sql.ref(`j.${c}`)))}
      from ${adapter.rowsByKeys('journals', 'journal_id', batch, 'j')}`.execute(db);
    rows.push(...found.rows);
  }
  return rows;
}

/**
 * Withdraws the journals `journalIds` (any number, any order, repeats ignored) inside `trx`, the
 * caller's transaction: each one not withdrawn yet gets its reversal journal
 * (`reversal-journals.ts`, dated by `context.openWindowOf` and `context.postingDate`), linked
 * both ways, in the journal's session, with `reversal_id` = `context.reversalId`; an automatic
 * reversal goes with its journal. The kept balances gain the posted reversals' lines and the
 * journal counters the reversal journals, as processing's write path does, unless
 * `context.deferBalancesAndCounters`. Written in batches of WITHDRAW_BATCH_JOURNALS with a turn
 * of the event loop between them. Returns a {@link Withdrawal}: the journals withdrawn with their
 * reversal journals (in the order of `journalIds`, each batch's automatic reversals after it),
 * and the given ids left alone, by why (already reversed, not reversible, unknown), with the
 * lines and totals of the reversal journals. Errors (`AppError`, thrown part-way: the caller's
 * transaction must roll back): `posting-date-closed` (the posting date is in a closed or locked
 * period of the node of any journal given, reversed already or not, or before the core date of a
 * journal it reverses), `conflict` (a journal's node no longer has its accounting configuration),
 * and whatever `context.openWindowOf` throws.
 */
export function withdrawJournals(
  trx: Transaction<Database>,
  bulkInsert: BulkInsert,
  adapter: DialectAdapter,
  journalIds: readonly string[],
  context: WithdrawalContext,
): Promise<Withdrawal> {
  return withdrawOrPlan(trx, adapter, journalIds, context, { trx, bulkInsert });
}

/**
 * What `withdrawJournals` would do, read through `db` without writing anything: every journal it
 * would withdraw counts as withdrawn (a concurrent correction may still come first). The same
 * errors.
 */
export function planWithdrawal(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  journalIds: readonly string[],
  context: Pick<WithdrawalContext, 'postingDate' | 'openWindowOf'>,
): Promise<Withdrawal> {
  return withdrawOrPlan(
    db,
    adapter,
    journalIds,
    { ...context, reversalId: null, at: '', revision: 0, newId: () => '', deferBalancesAndCounters: true },
    undefined,
  );
}

/**
 * Asks `context.openWindowOf` for the window of every node and accounting configuration of
 * `rows` once, before anything is written: a posting date asked for must be in an open period of
 * each selected journal's node, whether that journal is reversed already or not, so the caller's
 * window (which refuses a posting date in a closed or locked period, naming it) is asked for every
 * one, and a window that still holds the date in a closed period is refused here. A node without
 * the accounting configuration is left to the journals that would be reversed (`conflict`).
 */
function askWindowsOf(rows: readonly JournalRow[], context: WithdrawalContext): void {
  const { postingDate } = context;
  if (postingDate === undefined) return;
  const asked = new Set<string>();
  for (const row of rows) {
    const key = `${row.node}\u0000${row.accounting_config}`;
    if (asked.has(key)) continue;
    asked.add(key);
    const window = context.openWindowOf(
      JSON.parse(row.node) as Record<string, string>,
      row.accounting_config,
    );
    if (window === undefined) continue;
    // The posting date as its own journal's date: only a closed period can refuse it.
    const dating = reversalDateOf(postingDate, window, postingDate);
    if (!dating.ok) throw postingDateRefused(postingDate, dating, row);
  }
}

/** The refusal of a posting date `reversalDateOf` did not accept for the reversal of `row`. */
function postingDateRefused(
  postingDate: string,
  dating: Extract<ReturnType<typeof reversalDateOf>, { ok: false }>,
  row: Pick<JournalRow, 'journal_id' | 'node' | 'accounting_config' | 'core_date'>,
): AppError {
  if (dating.refusal === 'posting-date-in-closed-period')
    return new AppError(
      'posting-date-closed',
      `postingDate ${postingDate} is in a closed or locked period of node ${row.node} and accounting configuration ${row.accounting_config}: the first open period after it starts ${dating.firstOpenDay}`,
      {
        errors: [
          {
            path: '/postingDate',
            message: `must be in an open period, such as the one starting ${dating.firstOpenDay}`,
          },
        ],
      },
    );
  return new AppError(
    'posting-date-closed',
    `postingDate ${postingDate} is before the core date ${row.core_date} of journal ${row.journal_id}`,
    {
      errors: [
        {
          path: '/postingDate',
          message: `must be on or after ${row.core_date}, the core date of journal ${row.journal_id}`,
        },
      ],
    },
  );
}

/** Where a withdrawal writes: the caller's transaction and its bulk inserts (none for a plan). */
interface Writer {
  trx: Transaction<Database>;
  bulkInsert: BulkInsert;
}

/** What the steps of one withdrawal share: where it reads and writes, and what it found so far. */
interface WithdrawalState {
  db: Kysely<Database>;
  adapter: DialectAdapter;
  context: WithdrawalContext;
  /** Undefined for a plan (`planWithdrawal`), which writes nothing. */
  writer: Writer | undefined;
  result: Withdrawal;
  totals: ReversalTotals;
}

/** A journal to withdraw, with the id of its reversal journal. */
interface PlannedReversal {
  row: JournalRow;
  reversalJournalId: string;
}

/** A reversal journal drafted, with the record its journal was made from. */
interface ReversalDraft {
  recordId: number;
  draft: JournalDraft;
}

/**
 * `withdrawJournals` when `writer` is given, else `planWithdrawal`. The steps keep the lock order
 * of the header: batch by batch, the journals withdrawn (`withdrawBatch`) and their reversal
 * journals drafted and written (`draftReversals`, `insertReversalJournals`); then, once for all
 * batches, the kept balances and the statistics counters.
 */
async function withdrawOrPlan(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  journalIds: readonly string[],
  context: WithdrawalContext,
  writer: Writer | undefined,
): Promise<Withdrawal> {
  const given = await journalRows(db, adapter, journalIds);
  const result: Withdrawal = {
    reversed: [],
    alreadyReversed: [],
    notReversible: [],
    unknown: [],
    lines: 0,
    totals: [],
    balanceMoves: [],
    journalCounts: [],
  };
  askWindowsOf(given, context);
  const { targets, givenWithOriginal } = sortGiven(journalIds, given, result);
  const state: WithdrawalState = { db, adapter, context, writer, result, totals: new ReversalTotals() };
  // Only what the balances and counters need is kept across batches, never the drafts' lines.
  const moves: BalanceMove[] = [];
  const counts = new Map<string, JournalCount>();
  for (const batch of batchesOf(targets, WITHDRAW_BATCH_JOURNALS)) {
    const withdrawn = await withdrawBatch(state, batch, givenWithOriginal);
    const batchDrafts = await draftReversals(state, withdrawn);
    if (writer !== undefined) await insertReversalJournals(writer, adapter, batchDrafts, context);
    moves.push(...balanceMovesOf(batchDrafts, canonicalNodeJson));
    addJournalCounts(counts, batchDrafts);
    // A long withdrawal gives the event loop a turn between batches.
    await new Promise((resolve) => setImmediate(resolve));
  }
  result.totals = state.totals.rows();
  result.balanceMoves = moves;
  result.journalCounts = [...counts.values()];
  if (writer !== undefined && context.deferBalancesAndCounters !== true) {
    await keepBalances(writer.trx, adapter, result.balanceMoves);
    await countJournals(writer.trx, result.journalCounts);
  }
  return result;
}

/**
 * Sorts the given `journalIds` (repeats ignored) by what the withdrawal does with them: the ids
 * of no journal, the reversal journals whose original was not given and the journals withdrawn
 * before go into `result`; the automatic reversals of given journals go with them
 * (`givenWithOriginal`); the others are the targets, in the order given.
 */
function sortGiven(
  journalIds: readonly string[],
  given: readonly JournalRow[],
  result: Withdrawal,
): { targets: JournalRow[]; givenWithOriginal: Set<string> } {
  const byId = new Map(given.map((row) => [row.journal_id, row]));
  const targets: JournalRow[] = [];
  // Given automatic reversals of given journals: withdrawn with them, and counted already
  // reversed when a correction withdrew them before (or meanwhile, see the batches).
  const givenWithOriginal = new Set<string>();
  const seen = new Set<string>();
  for (const id of journalIds) {
    if (seen.has(id)) continue;
    seen.add(id);
    const row = byId.get(id);
    if (row === undefined) result.unknown.push(id);
    else if (row.reverses !== null) {
      if (!byId.has(row.reverses)) result.notReversible.push(id);
      else if (row.withdrawn_by !== null) result.alreadyReversed.push(id);
      else givenWithOriginal.add(id);
    } else if (row.withdrawn_by !== null) result.alreadyReversed.push(id);
    else targets.push(row);
  }
  return { targets, givenWithOriginal };
}

/**
 * Withdraws the journals of `batch` with their automatic reversals (`withdraw`), each given the
 * id of its reversal journal; a plan reads them instead, and counts a journal withdrawn and an
 * automatic reversal when nothing withdrew it yet. The journals a correction withdrew first go
 * into the result as already reversed. Returns the journals withdrawn, their automatic reversals
 * after them.
 */
async function withdrawBatch(
  state: WithdrawalState,
  batch: readonly JournalRow[],
  givenWithOriginal: ReadonlySet<string>,
): Promise<PlannedReversal[]> {
  const { db, adapter, context, writer, result } = state;
  const planned = batch.map((row) => ({ row, reversalJournalId: context.newId() }));
  // An automatic reversal goes with its journal: the journal's `reversed_by`, still the
  // automatic one, since a journal no correction withdrew has none in it. One statement
  // withdraws both; an automatic reversal of a journal withdrawn before was withdrawn with it,
  // so the guard leaves it too.
  const plannedCompanions = batch.flatMap((row) =>
    row.reversed_by === null
      ? []
      : [{ of: row.journal_id, journalId: row.reversed_by, reversalJournalId: context.newId() }],
  );
  const changed =
    writer === undefined
      ? [
          ...batch,
          ...(
            await journalRows(
              db,
              adapter,
              plannedCompanions.map((c) => c.journalId),
            )
          ).filter((row) => row.withdrawn_by === null),
        ]
      : await withdraw(writer.trx, adapter, [
          ...planned.map((p) => ({ journalId: p.row.journal_id, reversalJournalId: p.reversalJournalId })),
          ...plannedCompanions,
        ]);
  const changedById = new Map(changed.map((row) => [row.journal_id, row]));
  const withdrawn = planned.filter((p) => changedById.has(p.row.journal_id));
  for (const p of planned)
    if (!changedById.has(p.row.journal_id)) result.alreadyReversed.push(p.row.journal_id);
  for (const c of plannedCompanions)
    if (!changedById.has(c.journalId) && givenWithOriginal.has(c.journalId))
      result.alreadyReversed.push(c.journalId);
  const companions = plannedCompanions.flatMap((c) => {
    const row = changedById.get(c.journalId);
    if (row === undefined) return [];
    if (row.reverses !== c.of)
      throw new Error(`journal ${c.journalId}, the reversal named by journal ${c.of}, does not reverse it`);
    return [{ row, reversalJournalId: c.reversalJournalId }];
  });
  return [...withdrawn, ...companions];
}

/**
 * The reversal journals of the journals `withdrawn`, with their lines read by one index lookup
 * per journal; each is counted into the result and the totals. Errors as `reversalDraftOf`.
 */
async function draftReversals(
  state: WithdrawalState,
  withdrawn: readonly PlannedReversal[],
): Promise<ReversalDraft[]> {
  const { result } = state;
  const linesById = await reversibleLinesOf(
    state.db,
    state.adapter,
    withdrawn.map((p) => p.row.journal_id),
  );
  const drafts: ReversalDraft[] = [];
  for (const { row, reversalJournalId } of withdrawn) {
    const original: ReversibleJournal = {
      journalId: row.journal_id,
      ingestionId: row.ingestion_id,
      coreDate: row.core_date,
      journalType: row.journal_type,
      accountingConfig: row.accounting_config,
      node: JSON.parse(row.node) as Record<string, string>,
      originJournalId: row.origin_journal_id,
      lines: linesById.get(row.journal_id) ?? [],
    };
    const draft = reversalDraftOf(original, row, reversalJournalId, state.context);
    drafts.push({ recordId: Number(row.record_id), draft });
    state.totals.addReversalOf(original);
    result.reversed.push({ journalId: row.journal_id, reversalJournalId });
    result.lines += draft.lines.length;
  }
  return drafts;
}

/**
 * The reversal journal `reversalJournalId` of `original` (read as `row`), dated by the open window
 * of its node and `context.postingDate`. Errors: `conflict` (the node no longer has the journal's
 * accounting configuration), `posting-date-closed`.
 */
function reversalDraftOf(
  original: ReversibleJournal,
  row: JournalRow,
  reversalJournalId: string,
  context: WithdrawalContext,
): JournalDraft {
  const window = context.openWindowOf(original.node, original.accountingConfig);
  if (window === undefined)
    throw new AppError(
      'conflict',
      `journal ${row.journal_id} cannot be reversed: its node ${row.node} has no accounting configuration ${row.accounting_config} in the configuration`,
    );
  const dating = reversalDateOf(original.coreDate, window, context.postingDate);
  if (!dating.ok) throw postingDateRefused(context.postingDate ?? '', dating, row);
  return reversalJournalOf(original, dating, { journalId: reversalJournalId, newId: context.newId });
}

/** Inserts the reversal journals `drafts` and their lines inside the writer's transaction, logged for the extracts. */
async function insertReversalJournals(
  writer: Writer,
  adapter: DialectAdapter,
  drafts: ReversalDraft[],
  context: WithdrawalContext,
): Promise<void> {
  await writer.bulkInsert(
    writer.trx,
    'journals',
    REVERSAL_JOURNAL_COLUMNS,
    drafts.map(({ recordId, draft }) => [
      ...journalRow(recordId, draft, context.at, context.revision),
      context.reversalId,
    ]),
  );
  await writer.bulkInsert(writer.trx, 'journal_lines', LINE_COLUMNS, lineRows(drafts));
  await logWrittenJournals(
    writer.trx,
    adapter,
    drafts.map(({ draft }) => [draft.journalId, draft.status === 'posted' ? 1 : 0]),
  );
}

/** Adds the reversal journals `drafts` to the journal counts `counts`, by core date, posting and accounting configuration. */
function addJournalCounts(counts: Map<string, JournalCount>, drafts: readonly ReversalDraft[]): void {
  for (const { draft } of drafts) {
    const posted = draft.status === 'posted' ? 1 : 0;
    const key = `${draft.coreDate}/${posted}/${draft.accountingConfig}`;
    const count = counts.get(key) ?? {
      coreDate: draft.coreDate,
      posted,
      accountingConfig: draft.accountingConfig,
      journals: 0,
      lines: 0,
    };
    count.journals += 1;
    count.lines += draft.lines.length;
    counts.set(key, count);
  }
}
