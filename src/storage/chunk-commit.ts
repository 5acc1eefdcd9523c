/**
 * A chunk's commit, the one write of a chunk in the ingestion adapter (`createIngestionStore`):
 * the admission of its request, its sequence number, its row, records and sampled failed
 * records, and the counters, on each dialect; with what the commit answers when the chunk was
 * written before, its session is gone or its configuration changed. The chunk's one statement on
 * PostgreSQL is in `chunk-write-postgres.ts`.
 */
import { type ExpressionBuilder, type Kysely, type QueryCreator, sql, type Transaction } from 'kysely';
import type {
  ChunkOutcome,
  ChunkWrite,
  IngestionStore,
  StoredChunkOutcome,
} from '../modules/ingestion/store.js';
import { acceptedJsonTexts, SESSION_ERRORS_KEPT_MAX } from '../modules/ingestion/store.js';
import { type BulkInsert, createBulkInsert } from './bulk-insert.js';
import { writeChunkInOneStatement } from './chunk-write-postgres.js';
import { storedRevisionValue } from './configuration-store.js';
import { chunkRow, failedRecordsColumn, toOutcome } from './ingestion-rows.js';
import type { Database } from './schema.js';
import { countLateSessionWork, type LateSessionWork } from './session-counters.js';
import { sessionStateIs } from './session-state.js';
import { countEntityRecords } from './statistics-counters.js';
import { byDialect, type Store, writeTogether } from './store.js';

/** The columns of a stored record, in the order of its bulk-insert rows (the ingestion limit writes them too). */
export const RECORD_COLUMNS: readonly string[] = [
  'ingestion_id',
  'chunk_seq',
  'record_index',
  'namespace',
  'entity',
  'data',
  'processing',
  'created_at',
];

const RECORD_ERROR_COLUMNS: readonly string[] = [
  'ingestion_id',
  'chunk_seq',
  'record_index',
  'record',
  'errors',
  'created_at',
];

