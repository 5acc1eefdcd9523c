import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../lib/errors.js';
import type { KeyedPage } from '../../lib/keyed-page.js';
import {
  CHUNK_BODY_BYTES_MAX,
  CHUNK_ERRORS_SHOWN_MAX,
  CHUNK_RECORDS_MAX,
  SESSION_ERRORS_KEPT_MAX,
} from '../../modules/ingestion/chunk-body.js';
import {
  ChunkBodyDocumented,
  ChunkSeq,
  EntityName,
  IdempotencyKey,
  IngestionId,
  IngestionName,
  SessionStateFilter,
  SessionTimeout,
} from '../../modules/ingestion/inputs.js';
import type { ChunkResult, IngestionService } from '../../modules/ingestion/service.js';
import type {
  SessionErrorKey,
  SessionErrorRow,
  SessionKey,
  StoredRecord,
} from '../../modules/ingestion/store.js';
import { actorOf, principalOf } from '../authenticate.js';
import { problemContextOf } from '../problem.js';
import { PROBLEM_STATUS, problemBody } from '../problems.js';
import { ChunkAccepted, Session, SessionError } from './answer-schemas.js';
import { keyOfCursor, nextCursor, notACursor } from './cursor.js';
import type { ApiApp } from './route-app.js';
import {
  AfterQuery,
  CURSOR_PAGING_DESCRIPTION,
  CursorPage,
  cursorPageOf,
  PageQuery,
  PathParam,
  Problem,
  StoredNameFilter,
} from './schemas.js';

/** The `next` cursor of a sessions page. */
function sessionCursor(key: SessionKey | undefined): string | null {
  return nextCursor('ingestions', key, (k) => [k.openedOn, k.ingestionId]);
}

const IdParams = Type.Object({ ingestionId: IngestionId });

/**
 * The answer to a chunk request: 201 with the chunk's counts and failed records, or 400
 * `chunk-invalid` with the same members when an atomic chunk had failed records. A replay is
 * the first answer again (`Idempotent-Replayed: true`), with its reference and timestamp.
 */
function sendChunkOutcome(request: FastifyRequest, reply: FastifyReply, result: ChunkResult): FastifyReply {
  const { outcome } = result;
  if (result.replayed) reply.header('idempotent-replayed', 'true');
  const body = {
    ingestionId: outcome.ingestionId,
    chunkName: outcome.chunkName,
    chunkSeq: outcome.chunkSeq,
    acceptedRows: outcome.acceptedRows,
    failedRows: outcome.failedRows,
    errors: outcome.failed,
    // Only when the list was cut, so that the answer is otherwise as it always was.
    ...(outcome.failedOmitted > 0 ? { errorsOmitted: outcome.failedOmitted } : {}),
  };
  if (outcome.kind === 'stored') return reply.code(201).send(body);
  const failedCount = outcome.failed.length + outcome.failedOmitted;
  const listed =
    outcome.failedOmitted === 0
      ? ''
      : ` (the first ${outcome.failed.length} are listed; GET /api/v1/ingestions/${outcome.ingestionId}/errors?chunkSeq=${outcome.chunkSeq} lists them, within the session's first ${SESSION_ERRORS_KEPT_MAX} failed records)`;
  const detail = `${failedCount} of ${outcome.failedRows} records failed validation${listed}; nothing of the chunk was kept (send ?partial=true to keep the valid records)`;
  const context = {
    ...problemContextOf(request),
    reference: outcome.reference ?? request.id,
    timestamp: outcome.answeredAt,
  };
  return reply
    .code(PROBLEM_STATUS['chunk-invalid'])
    .type('application/problem+json')
    .send(problemBody('chunk-invalid', detail, context, body));
}

/** Ingestion sessions, chunks, and what they stored. */
export const ingestionRoutes: FastifyPluginAsyncTypebox<{ ingestion: IngestionService }> = async (
  app,
  { ingestion },
) => {
  registerOpenSessionRoute(app, ingestion);
  registerListSessionsRoute(app, ingestion);
  registerGetSessionRoute(app, ingestion);
  registerCloseSessionRoute(app, ingestion);
  await registerChunkRoute(app, ingestion);
  registerSessionErrorsRoute(app, ingestion);
  registerEntityRecordsRoute(app, ingestion);
};

