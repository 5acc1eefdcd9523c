/*
 * The ingestion adapter: the session writes and the reads share the closures of
 * `createIngestionStore` (the filters of sessions and records); what stands apart lives beside
 * it: the chunk's commit in `chunk-commit.ts` (its one statement on PostgreSQL in
 * `chunk-write-postgres.ts`), its rows in `ingestion-rows.ts`, a session's errors in
 * `session-errors.ts`, the session counters in `session-counters.ts`.
 */
import { type ExpressionBuilder, type Kysely, type QueryCreator, sql } from 'kysely';
import type { IngestionStore, SessionFilter } from '../modules/ingestion/store.js';
import { appendAudit } from './audit-trail.js';
import { admission, createChunkCommit } from './chunk-commit.js';
import { countRows } from './count.js';
import { reportSessionEnded } from './events/session-events.js';
import { earlierOutcomeOf, toSession } from './ingestion-rows.js';
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
import { byDialect, type Store, writeStatement, writeTogether } from './store.js';

/**
 * The ingestion port over Kysely: the session writes and the reads here, the chunk's commit from
 * `createChunkCommit` (`chunk-commit.ts`), a session's error list from `createSessionErrorReads`.
 */
// One piece: the port's object, whose methods (each short) share the factory's `db` and `store`.
export function createIngestionStore(store: Store): IngestionStore {
  const { db } = store;

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

    ...createChunkCommit(store),

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
