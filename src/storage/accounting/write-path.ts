/**
 * The one write path of processing, shared by both claim protocols: mark a claim's records
 * processed (`markProcessed`), write what processing them produced (`writeOutcome`) or one
 * failure for all of them (`writeFailure`), then count them in their session
 * (`countProcessed`). The posted lines of an outcome go into the kept balances in the same
 * transaction (`balances.ts`), and what was written into the statistics counters last
 * (`statistics-counters.ts`). Every function runs inside the caller's transaction, which holds
 * the chunk (`claim-sqlite.ts`, `claim-postgres.ts`).
 */
import { sql, type Transaction } from 'kysely';
import { invariant } from '../../lib/invariant.js';
import type { ChunkRef, ClaimedChunk } from '../../modules/accounting/store.js';
import type { BulkInsert } from '../bulk-insert.js';
import { storedRevision } from '../configuration-store.js';
import {
  mayReportProcessed,
  PROCESSED_CHECK_COLUMNS,
  reportProcessedIfDone,
} from '../events/session-events.js';
import { logWrittenJournals } from '../extract-journal-log.js';
import type { Database } from '../schema.js';
import {
  countEntityRecords,
  countErrorStates,
  countJournals,
  countProcessingErrors,
} from '../statistics-counters.js';
import type { DialectAdapter } from '../store.js';
import { keepBalances } from './balances.js';
import {
  NOTHING_SETTLED,
  reprocessedRecords,
  type Settlement,
  settleReprocessed,
} from './reprocess-write.js';
import { settleRollbacks } from './rollback-write.js';
import { ERROR_COLUMNS, JOURNAL_COLUMNS, LINE_COLUMNS, type OutcomeRows } from './rows.js';

const JOURNAL_ID = JOURNAL_COLUMNS.indexOf('journal_id');
const JOURNAL_CORE_DATE = JOURNAL_COLUMNS.indexOf('core_date');
const JOURNAL_POSTED = JOURNAL_COLUMNS.indexOf('posted');
const JOURNAL_ACCOUNTING_CONFIG = JOURNAL_COLUMNS.indexOf('accounting_config');
const JOURNAL_LINE_COUNT = JOURNAL_COLUMNS.indexOf('line_count');
const ERROR_CREATED_AT = ERROR_COLUMNS.indexOf('created_at');
const ERROR_CODE = ERROR_COLUMNS.indexOf('code');
const ERROR_RECORD_ID = ERROR_COLUMNS.indexOf('record_id');
const ERROR_MESSAGE = ERROR_COLUMNS.indexOf('message');

/** The record ids, first and last, of the waiting records a claim holds. */
interface RecordRange {
  first: number;
  last: number;
}

/**
 * Marks the waiting records of `chunk` within `range` processed. Returns how many were marked:
 * fewer than the claim held when someone else processed them meanwhile (SQLite works on a chunk
 * outside the transaction) or an upload wiped them.
 */
