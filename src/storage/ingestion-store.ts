/*
 * The ingestion adapter, a little over 500 lines: the chunk's write, the session writes and the
 * reads share the closures of `createIngestionStore` (the bulk insert and its prepared
 * statements, the filters of sessions and records, a chunk's earlier outcome); what stands
 * apart already lives beside it: its rows in `ingestion-rows.ts`, a session's errors in
 * `session-errors.ts`, the session counters in `session-counters.ts`, the chunk's one statement
 * on PostgreSQL in `chunk-write-postgres.ts`.
 */
import { type ExpressionBuilder, type Kysely, type QueryCreator, sql, type Transaction } from 'kysely';
import type {
  ChunkOutcome,
  ChunkWrite,
  IngestionStore,
  SessionFilter,
  StoredChunkOutcome,
} from '../modules/ingestion/store.js';
import { acceptedJsonTexts, SESSION_ERRORS_KEPT_MAX } from '../modules/ingestion/store.js';
import { appendAudit } from './audit-trail.js';
import { createBulkInsert } from './bulk-insert.js';
import { writeChunkInOneStatement } from './chunk-write-postgres.js';
import { storedRevisionValue } from './configuration-store.js';
import { countRows } from './count.js';
import { reportSessionEnded } from './events/session-events.js';
import { chunkRow, earlierOutcomeOf, failedRecordsColumn, toOutcome, toSession } from './ingestion-rows.js';
import { keyedPageOf } from './keyed-page.js';
import type { Database } from './schema.js';
import {
  countLateSessionWork,
  countSession,
  countSessionsMatching,
  lateSessionWorkUpdate,
  NO_WORK,
} from './session-counters.js';
import { createSessionErrorReads } from './session-errors.js';
import { sessionStateIs, sessionWasOpenAt } from './session-state.js';
import { countEntityRecords } from './statistics-counters.js';
import { byDialect, type Store, writeStatement, writeTogether } from './store.js';

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
function admission(eb: ExpressionBuilder<Database, 'ingestions'>, nowMs: number, at: string) {
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

/**
 * The ingestion port over Kysely. On PostgreSQL a chunk takes its sequence number in a statement
 * of its own, then writes chunk and records, and adds to the session's counters after them (and
 * before the failed records its sample takes, which those counters number), so the session row
 * is locked only for the end of each chunk's transaction and parallel chunks of one session
 * overlap. On SQLite, where writes take turns, one transaction does it all, the sequence number
 * first. Records and errors go in through the bulk-insert path (`bulk-insert.ts`).
 */
export function createIngestionStore(store: Store): IngestionStore {
  const { db } = store;
  const bulkInsert = createBulkInsert(store);

  /**
   * The sessions `filter` selects as of `nowMs`: the WHERE of their page, and of the part of
   * their total that is not yet in the session counters.
   */
  function sessionsMatching(filter: SessionFilter, nowMs: number) {
    let query = db.selectFrom('ingestions');
    if (filter.namespace !== undefined) query = query.where('namespace', '=', filter.namespace);
    if (filter.entity !== undefined) query = query.where('entity', '=', filter.entity);
    const { state } = filter;
    if (state !== undefined) query = query.where((eb) => sessionStateIs(eb, state, nowMs));
    return query;
  }

  /** An entity's records, of one session when `ingestionId` is given (index `records_entity`). */
  function recordsMatching(namespace: string, entity: string, ingestionId: string | undefined) {
    const query = db.selectFrom('records').where('namespace', '=', namespace).where('entity', '=', entity);
    return ingestionId === undefined ? query : query.where('ingestion_id', '=', ingestionId);
  }

  async function insertRecords(
    trx: Transaction<Database>,
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

  async function findChunkOutcome(ingestionId: string, key: string): Promise<StoredChunkOutcome | undefined> {
    const row = await db
      .selectFrom('chunks')
      .selectAll()
      .where('ingestion_id', '=', ingestionId)
      .where('idempotency_key', '=', key)
      .executeTakeFirst();
    return row === undefined ? undefined : { bodySha256: row.body_sha256, outcome: toOutcome(row) };
  }

  return {
    async insertSession(row) {
      const insert = (qc: Kysely<Database>) =>
        qc
          .insertInto('ingestions')
          .values({
            ingestion_id: row.ingestionId,
            ingestion_name: row.ingestionName,
            namespace: row.namespace,
            entity: row.entity,
            state: row.state,
            timeout: row.timeout,
            timeout_ms: row.timeoutMs,
            opened_by: row.openedBy,
            opened_on: row.openedOn,
            closed_by: row.closedBy,
            closed_on: row.closedOn,
            close_reason: row.closeReason,
            last_activity_on: row.lastActivityOn,
            expires_at_ms: row.expiresAtMs,
            chunk_seq_next: 0,
            chunks: row.chunks,
            api_calls: row.apiCalls,
            total_rows: row.totalRows,
            success_rows: row.successRows,
            failed_rows: row.failedRows,
            processed_rows: row.processedRows,
            processing_failed_rows: row.processingFailedRows,
          })
          .execute();
      // One statement: on PostgreSQL it commits by itself; on SQLite it shares the next group's
      // commit with the chunks and sessions written at the same time.
      await writeStatement(store, 1, insert);
    },

    async findSession(ingestionId) {
      const row = await db
        .selectFrom('ingestions')
        .selectAll()
        .where('ingestion_id', '=', ingestionId)
        .executeTakeFirst();
      return row === undefined ? undefined : toSession(row);
    },

    async listSessions(filter, nowMs, start, limit) {
      let query = sessionsMatching(filter, nowMs);
      if ('after' in start) {
        const { openedOn, ingestionId } = start.after;
        query = query.where((eb) =>
          eb(eb.refTuple('opened_on', 'ingestion_id'), '<', eb.tuple(openedOn, ingestionId)),
        );
      } else query = query.offset(start.page * limit);
      const rows = await query
        .selectAll()
        .orderBy('opened_on', 'desc')
        .orderBy('ingestion_id', 'desc')
        .limit(limit + 1)
        .execute();
      const page = keyedPageOf(rows, limit, (row) => ({
        openedOn: row.opened_on,
        ingestionId: row.ingestion_id,
      }));
      return { rows: page.rows.map(toSession), next: page.next };
    },

    countSessions(filter, nowMs) {
      return countSessionsMatching(db, filter, sessionsMatching(filter, nowMs));
    },

    async chunkAdmission(ingestionId, arrivedAtMs, idempotencyKey) {
      // The key's chunk joined to its session (a chunk never outlives its session); without a
      // key the join matches nothing (`= null` is never true).
      const row = await db
        .selectFrom('ingestions')
        .leftJoin('chunks', (join) =>
          join
            .onRef('chunks.ingestion_id', '=', 'ingestions.ingestion_id')
            .on('chunks.idempotency_key', '=', idempotencyKey ?? null),
        )
        .selectAll('ingestions')
        .select((eb) => [
          // The session's own columns, which no chunk column shares a name with.
          eb
            .case()
            .when(sessionWasOpenAt(eb as unknown as ExpressionBuilder<Database, 'ingestions'>, arrivedAtMs))
            .then(1)
            .else(0)
            .end()
            .as('admitted'),
          'chunks.chunk_seq as earlier_chunk_seq',
          'chunks.chunk_name as earlier_chunk_name',
          'chunks.idempotency_key as earlier_idempotency_key',
          'chunks.body_sha256 as earlier_body_sha256',
          'chunks.accepted_rows as earlier_accepted_rows',
          'chunks.failed_rows as earlier_failed_rows',
          'chunks.created_at as earlier_created_at',
          'chunks.rejected as earlier_rejected',
          'chunks.failed_records as earlier_failed_records',
          'chunks.answer_reference as earlier_answer_reference',
          'chunks.answered_at as earlier_answered_at',
        ])
        .where('ingestions.ingestion_id', '=', ingestionId)
        .executeTakeFirst();
      if (row === undefined) return { session: undefined, earlier: undefined };
      const earlier = earlierOutcomeOf(row);
      return { session: Number(row.admitted) === 1 ? toSession(row) : undefined, earlier };
    },

    touchSession(ingestionId, arrivedAtMs, nowMs, at) {
      const touch = (qc: QueryCreator<Database>) =>
        qc
          .updateTable('ingestions')
          .set((eb) => admission(eb, nowMs, at))
          .where('ingestion_id', '=', ingestionId)
          .where((eb) => sessionWasOpenAt(eb, arrivedAtMs))
          .returningAll();
      return byDialect(store.dialect, {
        // One statement, so the touch of every chunk stays one round trip: the call of a late
        // request goes to its counted session's day counter through a data-modifying WITH.
        postgres: async () => {
          const row = await db
            .with('touched', (qc) => touch(qc))
            .with('late', () =>
              lateSessionWorkUpdate(db, ingestionId, { ...NO_WORK, apiCalls: 1 }).where(
                sql<boolean>`day in (select substr(opened_on, 1, 10) from touched where counted = 1)`,
              ),
            )
            .selectFrom('touched')
            .selectAll()
            .executeTakeFirst();
          return row === undefined ? undefined : toSession(row);
        },
        sqlite: () =>
          db.transaction().execute(async (trx) => {
            const row = await touch(trx).executeTakeFirst();
            if (row === undefined) return undefined;
            if (row.counted === 1) await countLateSessionWork(trx, row, { ...NO_WORK, apiCalls: 1 });
            return toSession(row);
          }),
      })();
    },

    async closeOpenSession(ingestionId, closedBy, nowMs, at) {
      return writeTogether(store, 1, async (trx) => {
        const row = await trx
          .updateTable('ingestions')
          .set((eb) => ({
            state: 'closed',
            closed_by: closedBy.user,
            closed_on: at,
            close_reason: 'manual',
            last_activity_on: at,
            api_calls: eb('api_calls', '+', 1),
            counted: 1,
          }))
          .where('ingestion_id', '=', ingestionId)
          .where((eb) => sessionStateIs(eb, 'pending', nowMs))
          // Counted by a sweep whose clock saw it expired: it stays expired.
          .where('counted', '=', 0)
          .returningAll()
          .executeTakeFirst();
        if (row === undefined) return undefined;
        // The session counters last (`session-counters.ts`): the session is counted now, once.
        await countSession(trx, row);
        await reportSessionEnded(trx, row, { closedBy: closedBy.user, at }, nowMs);
        await appendAudit(trx, store.adapter, {
          at,
          action: 'ingestions.close',
          actor: closedBy,
          before: { state: 'pending' },
          after: { state: 'closed', closeReason: 'manual' },
          details: { ingestionId, ingestionName: row.ingestion_name, namespace: row.namespace },
        });
        return toSession(row);
      });
    },

    async commitChunk(write) {
      // The session numbers the chunk's failed records from its count (`sampleTakes`): keeping
      // more than were counted would take numbers of the next chunk's.
      const failedCount = write.failed.length + write.failedOmitted;
      if (write.failedKept.length > failedCount)
        throw new Error(`a chunk of ${failedCount} failed records cannot keep ${write.failedKept.length}`);
      // The outcome is serialised before the sequence number is taken. The failed records are
      // serialised once the number tells how many the session's sample takes, so that a chunk
      // sent to a session whose sample is full serialises none: on SQLite inside the
      // transaction, which rolls the number back with it should that fail; on PostgreSQL after
      // the number's own statement (numbers may have gaps anyway). None can fail: they are
      // parsed JSON values of a bounded depth.
      const failedRecords = failedRecordsColumn(write);
      const failedTextsOf = (taken: number) =>
        write.failedKept.slice(0, taken).map((f) => ({
          index: f.index,
          record: JSON.stringify(f.record) ?? 'null',
          errors: JSON.stringify(f.errors),
        }));
      const acceptedRows = write.accepted.indexes.length;
      // A rejected chunk counts in no row counter: its records count when sent again and stored.
      const counted = write.rejected
        ? { chunks: 0, totalRows: 0, failedRows: 0 }
        : { chunks: 1, totalRows: write.totalRows, failedRows: write.totalRows - acceptedRows };
      // The chunk's update of its session also admits the request (`admission`): one write of
      // the session row per chunk, in the chunk's transaction, rather than a transaction of its
      // own before the body is validated (on SQLite a commit, a sync of the file, saved per chunk).
      const countInSession = (qc: QueryCreator<Database>, takeSeq: boolean) =>
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
            validation_failures: eb('validation_failures', '+', failedCount),
          }))
          // Not filtered by the state: `admittedSession` found the session open at the arrival,
          // which stays true whatever happens since (a close in the same millisecond as the
          // arrival included); only a session deleted since is missed here.
          .where('ingestion_id', '=', write.ingestionId)
          .returning(['chunk_seq_next', 'counted', 'opened_on', 'validation_failures']);
      // On PostgreSQL the sequence number is taken in a statement of its own, so that chunks
      // of one session are written side by side without waiting for the session's row lock,
      // then the chunk is written in one statement (`chunk-write-postgres.ts`). On SQLite writes
      // take turns anyway: one transaction takes the number and writes the chunk, which saves a
      // commit (a sync of the file) per chunk.
      let chunkSeq = 0;
      const late = {
        chunks: counted.chunks,
        apiCalls: 1,
        totalRows: counted.totalRows,
        successRows: acceptedRows,
        failedRows: counted.failedRows,
      };
      const writePostgres = async () => {
        const seq = await db
          .updateTable('ingestions')
          .set((eb) => ({ chunk_seq_next: eb('chunk_seq_next', '+', 1) }))
          .where('ingestion_id', '=', write.ingestionId)
          .returning(['chunk_seq_next', 'validation_failures'])
          .executeTakeFirst();
        if (seq === undefined) throw new SessionGone();
        chunkSeq = Number(seq.chunk_seq_next);
        // The count only grows, so the sample takes no more than its room now: the failed
        // records past it are not sent to the server at all (none once the sample is full). The
        // statement numbers them against the count as its own update leaves it.
        const room = sampleTakes(Number(seq.validation_failures), write.failedKept.length);
        const written = await writeChunkInOneStatement(db, {
          write,
          chunkRow: chunkRow(write, chunkSeq, acceptedRows, failedRecords),
          failedTexts: failedTextsOf(room),
          failedCount,
          sessionUpdate: (onlyIf) => countInSession(db, false).where(onlyIf),
          lateWork: late,
        });
        if (written === 'stale') throw new StaleRevision();
      };
      const writeSqlite = async (trx: Transaction<Database>) => {
        const session = await countInSession(trx, true).executeTakeFirst();
        if (session === undefined) throw new SessionGone();
        chunkSeq = Number(session.chunk_seq_next);
        // The revision is read by the chunk row's own insert; the transaction holds the one
        // write lock, so it is the one the chunk commits under.
        const stored = await trx
          .insertInto('chunks')
          .values(chunkRow(write, chunkSeq, acceptedRows, failedRecords))
          .returning(storedRevisionValue)
          .executeTakeFirstOrThrow();
        if (Number(stored.revision ?? 0) !== write.revision) throw new StaleRevision();
        await insertRecords(trx, write, chunkSeq);
        const sampled = failedTextsOf(
          sampleTakes(Number(session.validation_failures) - failedCount, write.failedKept.length),
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
            late,
          );
      };
      try {
        // On SQLite the chunk is written in the next group of writes (one commit for all), sized
        // by the rows it may write: its sample may take fewer of its failed records.
        await byDialect(store.dialect, {
          postgres: writePostgres,
          sqlite: () =>
            writeTogether(store, write.accepted.indexes.length + write.failedKept.length, writeSqlite),
        })();
        const outcome: ChunkOutcome = {
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
        return { kind: 'stored', outcome };
      } catch (error) {
        if (error instanceof StaleRevision) return { kind: 'stale' };
        if (error instanceof SessionGone) return { kind: 'gone' };
        if (isForeignKeyViolation(error)) return { kind: 'gone' };
        if (write.idempotencyKey !== null && isUniqueViolation(error)) {
          const earlier = await findChunkOutcome(write.ingestionId, write.idempotencyKey);
          if (earlier !== undefined) return { kind: 'replay', earlier };
        }
        throw error;
      }
    },

    async listRecords(namespace, entity, ingestionId, start, limit) {
      let query = recordsMatching(namespace, entity, ingestionId);
      query =
        'after' in start ? query.where('record_id', '>', start.after) : query.offset(start.page * limit);
      const rows = await query
        .select(['record_id', 'ingestion_id', 'chunk_seq', 'record_index', 'data'])
        .orderBy('record_id')
        .limit(limit + 1)
        .execute();
      const page = keyedPageOf(rows, limit, (row) => Number(row.record_id));
      return {
        rows: page.rows.map((r) => ({
          recordId: Number(r.record_id),
          ingestionId: r.ingestion_id,
          chunkSeq: Number(r.chunk_seq),
          index: r.record_index,
          data: r.data,
        })),
        next: page.next,
      };
    },

    async countRecords(namespace, entity, ingestionId) {
      // Every stored record is counted where it is written, and records are never deleted but
      // with their session: an entity's records are its waiting and done records
      // (`entity_record_counts`), a session's are its `success_rows`.
      const row =
        ingestionId === undefined
          ? await db
              .selectFrom('entity_record_counts')
              .where('namespace', '=', namespace)
              .where('entity', '=', entity)
              .select(sql<number | string | null>`sum(waiting + done)`.as('total'))
              .executeTakeFirst()
          : await db
              .selectFrom('ingestions')
              .where('ingestion_id', '=', ingestionId)
              .where('namespace', '=', namespace)
              .where('entity', '=', entity)
              .select('success_rows as total')
              .executeTakeFirst();
      return Number(row?.total ?? 0);
    },

    ...createSessionErrorReads(db),

    async listChunks(ingestionId, page, limit) {
      // The primary key (ingestion_id, chunk_seq) serves both the page and its count.
      const query = db.selectFrom('chunks').where('ingestion_id', '=', ingestionId);
      const rows = await query
        .select([
          'chunk_seq',
          'chunk_name',
          'rejected',
          'accepted_rows',
          'failed_rows',
          'idempotency_key',
          'answer_reference',
          'answered_at',
        ])
        .orderBy('chunk_seq')
        .limit(limit)
        .offset(page * limit)
        .execute();
      const total = await countRows(query);
      return {
        rows: rows.map((r) => ({
          chunkSeq: Number(r.chunk_seq),
          chunkName: r.chunk_name,
          kind: r.rejected === 1 ? ('rejected' as const) : ('stored' as const),
          acceptedRows: Number(r.accepted_rows),
          failedRows: Number(r.failed_rows),
          idempotencyKey: r.idempotency_key,
          reference: r.answer_reference,
          answeredAt: r.answered_at,
        })),
        total,
      };
    },
  };
}