/** True for a unique-key violation (the idempotency key) on either dialect. */
function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** True for a foreign-key violation: the session was deleted while the chunk was written. */
function isForeignKeyViolation(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/**
 * How many of a chunk's `failedKept` its session's sample takes: the session's failed records
 * are numbered in the order their chunks are written, and those numbered below
 * `SESSION_ERRORS_KEPT_MAX` are kept. `failedBefore` is the session's count before this chunk
 * (`validation_failures`). The same rule is written in SQL in `chunk-write-postgres.ts`.
 */
function sampleTakes(failedBefore: number, kept: number): number {
  return Math.max(0, Math.min(kept, SESSION_ERRORS_KEPT_MAX - failedBefore));
}

/** Rolls a chunk's write back when the configuration changed since its records were validated. */
class StaleRevision extends Error {
  constructor() {
    super('the configuration changed since the chunk was validated');
  }
}

/** Rolls a chunk's write back when its session was deleted (a configuration upload) meanwhile. */
class SessionGone extends Error {
  constructor() {
    super('the session no longer exists');
  }
}

/**
 * What admitting a chunk request sets on its session row: the call is counted and, when the
 * session is still open now, its deadline runs from now (a session closed or expired since stays
 * so). Both dialects evaluate every SET expression on the row as it was before the update. A
 * counted session stays as counted (`session-counters.ts`): never reopened.
 */
export function admission(eb: ExpressionBuilder<Database, 'ingestions'>, nowMs: number, at: string) {
  const openNow = eb.and([sessionStateIs(eb, 'pending', nowMs), eb('counted', '=', 0)]);
  return {
    last_activity_on: eb.case().when(openNow).then(at).else(eb.ref('last_activity_on')).end(),
    expires_at_ms: eb
      .case()
      .when(openNow)
      .then(eb(sql.lit(nowMs), '+', eb.ref('timeout_ms')))
      .else(eb.ref('expires_at_ms'))
      .end(),
    api_calls: eb('api_calls', '+', 1),
  };
}

/** What a chunk adds to its session, worked out before anything is written. */
interface ChunkCounts {
  acceptedRows: number;
  /** Every failed record of the chunk, listed or omitted. */
  failedCount: number;
  /** What the chunk adds to the session's row counters. */
  counted: { chunks: number; totalRows: number; failedRows: number };
  /** What the chunk adds to its session's day counters when the session was counted already. */
  late: LateSessionWork;
}

/** What `write` adds to its session; throws when it keeps more failed records than it counts. */
function chunkCountsOf(write: ChunkWrite): ChunkCounts {
  // The session numbers the chunk's failed records from its count (`sampleTakes`): keeping
  // more than were counted would take numbers of the next chunk's.
  const failedCount = write.failed.length + write.failedOmitted;
  if (write.failedKept.length > failedCount)
    throw new Error(`a chunk of ${failedCount} failed records cannot keep ${write.failedKept.length}`);
  const acceptedRows = write.accepted.indexes.length;
  // A rejected chunk counts in no row counter: its records count when sent again and stored.
  const counted = write.rejected
    ? { chunks: 0, totalRows: 0, failedRows: 0 }
    : { chunks: 1, totalRows: write.totalRows, failedRows: write.totalRows - acceptedRows };
  const late = {
    chunks: counted.chunks,
    apiCalls: 1,
    totalRows: counted.totalRows,
    successRows: acceptedRows,
    failedRows: counted.failedRows,
  };
  return { acceptedRows, failedCount, counted, late };
}

/** The first `taken` of the chunk's `failedKept`, serialised for the session's sample. */
function failedTextsOf(write: ChunkWrite, taken: number) {
  return write.failedKept.slice(0, taken).map((f) => ({
    index: f.index,
    record: JSON.stringify(f.record) ?? 'null',
    errors: JSON.stringify(f.errors),
  }));
}

/**
 * The chunk's update of its session, which also admits the request (`admission`): one write of
 * the session row per chunk, in the chunk's transaction, rather than a transaction of its own
 * before the body is validated (on SQLite a commit, a sync of the file, saved per chunk).
 */
function countInSession(
  qc: QueryCreator<Database>,
  write: ChunkWrite,
  counts: ChunkCounts,
  takeSeq: boolean,
) {
  const { acceptedRows, counted } = counts;
  return (
    qc
      .updateTable('ingestions')
      .set((eb) => ({
        ...admission(eb, write.nowMs, write.at),
        chunk_seq_next: eb('chunk_seq_next', '+', takeSeq ? 1 : 0),
        chunks: eb('chunks', '+', counted.chunks),
        total_rows: eb('total_rows', '+', counted.totalRows),
        success_rows: eb('success_rows', '+', acceptedRows),
        failed_rows: eb('failed_rows', '+', counted.failedRows),
        processed_rows: eb('processed_rows', '+', write.awaitsProcessing ? 0 : acceptedRows),
        validation_failures: eb('validation_failures', '+', counts.failedCount),
      }))
      // Not filtered by the state: `admittedSession` found the session open at the arrival,
      // which stays true whatever happens since (a close in the same millisecond as the
      // arrival included); only a session deleted since is missed here.
      .where('ingestion_id', '=', write.ingestionId)
      .returning(['chunk_seq_next', 'counted', 'opened_on', 'validation_failures'])
  );
}

/** Inserts the chunk's accepted records inside the caller's transaction. */
async function insertRecords(
  trx: Transaction<Database>,
  bulkInsert: BulkInsert,
  write: ChunkWrite,
  chunkSeq: number,
): Promise<void> {
  const processing = write.awaitsProcessing ? 1 : 0;
  const texts = acceptedJsonTexts(write.accepted);
  await bulkInsert(
    trx,
    'records',
    RECORD_COLUMNS,
    write.accepted.indexes.map((index, i) => [
      write.ingestionId,
      chunkSeq,
      index,
      write.namespace,
      write.entity,
      texts[i],
      processing,
      write.at,
    ]),
  );
}

/** Writes the chunk on PostgreSQL and answers its sequence number. */
async function writeChunkPostgres(
  db: Kysely<Database>,
  write: ChunkWrite,
  counts: ChunkCounts,
  failedRecords: string,
): Promise<number> {
  const seq = await db
    .updateTable('ingestions')
    .set((eb) => ({ chunk_seq_next: eb('chunk_seq_next', '+', 1) }))
    .where('ingestion_id', '=', write.ingestionId)
    .returning(['chunk_seq_next', 'validation_failures'])
    .executeTakeFirst();
  if (seq === undefined) throw new SessionGone();
  const chunkSeq = Number(seq.chunk_seq_next);
  // The count only grows, so the sample takes no more than its room now: the failed
  // records past it are not sent to the server at all (none once the sample is full). The
  // statement numbers them against the count as its own update leaves it.
  const room = sampleTakes(Number(seq.validation_failures), write.failedKept.length);
  const written = await writeChunkInOneStatement(db, {
    write,
    chunkRow: chunkRow(write, chunkSeq, counts.acceptedRows, failedRecords),
    failedTexts: failedTextsOf(write, room),
    failedCount: counts.failedCount,
    sessionUpdate: (onlyIf) => countInSession(db, write, counts, false).where(onlyIf),
    lateWork: counts.late,
  });
  if (written === 'stale') throw new StaleRevision();
  return chunkSeq;
}

/** Writes the chunk on SQLite inside `trx` and answers its sequence number. */
async function writeChunkSqlite(
  trx: Transaction<Database>,
  bulkInsert: BulkInsert,
  write: ChunkWrite,
  counts: ChunkCounts,
  failedRecords: string,
): Promise<number> {
  const { acceptedRows } = counts;
  const session = await countInSession(trx, write, counts, true).executeTakeFirst();
  if (session === undefined) throw new SessionGone();
  const chunkSeq = Number(session.chunk_seq_next);
  // The revision is read by the chunk row's own insert; the transaction holds the one
  // write lock, so it is the one the chunk commits under.
  const stored = await trx
    .insertInto('chunks')
    .values(chunkRow(write, chunkSeq, acceptedRows, failedRecords))
    .returning(storedRevisionValue)
    .executeTakeFirstOrThrow();
  if (Number(stored.revision ?? 0) !== write.revision) throw new StaleRevision();
  await insertRecords(trx, bulkInsert, write, chunkSeq);
  const sampled = failedTextsOf(
    write,
    sampleTakes(Number(session.validation_failures) - counts.failedCount, write.failedKept.length),
  );
  await bulkInsert(
    trx,
    'record_errors',
    RECORD_ERROR_COLUMNS,
    sampled.map((f) => [write.ingestionId, chunkSeq, f.index, f.record, f.errors, write.at]),
  );
  // The statistics counters last (`statistics-counters.ts`).
  await countEntityRecords(trx, {
    ingestionId: write.ingestionId,
    namespace: write.namespace,
    entity: write.entity,
    waiting: write.awaitsProcessing ? acceptedRows : 0,
    done: write.awaitsProcessing ? 0 : acceptedRows,
    errors: 0,
  });
  // A chunk that arrived while the session was open, written after it was counted.
  if (session.counted === 1)
    await countLateSessionWork(
      trx,
      { ingestion_id: write.ingestionId, opened_on: session.opened_on },
      counts.late,
    );
  return chunkSeq;
}

/** The outcome of a chunk written with sequence number `chunkSeq`. */
function writtenOutcome(write: ChunkWrite, chunkSeq: number, acceptedRows: number): ChunkOutcome {
  return {
    kind: write.rejected ? 'rejected' : 'stored',
    ingestionId: write.ingestionId,
    chunkSeq,
    chunkName: write.chunkName,
    acceptedRows,
    failedRows: write.totalRows - acceptedRows,
    failed: write.failed,
    failedOmitted: write.failedOmitted,
    reference: write.reference,
    answeredAt: write.at,
  };
}

/** The stored outcome of the session's chunk sent under idempotency key `key`, if any. */
async function findChunkOutcome(
  db: Kysely<Database>,
  ingestionId: string,
  key: string,
): Promise<StoredChunkOutcome | undefined> {
  const row = await db
    .selectFrom('chunks')
    .selectAll()
    .where('ingestion_id', '=', ingestionId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
  return row === undefined ? undefined : { bodySha256: row.body_sha256, outcome: toOutcome(row) };
}

/**
 * The chunk's commit of the ingestion port over Kysely. On PostgreSQL a chunk takes its sequence
 * number in a statement of its own, then writes chunk and records, and adds to the session's
 * counters after them (and before the failed records its sample takes, which those counters
 * number), so the session row is locked only for the end of each chunk's transaction and
 * parallel chunks of one session overlap. On SQLite, where writes take turns, one transaction
 * does it all, the sequence number first. Records and errors go in through the bulk-insert path
 * (`bulk-insert.ts`).
 */
export function createChunkCommit(store: Store): Pick<IngestionStore, 'commitChunk'> {
  const { db } = store;
  const bulkInsert = createBulkInsert(store);
  return {
    async commitChunk(write) {
      const counts = chunkCountsOf(write);
      // The outcome is serialised before the sequence number is taken. The failed records are
      // serialised once the number tells how many the session's sample takes, so that a chunk
      // sent to a session whose sample is full serialises none: on SQLite inside the
      // transaction, which rolls the number back with it should that fail; on PostgreSQL after
      // the number's own statement (numbers may have gaps anyway). None can fail: they are
      // parsed JSON values of a bounded depth.
      const failedRecords = failedRecordsColumn(write);
      // On PostgreSQL the sequence number is taken in a statement of its own, so that chunks
      // of one session are written side by side without waiting for the session's row lock,
      // then the chunk is written in one statement (`chunk-write-postgres.ts`). On SQLite writes
      // take turns anyway: one transaction takes the number and writes the chunk, which saves a
      // commit (a sync of the file) per chunk.
      try {
        // On SQLite the chunk is written in the next group of writes (one commit for all), sized
        // by the rows it may write: its sample may take fewer of its failed records.
        const chunkSeq = await byDialect(store.dialect, {
          postgres: () => writeChunkPostgres(db, write, counts, failedRecords),
          sqlite: () =>
            writeTogether(store, write.accepted.indexes.length + write.failedKept.length, (trx) =>
              writeChunkSqlite(trx, bulkInsert, write, counts, failedRecords),
            ),
        })();
        return { kind: 'stored', outcome: writtenOutcome(write, chunkSeq, counts.acceptedRows) };
      } catch (error) {
        if (error instanceof StaleRevision) return { kind: 'stale' };
        if (error instanceof SessionGone) return { kind: 'gone' };
        if (isForeignKeyViolation(error)) return { kind: 'gone' };
        if (write.idempotencyKey !== null && isUniqueViolation(error)) {
          const earlier = await findChunkOutcome(db, write.ingestionId, write.idempotencyKey);
          if (earlier !== undefined) return { kind: 'replay', earlier };
        }
        throw error;
      }
    },
  };
}
