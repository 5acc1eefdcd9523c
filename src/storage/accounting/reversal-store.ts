/**
 * The reversals port over Kysely (docs/adr/0020-corrections-as-reversal-journals.md). A request
 * is one transaction: the configuration row `FOR SHARE` (an upload that wipes waits for it, or
 * it for the upload), the request's row (whose unique idempotency key makes a concurrent
 * duplicate wait, then answer the first answer), the journals withdrawn and their reversal
 * journals with the kept balances and counters (`reversal-write.ts`), and the audit entry. A
 * selection is read in the journals list order from an index of its kind: the session's journals
 * (`journals_session_page_order`), an origin journal id's (`journals_origin_journal`), a
 * core-date range (`journals_page_order`), or the ids given. A request that reverses no journal
 * (each selected one reversed already, or a reversal journal itself) rolls back whole: no
 * reversal without journals is recorded, audited or announced.
 */

import type { Kysely, Selectable, Transaction } from 'kysely';
import { AppError } from '../../lib/errors.js';
import {
  REVERSAL_IDS_LISTED_MAX,
  REVERSAL_JOURNALS_PER_REQUEST_MAX,
  type ReversalCounts,
  type ReversalInput,
  type ReversalSelection,
  type ReversalStore,
  type StoredReversal,
} from '../../modules/accounting/store.js';
import { actorOfCaller } from '../../modules/audit/store.js';
import { markApprovalRan } from '../approval-store.js';
import { appendAudit } from '../audit-trail.js';
import type { BulkInsert } from '../bulk-insert.js';
import { createBulkInsert } from '../bulk-insert.js';
import { heldStoredRevision } from '../configuration-store.js';
import { countRows } from '../count.js';
import { errorCodeOf, isRetryableStoreError } from '../errors.js';
import { recordEvent } from '../events/outbox.js';
import { keyedPageOf } from '../keyed-page.js';
import { heldPeriodsVersion, readPeriodStates } from '../period-store.js';
import type { Database } from '../schema.js';
import type { DialectAdapter, Store } from '../store.js';
import type { ReversalsTable } from '../tables/accounting.js';
import { planWithdrawal, type Withdrawal, withdrawJournals } from './reversal-write.js';

/** Attempts of a request that met a deadlock or a serialization failure (PostgreSQL). */
const REVERSAL_ATTEMPTS_MAX = 3;

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
 * Thrown inside a reversal's transaction to roll it back when what it reversed is not what an
 * approved request was bound to (`ReversalInput.expectCounts`).
 */
class CountsMoved extends Error {
  readonly counts: ReversalCounts;
  constructor(counts: ReversalCounts) {
    super('the reversal counts differ from those approved');
    this.counts = counts;
  }
}

/**
 * Rolls a reversal's transaction back when no selected journal needed a reversal journal (each
 * was reversed already, or is a reversal journal itself): the row written first to hold the
 * idempotency key goes with it, so no empty reversal, audit entry or event remains.
 */
class NothingNew extends Error {
  readonly counts: ReversalCounts;
  constructor(counts: ReversalCounts) {
    super('no selected journal needs a reversal journal');
    this.counts = counts;
  }
}

/** The counts and totals of a reversal in one comparable text, whatever the order of its totals. */
function countsText(counts: ReversalCounts): string {
  const totals = counts.totals.map((total) => JSON.stringify(Object.entries(total).sort())).sort();
  return JSON.stringify([
    counts.journals,
    counts.lines,
    counts.alreadyReversed,
    counts.notReversible,
    totals,
  ]);
}

