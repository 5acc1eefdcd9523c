import type { KeyedPage, PageStart } from '../../lib/keyed-page.js';
import type { AuditActor } from '../audit/entry.js';
import type { SessionRow, SessionState } from './session.js';

/** How many failed records a session's error list keeps, which the chunk's write enforces. */
export { SESSION_ERRORS_KEPT_MAX } from './chunk-body.js';
/** The session row and its derived state, which the storage adapter reads and writes. */
export type { SessionRow, SessionState };

/**
 * The accepted records of a chunk, converted and serialised, as they wait for their write: the
 * JSON text of each on a line of one string, and their indexes in the chunk, in order.
 *
 * One string rather than one per record: under many clients a chunk waits for its write while
 * others are handled, and the 500 small strings of a chunk kept that long outlived the young
 * generation, so the event loop copied them and its old generation's collections marked them;
 * one large string is one object, allocated where nothing copies it. `JSON.stringify` writes no
 * line feed of its own and escapes those inside strings, so each record is exactly one line.
 */
export interface AcceptedRecords {
  /** The index in the chunk of each record, in order. */
  indexes: number[];
  /** The JSON texts, in the same order, joined by line feeds; empty when there are none. */
  lines: string;
}

/** No record accepted (an atomic chunk rejected). */
export const NO_RECORDS: AcceptedRecords = { indexes: [], lines: '' };

/** Serialises converted records, in the order given. */
export function acceptedRecordsOf(records: readonly { index: number; value: unknown }[]): AcceptedRecords {
  return {
    indexes: records.map((record) => record.index),
    lines: records.map((record) => JSON.stringify(record.value) ?? 'null').join('\n'),
  };
}

/** The JSON text of each accepted record, in order. */
export function acceptedJsonTexts(accepted: AcceptedRecords): string[] {
  return accepted.indexes.length === 0 ? [] : accepted.lines.split('\n');
}

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

/**
 * What a chunk request came to. It is stored with the chunk, so a repeated idempotency key gets
 * the same outcome back; the HTTP layer renders it (201, or 400 `chunk-invalid`).
 */
export interface ChunkOutcome {
  /**
   * `stored`: the chunk was kept, with its failed records listed (under `partial`);
   * `rejected`: an atomic chunk had failed records, and nothing of it was kept.
   */
  kind: 'stored' | 'rejected';
  ingestionId: string;
  chunkSeq: number;
  chunkName: string | null;
  acceptedRows: number;
  /** Rows not kept: the failed records, or every row of a rejected chunk. */
  failedRows: number;
  /**
   * The first records that failed validation (at most `CHUNK_ERRORS_SHOWN_MAX`), as sent, with
   * their errors.
   */
  failed: FailedRecord[];
  /** Failed records left out of `failed`. */
  failedOmitted: number;
  /**
   * The reference of the request first answered with this outcome, which a replay repeats;
   * null for stored chunks answered before references were kept with the outcome.
   */
  reference: string | null;
  /** When the outcome was first answered (RFC 3339), which a replay repeats. */
  answeredAt: string;
}

