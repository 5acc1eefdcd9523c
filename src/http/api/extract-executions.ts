import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { AppError } from '../../lib/errors.js';
import {
  EXTRACT_FILE_KEEP_HOURS,
  EXTRACT_RUN_ROWS,
  EXTRACT_RUNS_SHOWN_MAX,
  EXTRACTS_IN_BULK_FLAG,
  type ExtractExecutions,
} from '../../modules/extracts/executions.js';
import { ExtractFormatInput } from '../../modules/extracts/inputs.js';
import { ChangeHeaders, ChangeQuery, changeOptionsOf, sendChange } from './changes.js';
import { ExtractExecutionAnswer, ExtractRunAnswer } from './extract-answers.js';
import type { ApiApp } from './route-app.js';
import { AfterQuery, CursorPage, cursorPageOf, Problem } from './schemas.js';

const Id = Type.String({ pattern: '^[1-9][0-9]{0,14}$', maxLength: 15 });

const CONTENT_TYPES = { jsonl: 'application/jsonl; charset=utf-8', csv: 'text/csv; charset=utf-8' } as const;

function listCursor(id: number, before: number): string {
  return Buffer.from(JSON.stringify(['extraction-executions', id, before]), 'utf8').toString('base64url');
}

function beforeOfCursor(id: number, text: string): number {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (
      Array.isArray(decoded) &&
      decoded.length === 3 &&
      decoded[0] === 'extraction-executions' &&
      decoded[1] === id &&
      Number.isSafeInteger(decoded[2])
    )
      return decoded[2] as number;
  } catch {}
  throw new AppError('validation-failed', 'after is not a cursor of this list', {
    errors: [{ path: '/querystring/after', message: 'must be the next cursor of an answer of this list' }],
  });
}

/** Asynchronous extractions: trigger, list, details with runs, and the file. */
export const extractExecutionRoutes: FastifyPluginAsyncTypebox<{ executions: ExtractExecutions }> = async (
  app,
  { executions },
) => {
  registerConfigurationExecutionRoutes(app, executions);
  registerExecutionRoutes(app, executions);
};

/** `POST` and `GET /api/v1/extraction-configurations/:id/executions`: start one, list them. */
function registerConfigurationExecutionRoutes(app: ApiApp, executions: ExtractExecutions): void {
  app.post(
    '/api/v1/extraction-configurations/:id/executions',
    {
      config: { permission: 'journals:read' },
      schema: {
        operationId: 'triggerExtraction',
        tags: ['extracts'],
        summary: 'Start an asynchronous extraction of an Active configuration',
        description: `Only when the feature flag \`${EXTRACTS_IN_BULK_FLAG}\` is on (409 otherwise). The rows are fixed now, as a read would fix them (an incremental configuration's pending read: acknowledge it with \`increment\` once the file is loaded); the file is made in the background, in runs of ${EXTRACT_RUN_ROWS} rows, by whichever instance takes it, and goes on after a restart. 202 with \`Location\`: follow it until \`latestStatus\` is \`completed\`, then download \`…/file\`. Files are kept ${EXTRACT_FILE_KEEP_HOURS} hours. Written to the audit log.`,
        params: Type.Object({ id: Id }),
        querystring: Type.Object(
          { format: Type.Optional(ExtractFormatInput), dryRun: ChangeQuery.properties.dryRun },
          { additionalProperties: false },
        ),
        headers: ChangeHeaders,
        response: {
          200: ExtractExecutionAnswer,
          202: ExtractExecutionAnswer,
          400: Problem,
          404: Problem,
          409: Problem,
          422: Problem,
        },
      },
    },
    async (request, reply) => {
      const outcome = await executions.trigger(
        Number(request.params.id),
        changeOptionsOf(request),
        request.query.format,
      );
      if (!outcome.dryRun) reply.header('location', `/api/v1/extraction-executions/${outcome.answer.id}`);
      return sendChange(reply, outcome, 202);
    },
  );

  app.get(
    '/api/v1/extraction-configurations/:id/executions',
    {
      config: { permission: 'journals:read' },
      schema: {
        operationId: 'listExtractionExecutions',
        tags: ['extracts'],
        summary: 'The asynchronous extractions of a configuration, newest first',
        params: Type.Object({ id: Id }),
        querystring: Type.Object(
          { limit: Type.Integer({ minimum: 1, maximum: 1000, default: 50 }), ...AfterQuery },
          { additionalProperties: false },
        ),
        response: { 200: CursorPage(ExtractExecutionAnswer), 400: Problem, 404: Problem },
      },
    },
    async (request) => {
      const id = Number(request.params.id);
      const { limit, after } = request.query;
      const before = after === undefined ? Number.MAX_SAFE_INTEGER : beforeOfCursor(id, after);
      const { rows, next } = await executions.list(id, before, limit);
      return cursorPageOf(rows, limit, next === undefined ? null : listCursor(id, next));
    },
  );
}

/** `GET /api/v1/extraction-executions/:executionId` and `…/file`: one execution, and its file. */
function registerExecutionRoutes(app: ApiApp, executions: ExtractExecutions): void {
  app.get(
    '/api/v1/extraction-executions/:executionId',
    {
      config: { permission: 'journals:read' },
      schema: {
        operationId: 'getExtractionExecution',
        tags: ['extracts'],
        summary: 'An asynchronous extraction with its runs',
        params: Type.Object({ executionId: Id }),
        response: {
          200: Type.Composite([
            ExtractExecutionAnswer,
            Type.Object({
              runs: Type.Array(ExtractRunAnswer, {
                maxItems: EXTRACT_RUNS_SHOWN_MAX,
                description: `The runs made so far, in order (the first ${EXTRACT_RUNS_SHOWN_MAX}).`,
              }),
            }),
          ]),
          400: Problem,
          404: Problem,
        },
      },
    },
    async (request) => executions.get(Number(request.params.executionId)),
  );

  app.get(
    '/api/v1/extraction-executions/:executionId/file',
    {
      config: { permission: 'journals:read' },
      schema: {
        operationId: 'downloadExtractionExecution',
        tags: ['extracts'],
        summary: 'The file of a completed asynchronous extraction',
        description: `409 while the execution is not completed; 404 once its file expired (${EXTRACT_FILE_KEEP_HOURS} hours after it ended).`,
        params: Type.Object({ executionId: Id }),
        response: {
          200: Type.String({ description: 'JSON Lines or CSV, as the execution’s `format`.' }),
          400: Problem,
          404: Problem,
          409: Problem,
        },
      },
    },
    async (request, reply) => {
      const { execution, parts } = await executions.file(Number(request.params.executionId));
      const untyped: FastifyReply = reply;
      return untyped
        .type(CONTENT_TYPES[execution.format])
        .header(
          'content-disposition',
          `attachment; filename="extraction-${execution.id}.${execution.format}"`,
        )
        .send(Readable.from(parts));
    },
  );
}
