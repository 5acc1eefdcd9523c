import { createHash } from 'node:crypto';
import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { assertSameRequest } from '../../lib/idempotency.js';
import { newIngestionId } from '../../lib/ids.js';
import { parseIsoDurationMs } from '../../lib/iso-duration.js';
import type { KeyedPage } from '../../lib/keyed-page.js';
import type { AuditActor } from '../audit/entry.js';
import type { EntityCatalog } from '../entities/catalog.js';
import { CHUNK_ERRORS_SHOWN_MAX } from './chunk-body.js';
import { type ChunkWorker, inlineChunkWorker } from './chunk-pool.js';
import { type SessionRow, type SessionView, sessionView, stateAt } from './session.js';
import type {
  ChunkOutcome,
  ChunkSummary,
  IngestionStore,
  SessionErrorKey,
  SessionErrorRow,
  SessionFilter,
  SessionKey,
  StoredChunkOutcome,
  StoredRecord,
} from './store.js';
import { NO_RECORDS } from './store.js';

/** Session timeouts: default 15 minutes, from one second to seven days. */
export const SESSION_TIMEOUT_DEFAULT = 'PT15M';
export const SESSION_TIMEOUT_MS_MIN = 1000;
export const SESSION_TIMEOUT_MS_MAX = 7 * 24 * 3600 * 1000;

/** The errors of a chunk body refused before anything is written (`chunk-body.ts`). */
const REFUSED_BODY: ReadonlySet<string> = new Set(['malformed-json', 'validation-failed']);

/**
 * Times a chunk is validated under the current configuration and written when it changes between
 * the two (after a first validation under the configuration prepared last, which does not
 * count); a change that keeps the processing data is rare, so a chunk meeting more than this many
 * in a row is answered 503 (send it again) rather than held.
 */
const CHUNK_VALIDATIONS_MAX = 3;

/** What a chunk request came to, and whether it is the replay of an earlier request's outcome. */
export interface ChunkResult {
  outcome: ChunkOutcome;
  replayed: boolean;
}

/**
 * Ingestion sessions and chunks (docs/reference.md, Ingestion). Sessions open for one entity,
 * take chunks while open, and close on request or expire after their timeout of inactivity.
 * Each chunk is validated with the entity's validator compiled at configuration upload and
 * written in one transaction before it is answered.
 */
export class IngestionService {
  readonly #store: IngestionStore;
  readonly #catalog: EntityCatalog;
  readonly #clock: Clock;
  readonly #chunkWorker: ChunkWorker;
  readonly #onRecordsAwaitProcessing: () => void;

  /**
   * `chunkWorker` does the CPU work of a chunk (inline or on worker threads);
   * `onRecordsAwaitProcessing` is called after a chunk stored records for the accounting engine.
   */
  constructor(
    store: IngestionStore,
    catalog: EntityCatalog,
    clock: Clock,
    options: { chunkWorker?: ChunkWorker; onRecordsAwaitProcessing?: () => void } = {},
  ) {
    this.#store = store;
    this.#catalog = catalog;
    this.#clock = clock;
    this.#chunkWorker = options.chunkWorker ?? inlineChunkWorker;
    this.#onRecordsAwaitProcessing = options.onRecordsAwaitProcessing ?? (() => {});
  }

  /**
   * Opens a session for an existing entity. Errors: `entity-not-found` (404),
   * `validation-failed` (a timeout that is not an ISO 8601 duration from PT1S to P7D).
   */
  async createSession(
    input: { namespace: string; entity: string; timeout?: string; ingestionName?: string },
    openedBy: string,
  ): Promise<SessionView> {
    const timeout = input.timeout ?? SESSION_TIMEOUT_DEFAULT;
    const timeoutMs = parseIsoDurationMs(timeout);
    if (timeoutMs === undefined || timeoutMs < SESSION_TIMEOUT_MS_MIN || timeoutMs > SESSION_TIMEOUT_MS_MAX) {
      throw new AppError('validation-failed', 'timeout must be an ISO 8601 duration from PT1S to P7D', {
        errors: [{ path: '/timeout', message: 'must be an ISO 8601 duration from PT1S to P7D' }],
      });
    }
    await this.#catalog.entity(input.namespace, input.entity);
    const now = this.#clock.now();
    const row: SessionRow = {
      ingestionId: newIngestionId(),
      ingestionName: input.ingestionName ?? null,
      namespace: input.namespace,
      entity: input.entity,
      state: 'pending',
      timeout,
      timeoutMs,
      openedBy,
      openedOn: now.toISOString(),
      closedBy: null,
      closedOn: null,
      closeReason: null,
      lastActivityOn: now.toISOString(),
      expiresAtMs: now.getTime() + timeoutMs,
      chunks: 0,
      apiCalls: 1,
      totalRows: 0,
      successRows: 0,
      failedRows: 0,
      processedRows: 0,
      processingFailedRows: 0,
    };
    await this.#store.insertSession(row);
    return sessionView(row, now.getTime());
  }

