import type { SessionRow, SessionState } from './session.js';

/** One validation failure of a record, as listed in chunk answers and the errors endpoint. */
export interface FieldErrorView {
  field: string;
  code: string;
  message: string;
}

export interface FailedRecord {
  index: number;
  record: unknown;
  errors: FieldErrorView[];
}

/** A chunk answer as stored, replayed for a repeated idempotency key (contract 4.2). */
export interface StoredChunkAnswer {
  bodySha256: string | null;
  statusCode: number;
  response: string;
}

/** Everything one chunk writes, in one transaction. */
export interface ChunkWrite {
  ingestionId: string;
  namespace: string;
  entity: string;
  chunkName: string | null;
  idempotencyKey: string | null;
  bodySha256: string | null;
  /** Records to store, already converted and serialised, in the order sent. */
  accepted: { index: number; json: string }[];
  /** Records that failed validation (kept in the errors list, never stored as records). */
  failed: FailedRecord[];
  /** Rows received: accepted + failed + valid records of a rejected atomic chunk. */
  totalRows: number;
  /** Whether the stored records wait for the accounting engine (else processed on arrival). */
  awaitsProcessing: boolean;
  /** Builds the answer once the chunk's sequence number is known. */
  answer(chunkSeq: number): { statusCode: number; body: unknown };
  at: string;
}

export interface SessionFilter {
  state?: SessionState;
  namespace?: string;
  entity?: string;
}

export interface StoredRecord {
  recordId: number;
  ingestionId: string;
  chunkSeq: number;
  index: number;
  data: string;
}

export interface SessionErrorRow {
  kind: 'validation' | 'processing';
  chunkSeq: number;
  index: number;
  record: string;
  errors: FieldErrorView[];
  at: string;
}

/**
 * The storage port of the ingestion module. Counters are changed in place by single
 * statements, so parallel chunks on any number of instances are counted exactly once, and
 * `commitChunk` is the one write path of a chunk: idempotency check, sequence number, records,
 * errors and the stored answer, all in one transaction.
 */
export interface IngestionStore {
  insertSession(row: SessionRow): Promise<void>;
  findSession(ingestionId: string): Promise<SessionRow | undefined>;
  listSessions(
    filter: SessionFilter,
    nowMs: number,
    page: number,
    limit: number,
  ): Promise<{ rows: SessionRow[]; total: number }>;
  /**
   * Records activity on an open session: extends its deadline and counts the call. Returns the
   * updated row, or undefined when the session is not open (closed, expired or unknown).
   */
  touchOpenSession(ingestionId: string, nowMs: number, at: string): Promise<SessionRow | undefined>;
  /** Closes an open session; returns the updated row, or undefined when it was not open. */
  closeOpenSession(
    ingestionId: string,
    closedBy: string,
    nowMs: number,
    at: string,
  ): Promise<SessionRow | undefined>;
  findChunkAnswer(ingestionId: string, idempotencyKey: string): Promise<StoredChunkAnswer | undefined>;
  /**
   * Writes a chunk. Returns `{ kind: 'stored' }` with the answer, `{ kind: 'replay' }` with the
   * earlier answer when a concurrent request stored the same idempotency key first, or
   * `{ kind: 'gone' }` when the session no longer exists (a configuration upload wiped it).
   */
  commitChunk(
    write: ChunkWrite,
  ): Promise<
    | { kind: 'stored'; chunkSeq: number; statusCode: number; body: unknown }
    | { kind: 'replay'; answer: StoredChunkAnswer }
    | { kind: 'gone' }
  >;
  listRecords(
    namespace: string,
    entity: string,
    ingestionId: string | undefined,
    page: number,
    limit: number,
  ): Promise<{ rows: StoredRecord[]; total: number }>;
  listErrors(
    ingestionId: string,
    page: number,
    limit: number,
  ): Promise<{ rows: SessionErrorRow[]; total: number }>;
}