/** `POST /api/v1/ingestions`: opens a session for one entity, owned by the caller's user. */
function registerOpenSessionRoute(app: ApiApp, ingestion: IngestionService): void {
  app.post(
    '/api/v1/ingestions',
    {
      config: { permission: 'ingestion:write' },
      schema: {
        operationId: 'createIngestionSession',
        tags: ['ingestion'],
        summary: 'Open an ingestion session for one entity',
        body: Type.Object(
          {
            namespace: EntityName,
            entity: EntityName,
            timeout: Type.Optional(SessionTimeout),
            ingestionName: Type.Optional(IngestionName),
          },
          { additionalProperties: false },
        ),
        response: { 201: Session, 400: Problem, 404: Problem },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await ingestion.createSession(request.body, principalOf(request).ownerEmail)),
  );
}

/** `GET /api/v1/ingestions`: the sessions, newest first, by page or by cursor. */
function registerListSessionsRoute(app: ApiApp, ingestion: IngestionService): void {
  app.get(
    '/api/v1/ingestions',
    {
      config: { permission: 'ingestion:read' },
      schema: {
        operationId: 'listIngestionSessions',
        tags: ['ingestion'],
        summary: 'List sessions, newest first',
        description: CURSOR_PAGING_DESCRIPTION,
        querystring: Type.Object({
          ...PageQuery,
          state: Type.Optional(SessionStateFilter),
          namespace: Type.Optional(StoredNameFilter),
          entity: Type.Optional(StoredNameFilter),
          ...AfterQuery,
        }),
        response: { 200: CursorPage(Session), 400: Problem },
      },
    },
    async (request) => {
      const { page, limit, after, ...filter } = request.query;
      if (after !== undefined) {
        const [openedOn, ingestionId] = keyOfCursor('ingestions', after, ['text', 'text']);
        const found = await ingestion.listSessionsAfter(filter, { openedOn, ingestionId }, limit);
        return cursorPageOf(found.rows, limit, sessionCursor(found.next));
      }
      const found = await ingestion.listSessions(filter, page, limit);
      return cursorPageOf(found.rows, limit, sessionCursor(found.next), { page, total: found.total });
    },
  );
}

/** `GET /api/v1/ingestions/:ingestionId`: one session with its counters. */
function registerGetSessionRoute(app: ApiApp, ingestion: IngestionService): void {
  app.get(
    '/api/v1/ingestions/:ingestionId',
    {
      config: { permission: 'ingestion:read' },
      schema: {
        operationId: 'getIngestionSession',
        tags: ['ingestion'],
        summary: 'Status of a session: its state, chunk and row counters, and processing status',
        params: IdParams,
        response: { 200: Session, 404: Problem },
      },
    },
    async (request) => ingestion.getSession(request.params.ingestionId),
  );
}

/** `PATCH /api/v1/ingestions/:ingestionId`: closes a session, the only change it accepts. */
function registerCloseSessionRoute(app: ApiApp, ingestion: IngestionService): void {
  app.patch(
    '/api/v1/ingestions/:ingestionId',
    {
      config: { permission: 'ingestion:write' },
      schema: {
        operationId: 'closeIngestionSession',
        tags: ['ingestion'],
        summary: 'Close a session: {"state": "closed"} (application/merge-patch+json)',
        params: IdParams,
        body: Type.Object(
          { state: Type.String({ description: '`closed` (case-insensitive).' }) },
          { additionalProperties: false },
        ),
        response: { 200: Session, 400: Problem, 404: Problem, 409: Problem },
      },
    },
    async (request) => {
      if (request.body.state.toLowerCase() !== 'closed') {
        throw new AppError('validation-failed', 'the only change a session accepts is {"state": "closed"}', {
          errors: [{ path: '/state', message: 'must be closed' }],
        });
      }
      return ingestion.closeSession(request.params.ingestionId, actorOf(request));
    },
  );
}

/**
 * `POST /api/v1/ingestions/:ingestionId`: a chunk of records. The chunk route reads its body as
 * raw bytes: the service hashes them for idempotency and parses them itself. Its own
 * content-type parser lives in this encapsulated context only.
 */
async function registerChunkRoute(app: ApiApp, ingestion: IngestionService): Promise<void> {
  await app.register(async (plugin) => {
    const chunks = plugin.withTypeProvider<TypeBoxTypeProvider>();
    const appValidator = plugin.validatorCompiler;
    if (appValidator === null || appValidator === undefined)
      throw new Error('the application sets its validator before its routes');
    chunks.removeAllContentTypeParsers();
    chunks.addContentTypeParser(
      'application/json',
      { parseAs: 'buffer', bodyLimit: CHUNK_BODY_BYTES_MAX },
      (_request, body, done) => done(null, body),
    );
    chunks.post(
      '/api/v1/ingestions/:ingestionId',
      {
        config: { permission: 'ingestion:write' },
        bodyLimit: CHUNK_BODY_BYTES_MAX,
        schema: {
          operationId: 'submitChunk',
          tags: ['ingestion'],
          summary: 'Submit a chunk of records (at most 1 MiB)',
          description: `A JSON body (\`application/json\`) of at most ${CHUNK_BODY_BYTES_MAX.toLocaleString('en-US')} bytes (413 above) carrying at most ${CHUNK_RECORDS_MAX.toLocaleString('en-US')} records in \`data\` (400 above; split larger data over more chunks). Atomic by default: if any record fails, 400 lists the failed records as sent and nothing is kept. With \`partial=true\` the valid records are kept (201) and the failed ones listed. Either answer lists the first ${CHUNK_ERRORS_SHOWN_MAX} failed records in \`errors\` and counts the others in \`errorsOmitted\`; the session's error list keeps the session's first ${SESSION_ERRORS_KEPT_MAX.toLocaleString('en-US')} failed records, whichever chunks they came in (\`GET …/errors?chunkSeq=\`), and counts the others. A rejected chunk adds nothing to the session's \`chunks\`, \`totalRows\` and \`failedRows\` (only to its API calls): its records count when they are sent again and stored. A repeated \`Idempotency-Key\` with the same body replays the earlier answer (\`Idempotent-Replayed: true\`); with another body it is 422.`,
          params: IdParams,
          querystring: Type.Object({ partial: Type.Boolean({ default: false }) }),
          headers: Type.Object({
            'idempotency-key': Type.Optional(IdempotencyKey),
          }),
          body: ChunkBodyDocumented,
          response: {
            201: ChunkAccepted,
            400: Problem,
            404: Problem,
            409: Problem,
            413: Problem,
            422: Problem,
          },
        },
        // The body schema documents the chunk; the service validates it from the raw bytes. The
        // path, query and headers are checked by the application's validator like everywhere.
        validatorCompiler: (route) => (route.httpPart === 'body' ? () => true : appValidator(route)),
      },
      async (request, reply) => {
        if (!Buffer.isBuffer(request.body))
          throw new AppError('malformed-json', 'the body must be application/json');
        const result = await ingestion.submitChunk({
          ingestionId: request.params.ingestionId,
          raw: request.body,
          partial: request.query.partial,
          idempotencyKey: request.headers['idempotency-key'],
          reference: request.id,
          arrivedAt: request.arrivedAt ?? ingestion.now(),
        });
        return sendChunkOutcome(request, reply, result);
      },
    );
  });
}

/** `GET /api/v1/ingestions/:ingestionId/errors`: a session's failed records, by page or by cursor. */
function registerSessionErrorsRoute(app: ApiApp, ingestion: IngestionService): void {
  app.get(
    '/api/v1/ingestions/:ingestionId/errors',
    {
      config: { permission: 'ingestion:read' },
      schema: {
        operationId: 'listIngestionErrors',
        tags: ['ingestion'],
        summary: 'Failed records of a session: validation failures, then processing errors',
        description: `Validation failures: the session's first ${SESSION_ERRORS_KEPT_MAX.toLocaleString('en-US')} failed records, whichever chunks they came in, stored or rejected (a chunk's answer lists its first ${CHUNK_ERRORS_SHOWN_MAX}); the others are only counted, so a client that sends rejected chunks again and again does not grow the store. \`failedTotal\` counts every one (with page paging). Without \`chunkSeq\`, those of the stored chunks, so each failed record is listed once even when a rejected chunk was sent again with \`partial=true\`; with \`chunkSeq\`, those of that chunk, stored or rejected, then the processing errors of its records. ${CURSOR_PAGING_DESCRIPTION}`,
        params: IdParams,
        querystring: Type.Object({
          ...PageQuery,
          chunkSeq: Type.Optional(ChunkSeq),
          ...AfterQuery,
        }),
        response: {
          200: Type.Composite([
            CursorPage(SessionError),
            Type.Object({
              failedTotal: Type.Optional(
                Type.Integer({
                  minimum: 0,
                  description: `Every failed record the list stands for: those listed (\`totalSize\`) and the validation failures past the session's first ${SESSION_ERRORS_KEPT_MAX.toLocaleString('en-US')}, only counted. Given with page paging only.`,
                }),
              ),
            }),
          ]),
          400: Problem,
          404: Problem,
        },
      },
    },
    async (request) => {
      const { page, limit, chunkSeq, after } = request.query;
      const { ingestionId } = request.params;
      const view = (found: KeyedPage<SessionErrorRow, SessionErrorKey>) => ({
        data: found.rows.map((row) => ({ ...row, record: JSON.parse(row.record) as unknown })),
        next: nextCursor('ingestion-errors', found.next, (key) => [key.kind, key.id]),
      });
      if (after !== undefined) {
        const [kind, id] = keyOfCursor('ingestion-errors', after, ['text', 'integer']);
        if (kind !== 'validation' && kind !== 'processing') throw notACursor();
        const { data, next } = view(
          await ingestion.listErrorsAfter(ingestionId, { kind, id }, limit, chunkSeq),
        );
        return cursorPageOf(data, limit, next);
      }
      const found = await ingestion.listErrors(ingestionId, page, limit, chunkSeq);
      const { data, next } = view(found);
      return {
        ...cursorPageOf(data, limit, next, { page, total: found.total }),
        failedTotal: found.failedTotal,
      };
    },
  );
}

/** `GET /api/v1/namespaces/:ns/entities/:entity/records`: an entity's stored records. */
function registerEntityRecordsRoute(app: ApiApp, ingestion: IngestionService): void {
  app.get(
    '/api/v1/namespaces/:ns/entities/:entity/records',
    {
      config: { permission: 'ingestion:read' },
      schema: {
        operationId: 'listEntityRecords',
        tags: ['ingestion'],
        summary: 'Stored records of an entity, each with its ingestionId',
        params: Type.Object({ ns: PathParam, entity: PathParam }),
        description: CURSOR_PAGING_DESCRIPTION,
        querystring: Type.Object({
          ...PageQuery,
          ingestionId: Type.Optional(StoredNameFilter),
          ...AfterQuery,
        }),
        response: {
          200: CursorPage(
            Type.Object({
              ingestionId: Type.String(),
              chunkSeq: Type.Integer(),
              index: Type.Integer(),
              record: Type.Record(Type.String(), Type.Unknown()),
            }),
          ),
          400: Problem,
          404: Problem,
        },
      },
    },
    async (request) => {
      const { page, limit, after, ingestionId } = request.query;
      const { ns, entity } = request.params;
      const view = (found: KeyedPage<StoredRecord, number>) => ({
        data: found.rows.map((row) => ({
          ingestionId: row.ingestionId,
          chunkSeq: row.chunkSeq,
          index: row.index,
          record: JSON.parse(row.data) as Record<string, unknown>,
        })),
        next: nextCursor('records', found.next, (id) => [id]),
      });
      if (after !== undefined) {
        const [recordId] = keyOfCursor('records', after, ['integer']);
        const { data, next } = view(
          await ingestion.listRecordsAfter(ns, entity, ingestionId, recordId, limit),
        );
        return cursorPageOf(data, limit, next);
      }
      const found = await ingestion.listRecords(ns, entity, ingestionId, page, limit);
      const { data, next } = view(found);
      return cursorPageOf(data, limit, next, { page, total: found.total });
    },
  );
}