/** Whether `error` is the unique index of idempotency keys refusing a second row. */
function isUniqueViolation(error: unknown): boolean {
  const code = errorCodeOf(error);
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE';
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

/** The reversals port over `store` (see the header). */
export function createReversalStore(store: Store): ReversalStore {
  const { db, adapter } = store;
  const bulkInsert = createBulkInsert(store);
  return {
    periodStates: () => readPeriodStates(db),

    findByIdempotencyKey(clientId, idempotencyKey) {
      return findByKey(db, clientId, idempotencyKey);
    },

    async reverse(input) {
      for (let attempt = 1; ; attempt += 1) {
        try {
          return await reverseOnce(db, adapter, bulkInsert, input);
        } catch (error) {
          if (error instanceof CountsMoved) return { kind: 'moved', counts: error.counts };
          if (error instanceof NothingNew) return { kind: 'unchanged', counts: error.counts };
          // A concurrent request with the same key committed first: its answer is this one's.
          if (input.idempotencyKey !== undefined && isUniqueViolation(error)) {
            const earlier = await findByKey(db, input.clientId, input.idempotencyKey);
            if (earlier !== undefined) return { kind: 'replay', ...earlier };
          }
          if (attempt >= REVERSAL_ATTEMPTS_MAX || !isRetryableStoreError(error)) throw error;
        }
      }
    },

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

/** The reads of stored reversal requests, part of the reversals port. */
function createReversalReads(
  db: Kysely<Database>,
): Pick<ReversalStore, 'find' | 'reversalJournalIds' | 'list' | 'count'> {
  return {
    async find(reversalId) {
      const row = await db
        .selectFrom('reversals')
        .selectAll()
        .where('id', '=', reversalId)
        .executeTakeFirst();
      return row === undefined ? undefined : reversalOf(row);
    },

    async reversalJournalIds(reversalId, limit) {
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
    },

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

/** The request a client made with idempotency key `key`, with the digest it was made with. */
async function findByKey(executor: Kysely<Database>, clientId: string, key: string) {
  const row = await executor
    .selectFrom('reversals')
    .selectAll()
    .where('client_id', '=', clientId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
  return row === undefined ? undefined : { reversal: reversalOf(row), digest: row.request_digest };
}

/**
 * One attempt of `ReversalStore.reverse`, one transaction whose steps keep the order of the
 * header: the configuration row and the periods' version held, the request's row
 * (`insertRequestRow`), the journals withdrawn with their reversal journals, balances and
 * counters (`withdrawJournals`), the approval request, the request's counts (`storeCounts`),
 * then its audit entry and its event. Throws `CountsMoved` or `NothingNew` to roll it all back.
 */
function reverseOnce(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  bulkInsert: BulkInsert,
  input: ReversalInput,
) {
  return db.transaction().execute(async (trx) => {
    const revision = await heldStoredRevision(trx, adapter);
    if (revision !== input.revision) return { kind: 'stale' as const };
    // Held until the commit on PostgreSQL: a lock of a period waits for this reversal (period-store.ts).
    if ((await heldPeriodsVersion(trx, adapter)) !== input.periodsVersion) return { kind: 'stale' as const };
    if (input.idempotencyKey !== undefined) {
      const earlier = await findByKey(trx, input.clientId, input.idempotencyKey);
      if (earlier !== undefined) return { kind: 'replay' as const, ...earlier };
    }
    // The row first: a concurrent request with the same key waits on its unique index here.
    await insertRequestRow(trx, input, revision);
    const ids = await selectedIds(trx, input.selection);
    const counts = countsOf(
      await withdrawJournals(trx, bulkInsert, adapter, ids, {
        reversalId: input.reversalId,
        at: input.at,
        revision,
        ...(input.postingDate === undefined ? {} : { postingDate: input.postingDate }),
        openWindowOf: input.openWindowOf,
        newId: input.newId,
      }),
    );
    if (input.expectCounts !== undefined && countsText(counts) !== countsText(input.expectCounts))
      throw new CountsMoved(counts);
    if (counts.journals === 0) throw new NothingNew(counts);
    if (input.approvalRequestId !== undefined) await markApprovalRan(trx, input.approvalRequestId, input.at);
    const row = await storeCounts(trx, input.reversalId, counts);
    await auditReversal(trx, adapter, input, revision, counts);
    await recordEvent(
      trx,
      'reversal.completed',
      {
        reversalId: input.reversalId,
        createdBy: input.createdBy,
        reason: input.reason,
        postingDate: input.postingDate ?? null,
        journals: counts.journals,
        lines: counts.lines,
        alreadyReversed: counts.alreadyReversed,
        notReversible: counts.notReversible,
      },
      input.at,
    );
    return { kind: 'stored' as const, reversal: reversalOf(row) };
  });
}

/** Inserts the request's row, with no counts yet, inside `trx`: it holds the idempotency key. */
async function insertRequestRow(
  trx: Transaction<Database>,
  input: ReversalInput,
  revision: number,
): Promise<void> {
  await trx
    .insertInto('reversals')
    .values({
      id: input.reversalId,
      reason: input.reason,
      selection: JSON.stringify(input.selection),
      posting_date: input.postingDate ?? null,
      created_by: input.createdBy,
      client_id: input.clientId,
      created_at: input.at,
      revision,
      idempotency_key: input.idempotencyKey ?? null,
      request_digest: input.digest,
      journals: 0,
      lines: 0,
      already_reversed: 0,
      not_reversible: 0,
      details: '{}',
    })
    .execute();
}

/** Writes `counts` into the row of request `reversalId` inside `trx`; returns the row. */
async function storeCounts(trx: Transaction<Database>, reversalId: string, counts: ReversalCounts) {
  const details: ReversalDetails = {
    alreadyReversedIds: counts.alreadyReversedIds,
    notReversibleIds: counts.notReversibleIds,
    totals: counts.totals,
  };
  return trx
    .updateTable('reversals')
    .set({
      journals: counts.journals,
      lines: counts.lines,
      already_reversed: counts.alreadyReversed,
      not_reversible: counts.notReversible,
      details: JSON.stringify(details),
    })
    .where('id', '=', reversalId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Writes the audit entry of the reversal `input` made with `counts`, inside `trx`. */
async function auditReversal(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
  input: ReversalInput,
  revision: number,
  counts: ReversalCounts,
): Promise<void> {
  await appendAudit(trx, adapter, {
    at: input.at,
    action: 'journals.reverse',
    actor: actorOfCaller(input.createdBy, input.clientId),
    before: null,
    after: { reversalId: input.reversalId, journals: counts.journals, lines: counts.lines },
    configuration: { version: null, revision, sections: {}, deleted: null },
    details: {
      reversalId: input.reversalId,
      clientId: input.clientId,
      reason: input.reason,
      selection: input.selection,
      postingDate: input.postingDate ?? null,
      journals: counts.journals,
      lines: counts.lines,
      alreadyReversed: counts.alreadyReversed,
      notReversible: counts.notReversible,
    },
  });
}
