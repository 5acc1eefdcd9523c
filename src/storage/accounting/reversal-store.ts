/**
 * The reversals port over Kysely (docs/adr/0020-corrections-as-reversal-journals.md): the reads
 * of reversal requests and their dry run, and the tables a reversal writes in the change runner's
 * transaction (`reversalTablesIn`): the configuration row and the periods' version held `FOR
 * SHARE` (an upload that wipes, or a close or a lock, waits for the reversal, or it for them),
 * the journals withdrawn and their reversal journals with the kept balances and counters
 * (`reversal-write.ts`), and the request's row. A selection is read in the journals list order
 * from an index of its kind: the session's journals (`journals_session_page_order`), an origin
 * journal id's (`journals_origin_journal`), a core-date range (`journals_page_order`), or the ids
 * given.
 */

import type { Kysely, Selectable, Transaction } from 'kysely';
import { AppError } from '../../lib/errors.js';
import {
  REVERSAL_IDS_LISTED_MAX,
  REVERSAL_JOURNALS_PER_REQUEST_MAX,
  type ReversalCounts,
  type ReversalSelection,
  type ReversalStore,
  type ReversalTables,
  type StoredReversal,
} from '../../modules/accounting/store.js';
import type { BulkInsert } from '../bulk-insert.js';
import { heldStoredRevision } from '../configuration-store.js';
import { countRows } from '../count.js';
import { keyedPageOf } from '../keyed-page.js';
import { heldPeriodsVersion, readPeriodStates } from '../period-store.js';
import type { Database } from '../schema.js';
import type { DialectAdapter, Store } from '../store.js';
import type { ReversalsTable } from '../tables/accounting.js';
import { planWithdrawal, type Withdrawal, withdrawJournals } from './reversal-write.js';

/** What the `details` column holds. */
interface ReversalDetails {
  alreadyReversedIds: string[];
  notReversibleIds: string[];
  totals: ReversalCounts['totals'];
}

function reversalOf(row: Selectable<ReversalsTable>): StoredReversal {
  const details = JSON.parse(row.details) as ReversalDetails;
  return {
    reversalId: row.id,
    reason: row.reason,
    selection: JSON.parse(row.selection) as ReversalSelection,
    postingDate: row.posting_date,
    createdBy: row.created_by,
    createdAt: row.created_at,
    revision: Number(row.revision),
    journals: Number(row.journals),
    lines: Number(row.lines),
    alreadyReversed: Number(row.already_reversed),
    notReversible: Number(row.not_reversible),
    ...details,
  };
}

/** The counts of a withdrawal, with the first ids of each kind left alone. */
function countsOf(withdrawal: Withdrawal): ReversalCounts {
  return {
    journals: withdrawal.reversed.length,
    lines: withdrawal.lines,
    alreadyReversed: withdrawal.alreadyReversed.length,
    notReversible: withdrawal.notReversible.length,
    alreadyReversedIds: withdrawal.alreadyReversed.slice(0, REVERSAL_IDS_LISTED_MAX),
    notReversibleIds: withdrawal.notReversible.slice(0, REVERSAL_IDS_LISTED_MAX),
    totals: withdrawal.totals,
  };
}

/**
 * The ids of the journals `selection` names, in the journals list order (core date, instant
 * written, id), one more than allowed at most. Errors: `nothing-to-reverse` (none), `not-found`
 * (a `journalIds` id of no journal), `reversal-too-large`.
 */
async function selectedIds(db: Kysely<Database>, selection: ReversalSelection): Promise<string[]> {
  let ids: string[];
  if ('journalIds' in selection) {
    ids = [...new Set(selection.journalIds)];
    const found = new Set(
      (await db.selectFrom('journals').select('journal_id').where('journal_id', 'in', ids).execute()).map(
        (r) => r.journal_id,
      ),
    );
    const unknown = ids.filter((id) => !found.has(id));
    if (unknown.length > 0)
      throw new AppError('not-found', `no journal ${unknown.slice(0, 10).join(', ')}`, {
        errors: unknown.slice(0, 10).map((id) => ({
          path: `/selection/journalIds/${selection.journalIds.indexOf(id)}`,
          message: 'no such journal',
        })),
      });
  } else {
    let query = db.selectFrom('journals').select('journal_id');
    if ('ingestionId' in selection) query = query.where('ingestion_id', '=', selection.ingestionId);
    else if ('originJournalId' in selection)
      query = query.where('origin_journal_id', '=', selection.originJournalId);
    else
      query = query
        .where('core_date', '>=', selection.from)
        .where('core_date', '<=', selection.to)
        .where('accounting_config', '=', selection.accountingConfig);
    const rows = await query
      .orderBy('core_date')
      .orderBy('created_at')
      .orderBy('journal_id')
      .limit(REVERSAL_JOURNALS_PER_REQUEST_MAX + 1)
      .execute();
    ids = rows.map((r) => r.journal_id);
  }
  if (ids.length === 0) throw new AppError('nothing-to-reverse', 'the selection matched no journal');
  if (ids.length > REVERSAL_JOURNALS_PER_REQUEST_MAX)
    throw new AppError(
      'reversal-too-large',
      `the selection holds more than ${REVERSAL_JOURNALS_PER_REQUEST_MAX} journals: narrow it and reverse in several requests`,
      {
        errors: [
          {
            path: '/selection',
            message: `must select at most ${REVERSAL_JOURNALS_PER_REQUEST_MAX} journals`,
          },
        ],
      },
    );
  return ids;
}