/** A chunk outcome as stored, with the digest of the body that produced it. */
export interface StoredChunkOutcome {
  bodySha256: string | null;
  outcome: ChunkOutcome;
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
  accepted: AcceptedRecords;
  /** The first records that failed validation, as the answer lists them. */
  failed: FailedRecord[];
  /** Failed records left out of `failed`: `failed` and these are every failed record. */
  failedOmitted: number;
  /**
   * The first records that failed validation, `failed` and more (at most
   * `SESSION_ERRORS_KEPT_MAX`), as the session's error list keeps them (never stored as
   * records). The write keeps those that the session's sample still has room for: the session's
   * failed records are numbered in the order their chunks are written, and those numbered below
   * `SESSION_ERRORS_KEPT_MAX` are kept; the others are only counted.
   */
  failedKept: FailedRecord[];
  /** Rows received: accepted + failed + valid records of a rejected atomic chunk. */
  totalRows: number;
  /**
   * Whether an atomic chunk was rejected (then `accepted` is empty). A rejected chunk keeps its
   * outcome (for replays, so in full only when it has an idempotency key) and its failed records
   * that the session's sample takes (readable by its `chunkSeq`), but adds nothing to the
   * session's `chunks`, `totalRows`, `successRows` and `failedRows`: its records are counted
   * when they are sent again and stored.
   */
  rejected: boolean;
  /** Whether the stored records wait for processing, by the engine or a flow (else processed on arrival). */
  awaitsProcessing: boolean;
  /** The reference of the request, kept with the outcome. */
  reference: string;
  /**
   * When the chunk is handled: `at` as text, `nowMs` as milliseconds, on the service's clock. The
   * write counts the call and extends the session's deadline from `nowMs` as `touchSession`
   * does, in the chunk's own transaction; the session was found open at the request's arrival
   * by `chunkAdmission` before.
   */
  at: string;
  nowMs: number;
  /**
   * The configuration revision the records were validated under: the chunk is written only
   * while it is still the stored one, so that no record lands under rules it was not checked
   * against (an upload that keeps the processing data checks the records stored before it).
   */
  revision: number;
}

export interface SessionFilter {
  state?: SessionState;
  namespace?: string;
  entity?: string;
}

/**
 * The sort key of the sessions list, newest first: the instant opened, then the id, which is
 * unique and so makes the order total (a cursor names exactly one position).
 */
export interface SessionKey {
  openedOn: string;
  ingestionId: string;
}

export interface StoredRecord {
  recordId: number;
  ingestionId: string;
  chunkSeq: number;
  index: number;
  data: string;
}

