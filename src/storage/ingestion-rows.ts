import type { Selectable } from 'kysely';
import type {
  ChunkOutcome,
  ChunkWrite,
  FailedRecord,
  SessionRow,
  StoredChunkOutcome,
} from '../modules/ingestion/store.js';
import type { ChunksTable, IngestionsTable } from './tables/ingestion.js';

/** How the ingestion adapter (`ingestion-store.ts`) reads and writes its rows. */

export function toSession(row: Selectable<IngestionsTable>): SessionRow {
  return {
    ingestionId: row.ingestion_id,
    ingestionName: row.ingestion_name,
    namespace: row.namespace,
    entity: row.entity,
    state: row.state,
    timeout: row.timeout,
    timeoutMs: Number(row.timeout_ms),
    openedBy: row.opened_by,
    openedOn: row.opened_on,
    closedBy: row.closed_by,
    closedOn: row.closed_on,
    closeReason: row.close_reason,
    lastActivityOn: row.last_activity_on,
    expiresAtMs: Number(row.expires_at_ms),
    chunks: Number(row.chunks),
    apiCalls: Number(row.api_calls),
    totalRows: Number(row.total_rows),
    successRows: Number(row.success_rows),
    failedRows: Number(row.failed_rows),
    processedRows: Number(row.processed_rows),
    processingFailedRows: Number(row.processing_failed_rows),
  };
}

/**
 * The `failed_records` column: the listed failed records and how many more failed, as
 * `{"listed": [...], "omitted": n}`; rows written before the list was capped hold the bare array.
 */
function failedRecordsOf(column: string): { listed: FailedRecord[]; omitted: number } {
  const stored = JSON.parse(column) as FailedRecord[] | { listed: FailedRecord[]; omitted: number };
  return Array.isArray(stored) ? { listed: stored, omitted: 0 } : stored;
}

/**
 * The `failed_records` column of a chunk: the failed records its answer listed and how many more
 * failed; for a chunk sent without an idempotency key, which no request can replay, the count
 * alone, so that sending it again and again stores a small row each time.
 */
export function failedRecordsColumn(write: ChunkWrite): string {
  return write.idempotencyKey === null
    ? JSON.stringify({ listed: [], omitted: write.failed.length + write.failedOmitted })
    : JSON.stringify({ listed: write.failed, omitted: write.failedOmitted });
}

/** How many records of a chunk failed validation, by its `failed_records` column (any form). */
export function failedCountOf(column: string): number {
  const { listed, omitted } = failedRecordsOf(column);
  return listed.length + omitted;
}

export function toOutcome(row: Selectable<ChunksTable>): ChunkOutcome {
  const { listed, omitted } = failedRecordsOf(row.failed_records);
  return {
    kind: row.rejected === 1 ? 'rejected' : 'stored',
    ingestionId: row.ingestion_id,
    chunkSeq: Number(row.chunk_seq),
    chunkName: row.chunk_name,
    acceptedRows: Number(row.accepted_rows),
    failedRows: Number(row.failed_rows),
    failed: listed,
    failedOmitted: omitted,
    reference: row.answer_reference,
    answeredAt: row.answered_at,
  };
}

/** The key's chunk as `chunkAdmission` reads it beside its session, every column prefixed `earlier_`. */
type EarlierChunkColumns = {
  [K in keyof Selectable<ChunksTable> as K extends 'ingestion_id' ? never : `earlier_${K}`]:
    | Selectable<ChunksTable>[K]
    | null;
};

/** The stored outcome of the key's chunk read beside its session; undefined when none was found. */
export function earlierOutcomeOf(
  row: EarlierChunkColumns & { ingestion_id: string },
): StoredChunkOutcome | undefined {
  // A chunk found has every column; the defaults only tell the compiler so.
  if (row.earlier_chunk_seq === null) return undefined;
  return {
    bodySha256: row.earlier_body_sha256,
    outcome: toOutcome({
      ingestion_id: row.ingestion_id,
      chunk_seq: row.earlier_chunk_seq,
      chunk_name: row.earlier_chunk_name,
      idempotency_key: row.earlier_idempotency_key,
      body_sha256: row.earlier_body_sha256,
      accepted_rows: row.earlier_accepted_rows ?? 0,
      failed_rows: row.earlier_failed_rows ?? 0,
      created_at: row.earlier_created_at ?? '',
      rejected: row.earlier_rejected ?? 0,
      failed_records: row.earlier_failed_records ?? '[]',
      answer_reference: row.earlier_answer_reference,
      answered_at: row.earlier_answered_at ?? '',
    }),
  };
}

/** The `chunks` row of a chunk written with sequence number `chunkSeq`. */
export function chunkRow(write: ChunkWrite, chunkSeq: number, acceptedRows: number, failedRecords: string) {
  return {
    ingestion_id: write.ingestionId,
    chunk_seq: chunkSeq,
    chunk_name: write.chunkName,
    idempotency_key: write.idempotencyKey,
    body_sha256: write.bodySha256,
    accepted_rows: acceptedRows,
    failed_rows: write.totalRows - acceptedRows,
    created_at: write.at,
    rejected: write.rejected ? 1 : 0,
    failed_records: failedRecords,
    answer_reference: write.reference,
    answered_at: write.at,
  };
}