/** The reads and dry runs of reversals over `store` (see the header). */
export function createReversalStore(store: Store): ReversalStore {
  const { db, adapter } = store;
  return {
    periodStates: () => readPeriodStates(db),

    async dryRun(input) {
      const ids = await selectedIds(db, input.selection);
      return countsOf(
        await planWithdrawal(db, adapter, ids, {
          ...(input.postingDate === undefined ? {} : { postingDate: input.postingDate }),
          openWindowOf: input.openWindowOf,
        }),
      );
    },

    ...createReversalReads(db),
  };
}

/** The tables a reversal writes, in the change runner's transaction `trx` (see the header). */
export function reversalTablesIn(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
  bulkInsert: BulkInsert,
): ReversalTables {
  return {
    async heldVersions() {
      const revision = await heldStoredRevision(trx, adapter);
      // Held until the commit on PostgreSQL: a lock of a period waits for this reversal (period-store.ts).
      return { revision, periodsVersion: await heldPeriodsVersion(trx, adapter) };
    },

    selectedIds: (selection) => selectedIds(trx, selection),

    async withdraw(ids, { postingDate, ...withdrawal }) {
      const context = { ...withdrawal, ...(postingDate === undefined ? {} : { postingDate }) };
      return countsOf(await withdrawJournals(trx, bulkInsert, adapter, ids, context));
    },

    async record(reversal) {
      const details: ReversalDetails = {
        alreadyReversedIds: reversal.alreadyReversedIds,
        notReversibleIds: reversal.notReversibleIds,
        totals: reversal.totals,
      };
      await trx
        .insertInto('reversals')
        .values({
          id: reversal.reversalId,
          reason: reversal.reason,
          selection: JSON.stringify(reversal.selection),
          posting_date: reversal.postingDate,
          created_by: reversal.createdBy,
          client_id: reversal.clientId,
          created_at: reversal.createdAt,
          revision: reversal.revision,
          journals: reversal.journals,
          lines: reversal.lines,
          already_reversed: reversal.alreadyReversed,
          not_reversible: reversal.notReversible,
          details: JSON.stringify(details),
        })
        .execute();
    },

    find: (reversalId) => findReversal(trx, reversalId),
    reversalJournalIds: (reversalId, limit) => reversalJournalIds(trx, reversalId, limit),
  };
}

/** The reversal request `reversalId`, if any. */
async function findReversal(db: Kysely<Database>, reversalId: string): Promise<StoredReversal | undefined> {
  const row = await db.selectFrom('reversals').selectAll().where('id', '=', reversalId).executeTakeFirst();
  return row === undefined ? undefined : reversalOf(row);
}

/** The first reversal journal ids request `reversalId` made, in journal list order. */
async function reversalJournalIds(
  db: Kysely<Database>,
  reversalId: string,
  limit: number,
): Promise<string[]> {
  const rows = await db
    .selectFrom('journals')
    .select('journal_id')
    .where('reversal_id', '=', reversalId)
    .orderBy('core_date')
    .orderBy('created_at')
    .orderBy('journal_id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.journal_id);
}

/** The reads of stored reversal requests, part of the reversals port. */
function createReversalReads(
  db: Kysely<Database>,
): Pick<ReversalStore, 'find' | 'reversalJournalIds' | 'list' | 'count'> {
  return {
    find: (reversalId) => findReversal(db, reversalId),

    reversalJournalIds: (reversalId, limit) => reversalJournalIds(db, reversalId, limit),

    async list(start, limit) {
      let query = db.selectFrom('reversals').selectAll();
      if ('after' in start) {
        const { createdAt, reversalId } = start.after;
        query = query.where((eb) =>
          eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(createdAt, reversalId)),
        );
      } else query = query.offset(start.page * limit);
      const rows = await query
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute();
      const page = keyedPageOf(rows, limit, (row) => ({ createdAt: row.created_at, reversalId: row.id }));
      return { rows: page.rows.map(reversalOf), next: page.next };
    },

    count() {
      return countRows(db.selectFrom('reversals'));
    },
  };
}