/** One chunk a session received, as listed for operators (without its records). */
export interface ChunkSummary {
  chunkSeq: number;
  chunkName: string | null;
  /** `stored` (its accepted records kept) or `rejected` (an atomic chunk with failed records). */
  kind: ChunkOutcome['kind'];
  acceptedRows: number;
  failedRows: number;
  idempotencyKey: string | null;
  /** The reference of the request first answered with this chunk's outcome, when kept. */
  reference: string | null;
  answeredAt: string;
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
 * How many failed records a session's error list holds, and how many it stands for in all: the
 * listed ones (its `totalSize`) and the validation failures past the session's sample, which
 * are only counted.
 */
export interface SessionErrorCounts {
  listed: number;
  inAll: number;
}

/**
 * The sort key of a session's error list: validation failures come before processing errors,
 * each part in the order written (by the id of its table).
 */
export interface SessionErrorKey {
  kind: SessionErrorRow['kind'];
  id: number;
}

/**
 * The storage port of the ingestion module. Counters are changed in place by single
 * statements, so parallel chunks on any number of instances are counted exactly once, and
 * `commitChunk` is the one write path of a chunk: idempotency check, sequence number, records,
 * errors and the stored outcome, all in one transaction.
 */
export interface IngestionStore {
  insertSession(row: SessionRow): Promise<void>;
  findSession(ingestionId: string): Promise<SessionRow | undefined>;
  /**
   * A page of sessions matching `filter` (state as of `nowMs`), newest first in the order of
   * {@link SessionKey}, from a page number or after a key, and the key of its last session when
   * more follow. Counts nothing.
   */
  listSessions(
    filter: SessionFilter,
    nowMs: number,
    start: PageStart<SessionKey>,
    limit: number,
  ): Promise<KeyedPage<SessionRow, SessionKey>>;
  /** The number of sessions matching `filter` as of `nowMs`: the `totalSize` of page paging. */
  countSessions(filter: SessionFilter, nowMs: number): Promise<number>;
  /**
   * What a chunk request that arrived at `arrivedAtMs` meets, in one read: `session`, the row of
   * the session it writes to when the session was open at the arrival (else undefined), and
   * `earlier`, the stored outcome of the chunk sent with `idempotencyKey` in this session, if
   * any. Reads only: the chunk's write counts the call.
   */
  chunkAdmission(
    ingestionId: string,
    arrivedAtMs: number,
    idempotencyKey: string | undefined,
  ): Promise<{ session: SessionRow | undefined; earlier: StoredChunkOutcome | undefined }>;
  /**
   * Admits a chunk request that arrived at `arrivedAtMs` and is handled at `nowMs`, in one
   * statement: when the session was open at the arrival, counts the call and, if the session is
   * still open now, extends its deadline from now (a session closed or expired since stays so).
   * Returns the updated row, or undefined when the session was not open at the arrival (closed
   * or expired before it) or does not exist. For a chunk request that writes nothing (its body is
   * refused); `commitChunk` does the same for the chunks it writes.
   */
  touchSession(
    ingestionId: string,
    arrivedAtMs: number,
    nowMs: number,
    at: string,
  ): Promise<SessionRow | undefined>;
  /**
   * Closes an open session with its audit entry (`ingestions.close`, by `closedBy`) in one
   * transaction; returns the updated row, or undefined (and writes nothing) when it was not open.
   */
  closeOpenSession(
    ingestionId: string,
    closedBy: AuditActor,
    nowMs: number,
    at: string,
  ): Promise<SessionRow | undefined>;
  /**
   * Writes a chunk. Returns `{ kind: 'stored' }` with its outcome, `{ kind: 'replay' }` with the
   * earlier outcome when a concurrent request stored the same idempotency key first,
   * `{ kind: 'gone' }` when the session no longer exists (a configuration upload wiped it), or
   * `{ kind: 'stale' }`, writing nothing, when the stored configuration revision is no longer
   * `write.revision` (the caller validates again under the new one).
   */
  commitChunk(
    write: ChunkWrite,
  ): Promise<
    | { kind: 'stored'; outcome: ChunkOutcome }
    | { kind: 'replay'; earlier: StoredChunkOutcome }
    | { kind: 'gone' }
    | { kind: 'stale' }
  >;
  /**
   * A page of an entity's stored records (of one session when `ingestionId` is given) in arrival
   * order, from a page number or after a `recordId`, and the id of its last record when more
   * follow. Counts nothing.
   */
  listRecords(
    namespace: string,
    entity: string,
    ingestionId: string | undefined,
    start: PageStart<number>,
    limit: number,
  ): Promise<KeyedPage<StoredRecord, number>>;
  /** The number of records `listRecords` walks. */
  countRecords(namespace: string, entity: string, ingestionId: string | undefined): Promise<number>;
  /**
   * Failed records of a session: validation failures, then processing errors, each in the
   * order written. Validation failures are those the session kept (its first
   * `SESSION_ERRORS_KEPT_MAX`). Without `chunkSeq`, those of the chunks that were stored (those
   * `failedRows` counts); with it, those of that one chunk, stored or rejected, and the
   * processing errors of its records.
   */
  listErrors(
    ingestionId: string,
    chunkSeq: number | undefined,
    start: PageStart<SessionErrorKey>,
    limit: number,
  ): Promise<KeyedPage<SessionErrorRow, SessionErrorKey>>;
  /**
   * The number of failed records `listErrors` walks (`listed`), and the number it stands for
   * (`inAll`): with the validation failures past the session's sample, counted by the session's
   * `failedRows` (without `chunkSeq`) or by the chunk.
   */
  countErrors(ingestionId: string, chunkSeq: number | undefined): Promise<SessionErrorCounts>;
  /** A session's chunks in the order they were numbered (`chunkSeq`), a page at a time. */
  listChunks(
    ingestionId: string,
    page: number,
    limit: number,
  ): Promise<{ rows: ChunkSummary[]; total: number }>;
}