async function markProcessed(
  trx: Transaction<Database>,
  chunk: ChunkRef,
  range: RecordRange,
): Promise<number> {
  const result = await trx
    .updateTable('records')
    .set({ processing: 0, reprocess_run: null })
    .where('ingestion_id', '=', chunk.ingestionId)
    .where('chunk_seq', '=', chunk.chunkSeq)
    .where('processing', '=', 1)
    // The claim holds the chunk's first waiting records by id, maybe not all of them (SQLite).
    .where('record_id', '>=', range.first)
    .where('record_id', '<=', range.last)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Adds `marked` records to their session's processed rows and `failed` of them to its failed
 * rows, asserting that the counts still reconcile (no more failed than processed, no more
 * processed than stored). Returns whether the session, ended, may now be fully processed: then
 * the caller, once it has written the processing errors, records its `ingestion.processed`
 * (`events/session-events.ts`), at most once per session.
 *
 * Called after the bulk writes of the transaction, not with the marking: the session's row stays
 * locked until the transaction commits, and every chunk written to that session, and every other
 * processing transaction of it (several at once on PostgreSQL), waits for that lock. Taken
 * before the journals were copied, it held chunk answers of a session being processed for the
 * whole copy (the processing-speed benchmark's figure 3b).
 */
async function countProcessed(
  trx: Transaction<Database>,
  chunk: ChunkRef,
  marked: number,
  failed: number,
  at: string,
): Promise<boolean> {
  const session = await trx
    .updateTable('ingestions')
    .set((eb) => ({
      processed_rows: eb('processed_rows', '+', marked),
      processing_failed_rows: eb('processing_failed_rows', '+', failed),
    }))
    .where('ingestion_id', '=', chunk.ingestionId)
    .returning([...PROCESSED_CHECK_COLUMNS, 'processing_failed_rows'])
    .executeTakeFirst();
  if (session === undefined) return false;
  const processed = Number(session.processed_rows);
  const processingFailed = Number(session.processing_failed_rows);
  invariant(
    processingFailed >= 0 && processingFailed <= processed && processed <= Number(session.success_rows),
    "a session's counters reconcile",
    () =>
      `session ${chunk.ingestionId} would count ${processed} records processed (${processingFailed} of them failed) of ${session.success_rows} stored`,
  );
  return mayReportProcessed(session, Date.parse(at));
}

/**
 * Marks the chunk's claimed records processed, writes the rows of what processing them produced,
 * the kept balances included (`balances.ts`), then counts them in their session and the
 * statistics counters. Returns false when the records were no longer all waiting: the caller
 * then rolls back, and nothing of this call stays. The steps keep the order of the header: the
 * records, the rows written (`insertOutcome`), the reprocessed errors, the session, then the
 * counters (`countOutcome`, `countRecordsDone`).
 */
export async function writeOutcome(
  trx: Transaction<Database>,
  bulkInsert: BulkInsert,
  adapter: DialectAdapter,
  chunk: ClaimedChunk,
  outcome: OutcomeRows,
): Promise<boolean> {
  // Rollback records become their reversals or errors here, where the twin they withdraw is read
  // and written in the one transaction (docs/domain/accounting.md, Rollback of business events).
  const rows = outcome.rollbacks.length === 0 ? outcome : await settleRollbacks(trx, adapter, chunk, outcome);
  const range = { first: chunk.records[0]?.recordId ?? 0, last: chunk.records.at(-1)?.recordId ?? 0 };
  const marked = await markProcessed(trx, chunk, range);
  if (marked !== chunk.records.length) return false;
  // Records put back into the queue by a reprocessing run settle their open error instead.
  const reprocessed = reprocessedRecords(chunk);
  const newErrors =
    reprocessed.size === 0
      ? rows.errors
      : rows.errors.filter((e) => !reprocessed.has(Number(e[ERROR_RECORD_ID])));
  await insertOutcome(trx, bulkInsert, adapter, rows, newErrors);
  const settled =
    reprocessed.size === 0
      ? NOTHING_SETTLED
      : await settleReprocessed(
          trx,
          adapter,
          reprocessed,
          rows.errors.map((e) => ({
            recordId: Number(e[ERROR_RECORD_ID]),
            code: String(e[ERROR_CODE]),
            message: String(e[ERROR_MESSAGE]),
          })),
          rows.at,
          rows.revision,
        );
  const mayReport = await countProcessed(trx, chunk, marked, rows.failedRecords, rows.at);
  await countOutcome(trx, rows, newErrors, settled);
  await countRecordsDone(trx, chunk, { marked, errors: rows.errors.length, settled, mayReport, at: rows.at });
  return true;
}

/**
 * Writes the rows of an outcome inside `trx`: its journals (logged for the extracts), their
 * lines, the `newErrors` of its records, then the kept balances.
 */
async function insertOutcome(
  trx: Transaction<Database>,
  bulkInsert: BulkInsert,
  adapter: DialectAdapter,
  rows: OutcomeRows,
  newErrors: unknown[][],
): Promise<void> {
  await bulkInsert(trx, 'journals', JOURNAL_COLUMNS, rows.journals);
  await logWrittenJournals(
    trx,
    adapter,
    rows.journals.map((j) => [String(j[JOURNAL_ID]), Number(j[JOURNAL_POSTED])]),
  );
  await bulkInsert(trx, 'journal_lines', LINE_COLUMNS, rows.lines);
  await bulkInsert(trx, 'processing_errors', ERROR_COLUMNS, newErrors);
  await keepBalances(trx, adapter, rows.balanceMoves);
}

/** Adds an outcome's journals and its `newErrors` (with the errors `settled` reopened) to the statistics counters. */
async function countOutcome(
  trx: Transaction<Database>,
  rows: OutcomeRows,
  newErrors: unknown[][],
  settled: Settlement,
): Promise<void> {
  await countJournals(
    trx,
    rows.journals.map((j) => ({
      coreDate: String(j[JOURNAL_CORE_DATE]),
      posted: Number(j[JOURNAL_POSTED]),
      accountingConfig: String(j[JOURNAL_ACCOUNTING_CONFIG]),
      journals: 1,
      lines: Number(j[JOURNAL_LINE_COUNT]),
    })),
  );
  await countProcessingErrors(trx, [
    ...newErrors.map((e) => ({
      createdAt: String(e[ERROR_CREATED_AT]),
      code: String(e[ERROR_CODE]),
      errors: 1,
    })),
    ...settled.reopened,
  ]);
}

/**
 * The last writes of a chunk's processing, shared by `writeOutcome` and `writeFailure`: its
 * `marked` records moved from waiting to done (`errors` of them failed) in the entity's counter,
 * the reprocessed errors `settled` in the error states, then, when `mayReport`, the session's
 * `ingestion.processed` if it is fully processed now.
 */
async function countRecordsDone(
  trx: Transaction<Database>,
  chunk: ChunkRef & { namespace: string; entity: string },
  done: { marked: number; errors: number; settled: Settlement; mayReport: boolean; at: string },
): Promise<void> {
  const { marked, errors, settled } = done;
  await countEntityRecords(trx, {
    ingestionId: chunk.ingestionId,
    namespace: chunk.namespace,
    entity: chunk.entity,
    waiting: -marked,
    done: marked,
    errors,
  });
  await countErrorStates(trx, [
    { ingestionId: chunk.ingestionId, queued: -settled.unqueued, closed: settled.closed },
  ]);
  if (done.mayReport) await reportProcessedIfDone(trx, chunk.ingestionId, Date.parse(done.at));
}

/**
 * Records `failure` as the processing error of each waiting record of `chunk` within `range`,
 * then marks them processed and counts them all failed. Returns how many. The records are
 * copied as stored: their JSON text never holds what a store refuses. The errors carry the
 * revision stored now, read in this transaction: a failure is put on a chunk under whatever
 * configuration holds when it is written. The steps keep the order of `writeOutcome`'s: the
 * errors (`insertFailures`), the records, the session, then the counters (`countRecordsDone`).
 */
export async function writeFailure(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
  chunk: ChunkRef & { namespace: string; entity: string },
  range: RecordRange,
  at: string,
  failure: { code: string; message: string },
): Promise<number> {
  const revision = await storedRevision(trx);
  const claimed = claimedRecords(trx, chunk, range);
  // Records a reprocessing run put back into the queue settle their open error instead.
  const rerun = await claimed
    .select(['record_id', 'reprocess_run'])
    .where('reprocess_run', 'is not', null)
    .execute();
  const settled =
    rerun.length === 0
      ? NOTHING_SETTLED
      : await settleReprocessed(
          trx,
          adapter,
          new Map(rerun.map((r) => [Number(r.record_id), Number(r.reprocess_run)])),
          rerun.map((r) => ({ recordId: Number(r.record_id), ...failure })),
          at,
          revision,
        );
  const errors = (await insertFailures(trx, claimed, failure, at, revision)) + rerun.length;
  const marked = await markProcessed(trx, chunk, range);
  const mayReport = marked > 0 && (await countProcessed(trx, chunk, marked, marked, at));
  await countProcessingErrors(trx, [
    { createdAt: at, code: failure.code, errors: errors - rerun.length },
    ...settled.reopened,
  ]);
  await countRecordsDone(trx, chunk, { marked, errors, settled, mayReport, at });
  return marked;
}

/** The waiting records of `chunk` within `range`, as `writeFailure` reads them inside `trx`. */
function claimedRecords(trx: Transaction<Database>, chunk: ChunkRef, range: RecordRange) {
  return trx
    .selectFrom('records')
    .where('ingestion_id', '=', chunk.ingestionId)
    .where('chunk_seq', '=', chunk.chunkSeq)
    .where('processing', '=', 1)
    .where('record_id', '>=', range.first)
    .where('record_id', '<=', range.last);
}

/**
 * Copies each of the `claimed` records that no reprocessing run queued into a processing error
 * of `failure`, under configuration `revision`, inside `trx`; returns how many.
 */
async function insertFailures(
  trx: Transaction<Database>,
  claimed: ReturnType<typeof claimedRecords>,
  failure: { code: string; message: string },
  at: string,
  revision: number,
): Promise<number> {
  const inserted = await trx
    .insertInto('processing_errors')
    .columns(ERROR_COLUMNS)
    .expression(
      claimed
        .where('reprocess_run', 'is', null)
        .select([
          'ingestion_id',
          'record_id',
          'namespace',
          'entity',
          sql<string>`cast(${failure.code} as text)`.as('code'),
          sql<string>`cast(${failure.message} as text)`.as('message'),
          'data',
          sql<string>`cast(${at} as text)`.as('created_at'),
          sql<number>`cast(${revision} as integer)`.as('revision'),
        ]),
    )
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0);
}
