/**
 * The rows of ingestion sessions: the session, its chunks, its records and the errors of its
 * rejected records.
 */
import type { Generated } from 'kysely';

export interface IngestionsTable {
  ingestion_id: string;
  ingestion_name: string | null;
  namespace: string;
  entity: string;
  state: 'pending' | 'closed';
  timeout: string;
  timeout_ms: number;
  opened_by: string;
  opened_on: string;
  closed_by: string | null;
  closed_on: string | null;
  close_reason: 'manual' | null;
  last_activity_on: string;
  /** Epoch milliseconds: `now + timeout` at the last request, so SQL on both dialects can compare it. */
  expires_at_ms: number;
  /** The last chunk sequence number handed out; numbers are never reused, even by a failed chunk. */
  chunk_seq_next: number;
  /** Chunks answered (stored or rejected), counted in the chunk's own transaction. */
  chunks: number;
  api_calls: number;
  total_rows: number;
  success_rows: number;
  failed_rows: number;
  processed_rows: number;
  processing_failed_rows: number;
  /**
   * 1 once the session's numbers are in the session counters (migration 0016,
   * `session-counters.ts`): folded when it is closed, or by the sweep after it expired.
   */
  counted: Generated<number>;
  /** 1 once `ingestion.processed` was recorded for the session (migration 0025). */
  processed_reported: Generated<number>;
  /**
   * Every record of the session's chunks that failed validation, stored or rejected, kept in
   * `record_errors` or only counted (migration 0033). A chunk's write adds its failed records
   * and numbers them from the count before: those numbered below `SESSION_ERRORS_KEPT_MAX` are
   * the session's sample in `record_errors`, so it never grows past it.
   */
  validation_failures: Generated<number>;
}

export interface ChunksTable {
  ingestion_id: string;
  chunk_seq: number;
  chunk_name: string | null;
  idempotency_key: string | null;
  body_sha256: string | null;
  accepted_rows: number;
  failed_rows: number;
  created_at: string;
  /** 1 when an atomic chunk with failed records was rejected (nothing kept), else 0. */
  rejected: number;
  /**
   * The failed records of the chunk's outcome, as `{"listed": [...], "omitted": n}`: those its
   * answer listed, as sent with their errors, and how many more failed; rows written before the
   * list was capped hold the bare array. Only a chunk sent with an idempotency key is ever
   * replayed, so the others keep the count alone (`listed` empty, every failed record in
   * `omitted`): a chunk sent again and again without a key adds a small row each time.
   */
  failed_records: string;
  /** The reference of the request first answered, repeated by a replay (migration 0002). */
  answer_reference: string | null;
  /** When the chunk was first answered, repeated by a replay (migration 0002). */
  answered_at: string;
}

export interface RecordsTable {
  record_id: Generated<number>;
  ingestion_id: string;
  chunk_seq: number;
  record_index: number;
  namespace: string;
  entity: string;
  data: string;
  processing: number;
  created_at: string;
  /** The reprocessing run that put the record back into the queue, while it waits (migration 0018). */
  reprocess_run: Generated<number | null>;
}

/**
 * A session's sample of failed records, its first `SESSION_ERRORS_KEPT_MAX` (sessions written
 * before migration 0033 may hold more, from when each chunk kept its own), each within
 * `FAILED_RECORD_KEPT_BYTES_MAX` of JSON.
 */
export interface RecordErrorsTable {
  id: Generated<number>;
  ingestion_id: string;
  chunk_seq: number;
  record_index: number;
  record: string;
  errors: string;
  created_at: string;
}