  /** Now on the clock of this service, on which a chunk request's `arrivedAt` is taken. */
  now(): Date {
    return this.#clock.now();
  }

  /** One session. Errors: `session-not-found`. */
  async getSession(ingestionId: string): Promise<SessionView> {
    return sessionView(await this.#existing(ingestionId), this.#clock.now().getTime());
  }

  /**
   * A page of sessions, newest first, filtered by derived state, namespace and entity, by page
   * number, with the number of sessions matching.
   */
  async listSessions(
    filter: SessionFilter,
    page: number,
    limit: number,
  ): Promise<KeyedPage<SessionView, SessionKey> & { total: number }> {
    const nowMs = this.#clock.now().getTime();
    const [found, total] = await Promise.all([
      this.#store.listSessions(filter, nowMs, { page }, limit),
      this.#store.countSessions(filter, nowMs),
    ]);
    return { rows: found.rows.map((row) => sessionView(row, nowMs)), next: found.next, total };
  }

  /**
   * A page of sessions, newest first, after the session whose key is `after`, counting nothing
   * (docs/decisions.md, Cursor paging).
   */
  async listSessionsAfter(
    filter: SessionFilter,
    after: SessionKey,
    limit: number,
  ): Promise<KeyedPage<SessionView, SessionKey>> {
    const nowMs = this.#clock.now().getTime();
    const found = await this.#store.listSessions(filter, nowMs, { after }, limit);
    return { rows: found.rows.map((row) => sessionView(row, nowMs)), next: found.next };
  }

  /**
   * Closes a session. Closing a closed session returns it unchanged.
   * Errors: `session-not-found`, `session-expired` (409).
   */
  async closeSession(ingestionId: string, closedBy: AuditActor): Promise<SessionView> {
    const now = this.#clock.now();
    const closed = await this.#store.closeOpenSession(
      ingestionId,
      closedBy,
      now.getTime(),
      now.toISOString(),
    );
    if (closed !== undefined) return sessionView(closed, now.getTime());
    const row = await this.#existing(ingestionId);
    if (stateAt(row, now.getTime()) === 'expired') {
      throw new AppError(
        'session-expired',
        `session ${ingestionId} expired after ${row.timeout} without activity`,
      );
    }
    return sessionView(row, now.getTime());
  }

