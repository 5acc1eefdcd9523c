/**
 * The events of ingestion sessions, recorded in the transactions that end a session (the close,
 * the sweep of expired sessions) and that process its records (the write path): one row per
 * session and event, never per record or chunk. A session is reported `ingestion.processed`
 * (with `processing.failed` when records failed processing) exactly once, by whichever of those
 * transactions first sees it both ended and fully processed: the conditional update of
 * `processed_reported` decides, under the session row's lock, so two instances never both report.
 */
import type { Selectable, Transaction } from 'kysely';
import type { Database } from '../schema.js';
import type { IngestionsTable } from '../tables/ingestion.js';
import { recordEvent } from './outbox.js';

/** The columns of a session row that its end reports. */
export type EndedSessionRow = Pick<
  Selectable<IngestionsTable>,
  | 'ingestion_id'
  | 'ingestion_name'
  | 'namespace'
  | 'entity'
  | 'chunks'
  | 'total_rows'
  | 'success_rows'
  | 'failed_rows'
>;

/** The columns the write path reads back from its update of the session row, to tell whether to report. */
export const PROCESSED_CHECK_COLUMNS = [
  'state',
  'expires_at_ms',
  'processed_rows',
  'success_rows',
  'processed_reported',
] as const;

/** Whether a session row read with `PROCESSED_CHECK_COLUMNS` may need its `ingestion.processed` now. */
export function mayReportProcessed(
  row: Pick<Selectable<IngestionsTable>, (typeof PROCESSED_CHECK_COLUMNS)[number]>,
  nowMs: number,
): boolean {
  const ended = row.state === 'closed' || Number(row.expires_at_ms) <= nowMs;
  return (
    ended && Number(row.processed_reported) === 0 && Number(row.processed_rows) >= Number(row.success_rows)
  );
}

/**
 * Records `ingestion.closed` (with `closedBy`) or `ingestion.expired` for a session that just
 * ended in `trx`, then its `ingestion.processed` when its records are all processed already.
 * Runs inside the caller's transaction, which holds the session row.
 */
export async function reportSessionEnded(
  trx: Transaction<Database>,
  row: EndedSessionRow,
  end: { closedBy: string; at: string } | { expiredOn: string },
  nowMs: number,
): Promise<void> {
  const common = {
    ingestionId: row.ingestion_id,
    ingestionName: row.ingestion_name,
    namespace: row.namespace,
    entity: row.entity,
    chunks: Number(row.chunks),
    totalRows: Number(row.total_rows),
    successRows: Number(row.success_rows),
    failedRows: Number(row.failed_rows),
  };
  if ('closedBy' in end) {
    await recordEvent(
      trx,
      'ingestion.closed',
      { ...common, endedOn: end.at, closedBy: end.closedBy },
      end.at,
    );
  } else {
    await recordEvent(trx, 'ingestion.expired', { ...common, endedOn: end.expiredOn }, end.expiredOn);
  }
  await reportProcessedIfDone(trx, row.ingestion_id, nowMs);
}

/**
 * Records `ingestion.processed`, and `processing.failed` with the failed records by code, for a
 * session that has ended and whose accepted records are all processed at `nowMs`, unless it was
 * reported before. Runs inside the caller's transaction.
 */
export async function reportProcessedIfDone(
  trx: Transaction<Database>,
  ingestionId: string,
  nowMs: number,
): Promise<void> {
  const row = await trx
    .updateTable('ingestions')
    .set({ processed_reported: 1 })
    .where('ingestion_id', '=', ingestionId)
    .where('processed_reported', '=', 0)
    .where((eb) => eb.or([eb('state', '=', 'closed'), eb('expires_at_ms', '<=', nowMs)]))
    .whereRef('processed_rows', '>=', 'success_rows')
    .returning([
      'namespace',
      'entity',
      'state',
      'success_rows',
      'failed_rows',
      'processed_rows',
      'processing_failed_rows',
    ])
    .executeTakeFirst();
  if (row === undefined) return;
  const at = new Date(nowMs).toISOString();
  const processingFailedRows = Number(row.processing_failed_rows);
  const failed = Number(row.failed_rows) > 0 || processingFailedRows > 0;
  await recordEvent(
    trx,
    'ingestion.processed',
    {
      ingestionId,
      namespace: row.namespace,
      entity: row.entity,
      state: row.state === 'closed' ? 'closed' : 'expired',
      successRows: Number(row.success_rows),
      failedRows: Number(row.failed_rows),
      processedRows: Number(row.processed_rows),
      processingFailedRows,
      processingStatus: failed ? 'completed_with_errors' : 'completed',
    },
    at,
  );
  if (processingFailedRows === 0) return;
  const codes = await trx
    .selectFrom('processing_errors')
    .select(['code', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('ingestion_id', '=', ingestionId)
    .groupBy('code')
    .orderBy('code')
    .execute();
  await recordEvent(
    trx,
    'processing.failed',
    {
      ingestionId,
      namespace: row.namespace,
      entity: row.entity,
      processingFailedRows,
      byCode: Object.fromEntries(codes.map((c) => [c.code, Number(c.n)])),
    },
    at,
  );
}