  /**
   * Validates and stores one chunk. Atomic by default: any failed record
   * rejects the chunk (outcome `rejected`) and keeps none of its records, nor counts them in
   * the session's rows, so that records sent again after a rejection are counted once; with
   * `partial` the valid records are kept. The outcome lists the first `CHUNK_ERRORS_SHOWN_MAX`
   * failed records and counts the others; the session's error list keeps the session's first
   * `SESSION_ERRORS_KEPT_MAX`, whichever chunks they came in, and counts the others, so sending
   * failing chunks again adds no more to it. A repeated idempotency key with the same body
   * returns the earlier outcome as a replay. `reference` identifies the request; it is kept with
   * the outcome.
   *
   * `arrivedAt` is when the request arrived, before its body was read, on this service's clock
   * (`now`). The session must have been open then: the data of a request in progress when the
   * session is closed or expires is still stored and processed (docs/reference.md, Chunks),
   * while a request that arrived after is refused. Errors: `session-not-found`,
   * `session-closed`, `session-expired` (the session was not open when the request arrived),
   * `malformed-json`, `validation-failed` (the chunk's shape), `idempotency-key-reused`.
   */
  async submitChunk(input: {
    ingestionId: string;
    raw: Buffer;
    partial: boolean;
    idempotencyKey: string | undefined;
    reference: string;
    arrivedAt: Date;
  }): Promise<ChunkResult> {
    const { ingestionId, idempotencyKey } = input;
    const bodySha256 =
      idempotencyKey === undefined ? null : createHash('sha256').update(input.raw).digest('hex');
    const now = this.#clock.now();
    // A clock set back since the arrival must not date the arrival after the handling.
    const arrivedAtMs = Math.min(input.arrivedAt.getTime(), now.getTime());
    // The session and the earlier outcome of the key in one read: on PostgreSQL under many
    // clients every statement waits for a pooled connection and a turn of the event loop. A
    // replay answers whatever state the session is in.
    const { session, earlier } = await this.#store.chunkAdmission(ingestionId, arrivedAtMs, idempotencyKey);
    if (earlier !== undefined) return this.#replay(earlier, bodySha256, idempotencyKey ?? '');
    if (session === undefined) throw await this.#notOpen(ingestionId, arrivedAtMs);
    // The first validation takes the configuration prepared last, without a statement to read
    // its revision: the write checks the revision, and when it moved on (an upload, through any
    // instance) the write is stale and the chunk is validated again under the current rules. A
    // change between a validation and its write (an upload that keeps the processing data) makes
    // the write stale the same way.
    let snapshot: 'latest' | 'current' = 'latest';
    let staleUnderCurrent = 0;
    for (;;) {
      const result = await this.#validateAndCommit(
        input,
        session,
        now,
        arrivedAtMs,
        bodySha256,
        snapshot,
      ).catch(async (error: unknown) => {
        // A body refused before the write still counts as a call of the session, and activity.
        if (error instanceof AppError && REFUSED_BODY.has(error.code))
          await this.#countCall(ingestionId, arrivedAtMs, now);
        throw error;
      });
      if (result !== 'stale') return result;
      if (snapshot === 'current') staleUnderCurrent += 1;
      snapshot = 'current';
      if (staleUnderCurrent >= CHUNK_VALIDATIONS_MAX) {
        throw new AppError(
          'unavailable',
          'the configuration kept changing while the chunk was being stored; send it again',
          {},
          { retryAfterSeconds: 1 },
        );
      }
    }
  }

  /**
   * Validates a chunk under the configuration of `snapshot` and writes it; `stale` when the
   * stored revision is another (or, for the latest snapshot, when the entity is not in it).
   */
  async #validateAndCommit(
    input: {
      ingestionId: string;
      raw: Buffer;
      partial: boolean;
      idempotencyKey: string | undefined;
      reference: string;
    },
    session: { namespace: string; entity: string },
    now: Date,
    arrivedAtMs: number,
    bodySha256: string | null,
    snapshot: 'latest' | 'current',
  ): Promise<ChunkResult | 'stale'> {
    const { ingestionId, idempotencyKey } = input;
    // Only a missing entity in the current configuration means the session went with an
    // upload (one prepared earlier may predate the entity); a store fault of the lookup stays
    // what it is (503), never a 404 that tells the client to give up.
    const entity = await this.#catalog
      .entity(session.namespace, session.entity, snapshot)
      .catch((error: unknown) => {
        if (error instanceof AppError && error.code === 'entity-not-found') {
          if (snapshot === 'latest') return undefined;
          throw new AppError('session-not-found', `session ${ingestionId} no longer exists`);
        }
        throw error;
      });
    if (entity === undefined) return 'stale';

    const chunk = await this.#chunkWorker.validate(input.raw, entity);
    const { accepted, failed, kept, failedCount } = chunk;
    const rejected = failedCount > 0 && !input.partial;
    const shown = failed.slice(0, CHUNK_ERRORS_SHOWN_MAX);
    const result = await this.#store.commitChunk({
      ingestionId,
      namespace: session.namespace,
      entity: session.entity,
      chunkName: chunk.chunkName,
      idempotencyKey: idempotencyKey ?? null,
      bodySha256,
      accepted: rejected ? NO_RECORDS : accepted,
      failed: shown,
      failedOmitted: failedCount - shown.length,
      failedKept: kept,
      totalRows: chunk.totalRows,
      rejected,
      awaitsProcessing: entity.awaitsProcessing,
      reference: input.reference,
      at: now.toISOString(),
      nowMs: now.getTime(),
      revision: entity.revision,
    });
    if (result.kind === 'stale') return 'stale';
    if (result.kind === 'gone')
      throw new AppError('session-not-found', `session ${ingestionId} no longer exists`);
    if (result.kind === 'replay') {
      // Written by a concurrent request with the same key: this one wrote nothing, so its call
      // is counted on its own.
      await this.#countCall(ingestionId, arrivedAtMs, now);
      return this.#replay(result.earlier, bodySha256, idempotencyKey ?? '');
    }
    if (entity.awaitsProcessing && !rejected && accepted.indexes.length > 0) this.#onRecordsAwaitProcessing();
    return { outcome: result.outcome, replayed: false };
  }

  /**
   * A page of the stored records of an entity, optionally of one session, in arrival order, by
   * page number, with the number of records matching. Errors: `entity-not-found`.
   */
  async listRecords(
    namespace: string,
    entity: string,
    ingestionId: string | undefined,
    page: number,
    limit: number,
  ): Promise<KeyedPage<StoredRecord, number> & { total: number }> {
    await this.#catalog.entity(namespace, entity);
    const [found, total] = await Promise.all([
      this.#store.listRecords(namespace, entity, ingestionId, { page }, limit),
      this.#store.countRecords(namespace, entity, ingestionId),
    ]);
    return { ...found, total };
  }

  /**
   * A page of the stored records of an entity, optionally of one session, after the record
   * whose id is `after`, counting nothing. Errors: `entity-not-found`.
   */
  async listRecordsAfter(
    namespace: string,
    entity: string,
    ingestionId: string | undefined,
    after: number,
    limit: number,
  ): Promise<KeyedPage<StoredRecord, number>> {
    await this.#catalog.entity(namespace, entity);
    return this.#store.listRecords(namespace, entity, ingestionId, { after }, limit);
  }

  /**
   * A page of the failed records of a session by page number, with their number (`total`) and
   * the number they stand for (`failedTotal`): validation failures, then processing errors. The
   * validation failures listed are those the session kept, its first `SESSION_ERRORS_KEPT_MAX`;
   * `failedTotal` also counts those past them. Without `chunkSeq`, those of the chunks that were
   * stored, each failed record once however often a rejected chunk was sent before; with it,
   * those of that one chunk, stored or rejected. Errors: `session-not-found`.
   */
  async listErrors(
    ingestionId: string,
    page: number,
    limit: number,
    chunkSeq?: number,
  ): Promise<KeyedPage<SessionErrorRow, SessionErrorKey> & { total: number; failedTotal: number }> {
    await this.#existing(ingestionId);
    const [found, counts] = await Promise.all([
      this.#store.listErrors(ingestionId, chunkSeq, { page }, limit),
      this.#store.countErrors(ingestionId, chunkSeq),
    ]);
    return { ...found, total: counts.listed, failedTotal: counts.inAll };
  }

  /**
   * The page of the same list after the failed record whose key is `after`, counting nothing.
   * Errors: `session-not-found`.
   */
  async listErrorsAfter(
    ingestionId: string,
    after: SessionErrorKey,
    limit: number,
    chunkSeq?: number,
  ): Promise<KeyedPage<SessionErrorRow, SessionErrorKey>> {
    await this.#existing(ingestionId);
    return this.#store.listErrors(ingestionId, chunkSeq, { after }, limit);
  }

  /** A session's chunks in arrival order (by sequence number). Errors: `session-not-found`. */
  async listChunks(
    ingestionId: string,
    page: number,
    limit: number,
  ): Promise<{ rows: ChunkSummary[]; total: number }> {
    await this.#existing(ingestionId);
    return this.#store.listChunks(ingestionId, page, limit);
  }

  #replay(earlier: StoredChunkOutcome, bodySha256: string | null, key: string): ChunkResult {
    assertSameRequest(key, earlier.bodySha256, bodySha256, 'this session');
    return { outcome: earlier.outcome, replayed: true };
  }

  async #existing(ingestionId: string): Promise<SessionRow> {
    const row = await this.#store.findSession(ingestionId);
    if (row === undefined) throw new AppError('session-not-found', `no ingestion session ${ingestionId}`);
    return row;
  }

  /** Counts a chunk request that wrote nothing as a call of its session (`touchSession`). */
  async #countCall(ingestionId: string, arrivedAtMs: number, now: Date): Promise<void> {
    await this.#store.touchSession(ingestionId, arrivedAtMs, now.getTime(), now.toISOString());
  }

  /** Why a request that arrived at `arrivedAtMs` found the session not open. */
  async #notOpen(ingestionId: string, arrivedAtMs: number): Promise<AppError> {
    const row = await this.#existing(ingestionId);
    if (stateAt(row, arrivedAtMs) === 'expired') {
      return new AppError(
        'session-expired',
        `session ${ingestionId} expired after ${row.timeout} without activity; open a new one`,
      );
    }
    return new AppError('session-closed', `session ${ingestionId} is closed and accepts no more data`);
  }
}
