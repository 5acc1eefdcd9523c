import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { AppError } from '../../lib/errors.js';
import {
  ExtractConfigurationChangeInput,
  ExtractConfigurationInput,
  ExtractFormatInput,
} from '../../modules/extracts/inputs.js';
import {
  EXTRACT_PAGE_ROWS_MAX,
  type ExtractCursor,
  type ExtractService,
  viewOf,
} from '../../modules/extracts/service.js';
import type {
  ExtractFormat,
  ExtractState,
  StoredExtractConfiguration,
} from '../../modules/extracts/store.js';
import { ChangeHeaders, ChangeQuery, changeOptionsOf, DeletionAnswers, sendChange } from './changes.js';
import { ExtractConfigurationAnswer, ExtractIncrementAnswer, ExtractRow } from './extract-answers.js';
import type { ApiApp } from './route-app.js';
import { AfterQuery, CursorPage, cursorPageOf, Problem } from './schemas.js';

/**
 * The longest extract cursor: it holds the end of its window, which on PostgreSQL lists the
 * transactions running when the window was fixed, so it is longer than other lists' cursors.
 */
const EXTRACT_CURSOR_LENGTH_MAX = 8192;

/** A configuration's id in a path. */
const IdPath = Type.Object({
  id: Type.String({ pattern: '^[1-9][0-9]{0,14}$', maxLength: 15, description: 'The configuration id.' }),
});

/**
 * The cursor of an extract page: base64url of a JSON array holding the list's name, the end of
 * the window the page belongs to and the key of its last row. Read back only as such: anything
 * else is a 400 naming `after`.
 */
function cursorText(id: number, cursor: ExtractCursor): string {
  return Buffer.from(JSON.stringify([`extract:${id}`, cursor.to, ...cursor.key]), 'utf8').toString(
    'base64url',
  );
}

/** A window's end as the store makes it: a number, or a PostgreSQL snapshot (`xmin:xmax:xip,…`). */
const POSITION = /^[0-9]{1,20}(:[0-9]{1,20}:([0-9]{1,20}(,[0-9]{1,20})*)?)?$/;

/**
 * True for a number, and for a snapshot whose running transactions lie, ascending, between its
 * `xmin` and `xmax`: PostgreSQL refuses any other, and a cursor is refused before a query sees it.
 */
function wellOrdered(position: string): boolean {
  const [xmin, xmax, list] = position.split(':');
  if (xmax === undefined || xmin === undefined) return true;
  const running = list === undefined || list === '' ? [] : list.split(',').map(BigInt);
  const bounds = [BigInt(xmin), ...running, BigInt(xmax)];
  return bounds.every((value, i) => i === 0 || (bounds[i - 1] ?? value) <= value);
}

function cursorOfText(id: number, text: string): ExtractCursor {
  const refused = new AppError('validation-failed', 'after is not a cursor of this extract', {
    errors: [{ path: '/querystring/after', message: 'must be the next cursor of an answer of this extract' }],
  });
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw refused;
  }
  if (!Array.isArray(decoded) || decoded.length < 3 || decoded[0] !== `extract:${id}`) throw refused;
  const [, to, ...key] = decoded as unknown[];
  const part = (value: unknown) =>
    (typeof value === 'string' && value.length <= 1000) ||
    (typeof value === 'number' && Number.isSafeInteger(value));
  if (typeof to !== 'string' || !POSITION.test(to) || !wellOrdered(to) || !key.every(part)) throw refused;
  return { to, key: key as (string | number)[] };
}

/** The cursor of the next configurations page. */
function listCursor(state: ExtractState, after: number): string {
  return Buffer.from(JSON.stringify(['extraction-configurations', state, after]), 'utf8').toString(
    'base64url',
  );
}

function afterOfListCursor(state: ExtractState, text: string): number {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (
      Array.isArray(decoded) &&
      decoded.length === 3 &&
      decoded[0] === 'extraction-configurations' &&
      decoded[1] === state &&
      Number.isSafeInteger(decoded[2])
    )
      return decoded[2] as number;
  } catch {}
  throw new AppError('validation-failed', 'after is not a cursor of this list', {
    errors: [{ path: '/querystring/after', message: 'must be the next cursor of an answer of this list' }],
  });
}

const CONTENT_TYPES: { readonly [F in ExtractFormat]: string } = {
  jsonl: 'application/jsonl; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
};

/** The streamed text of an extract, a turn of the event loop between two queries. */
async function* streamed(
  extracts: ExtractService,
  config: StoredExtractConfiguration,
  format: ExtractFormat,
): AsyncGenerator<string> {
  const window = await extracts.window(config);
  for await (const { text } of extracts.lines(config, window, format)) {
    if (text.length > 0) yield text;
    await nextTurn();
  }
}

/** Extraction configurations, their reads and the acknowledgement of incremental reads. */
export const extractRoutes: FastifyPluginAsyncTypebox<{ extracts: ExtractService }> = async (
  app,
  { extracts },
) => {
  registerCreateConfigurationRoute(app, extracts);
  registerListConfigurationsRoute(app, extracts);
  registerConfigurationRoutes(app, extracts);
  registerExtractPageRoute(app, extracts);
  registerExtractDownloadRoute(app, extracts);
  registerIncrementRoute(app, extracts);
};

/** `POST /api/v1/extraction-configurations`: a new configuration, in Draft. */
function registerCreateConfigurationRoute(app: ApiApp, extracts: ExtractService): void {
  app.post(
    '/api/v1/extraction-configurations',
    {
      config: { permission: 'extracts:manage' },
      schema: {
        operationId: 'createExtractionConfiguration',
        tags: ['extracts'],
        summary: 'Create an extraction configuration (in Draft)',
        description:
          "A configuration names a source, the filters that keep its rows (each source takes some: journals, lines and balances `accountingConfig` and `node`; processing errors `namespace`, `entity` and `code`; records `namespace` and `entity`, both required; balances `asOf`), the fields of each row, a format and whether it is incremental. It starts in Draft: make it Active (`PATCH`) to read it. A filter a source does not take, a field it does not have, an incremental balances extract or a CSV extract of records without `fields` is a 400 naming the member. A records extract of a namespace or entity the configuration does not hold is a 404 `entity-not-found` naming `/filters/namespace` or `/filters/entity`, as a read of that entity's records is. Written to the audit log.",
        body: ExtractConfigurationInput,
        querystring: ChangeQuery,
        headers: ChangeHeaders,
        response: {
          200: ExtractConfigurationAnswer,
          201: ExtractConfigurationAnswer,
          400: Problem,
          404: Problem,
          422: Problem,
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const outcome = await extracts.create(
        {
          name: body.name,
          description: body.description ?? null,
          source: body.source,
          filters: body.filters ?? {},
          fields: body.fields ?? null,
          format: body.format ?? 'jsonl',
          incremental: body.incremental ?? false,
        },
        changeOptionsOf(request),
      );
      if (!outcome.dryRun) reply.header('location', `/api/v1/extraction-configurations/${outcome.answer.id}`);
      return sendChange(reply, outcome, 201);
    },
  );
}

/** `GET /api/v1/extraction-configurations`: the configurations in one state, by id. */
function registerListConfigurationsRoute(app: ApiApp, extracts: ExtractService): void {
  app.get(
    '/api/v1/extraction-configurations',
    {
      config: { permission: 'journals:read' },
      schema: {
        operationId: 'listExtractionConfigurations',
        tags: ['extracts'],
        summary: 'Extraction configurations in one state (Active unless `state` says), by id',
        querystring: Type.Object(
          {
            state: Type.Union([Type.Literal('Draft'), Type.Literal('Active'), Type.Literal('Inactive')], {
              default: 'Active',
            }),
            limit: Type.Integer({ minimum: 1, maximum: EXTRACT_PAGE_ROWS_MAX, default: 50 }),
            ...AfterQuery,
          },
          { additionalProperties: false },
        ),
        response: { 200: CursorPage(ExtractConfigurationAnswer), 400: Problem },
      },
    },
    async (request) => {
      const { state, limit, after } = request.query;
      const from = after === undefined ? 0 : afterOfListCursor(state, after);
      const { rows, next } = await extracts.list(state, from, limit);
      return cursorPageOf(rows, limit, next === undefined ? null : listCursor(state, next));
    },
  );
}

/** `GET`, `PATCH` and `DELETE /api/v1/extraction-configurations/:id`: one configuration. */
function registerConfigurationRoutes(app: ApiApp, extracts: ExtractService): void {
  app.get(
    '/api/v1/extraction-configurations/:id',
    {
      config: { permission: 'journals:read' },
      schema: {
        operationId: 'getExtractionConfiguration',
        tags: ['extracts'],
        summary: 'An extraction configuration',
        params: IdPath,
        response: { 200: ExtractConfigurationAnswer, 400: Problem, 404: Problem },
      },
    },
    async (request) => viewOf(await extracts.get(Number(request.params.id))),
  );

  app.patch(
    '/api/v1/extraction-configurations/:id',
    {
      config: { permission: 'extracts:manage' },
      schema: {
        operationId: 'updateExtractionConfiguration',
        tags: ['extracts'],
        summary: 'Change an extraction configuration or its state',
        description:
          'States go Draft → Active → Inactive, and Inactive → Active again (the offset is kept); nothing returns to Draft (409). Source, filters and `incremental` change only in Draft (409 otherwise): they decide which rows the offset counts. Name, description, fields and format change in any state. A change of source or filters to a records extract of an entity the configuration does not hold is a 404 `entity-not-found` naming the filter. Written to the audit log.',
        params: IdPath,
        body: ExtractConfigurationChangeInput,
        querystring: ChangeQuery,
        headers: ChangeHeaders,
        response: { 200: ExtractConfigurationAnswer, 400: Problem, 404: Problem, 409: Problem, 422: Problem },
      },
    },
    async (request, reply) =>
      sendChange(
        reply,
        await extracts.update(Number(request.params.id), request.body, changeOptionsOf(request)),
        200,
      ),
  );

  app.delete(
    '/api/v1/extraction-configurations/:id',
    {
      config: { permission: 'extracts:manage' },
      schema: {
        operationId: 'deleteExtractionConfiguration',
        tags: ['extracts'],
        summary: 'Delete an extraction configuration, its offset and its executions',
        description:
          'With `dryRun=true` the answer (200) names the configuration that would be deleted. Written to the audit log.',
        params: IdPath,
        querystring: ChangeQuery,
        headers: ChangeHeaders,
        response: { ...DeletionAnswers, 400: Problem, 404: Problem, 422: Problem },
      },
    },
    async (request, reply) =>
      sendChange(reply, await extracts.delete(Number(request.params.id), changeOptionsOf(request)), 204),
  );
}

/** `GET …/:id/extractions/paginated`: a page of an Active configuration's extract, by cursor. */
function registerExtractPageRoute(app: ApiApp, extracts: ExtractService): void {
  app.get(
    '/api/v1/extraction-configurations/:id/extractions/paginated',
    {
      config: { permission: 'journals:read' },
      schema: {
        operationId: 'readExtractionPage',
        tags: ['extracts'],
        summary: 'A page of the extract of an Active configuration',
        description: `Pages by cursor: follow \`next\` until it is null. An incremental extract answers the rows written (journals: posted) since the last \`increment\`; its first read fixes where the answer ends, and every read answers the same rows until \`increment\` acknowledges them, however many instances write meanwhile. Other extracts answer every row final when their first page was read. At most ${EXTRACT_PAGE_ROWS_MAX} rows per page. 409 when the configuration is not Active; a cursor of an acknowledged read is a 400 naming \`after\`; a records extract whose entity the configuration no longer holds is a 404 \`entity-not-found\`, as a read of that entity's records is.`,
        params: IdPath,
        querystring: Type.Object(
          {
            limit: Type.Integer({ minimum: 1, maximum: EXTRACT_PAGE_ROWS_MAX, default: 100 }),
            after: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: EXTRACT_CURSOR_LENGTH_MAX,
                pattern: '^[A-Za-z0-9_-]+$',
                description:
                  'The `next` cursor of the previous page. A cursor of an acknowledged read, or not of this extract, is a 400 naming `after`.',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: CursorPage(ExtractRow), 400: Problem, 404: Problem, 409: Problem },
      },
    },
    async (request) => {
      const id = Number(request.params.id);
      const { limit, after } = request.query;
      const page = await extracts.page(id, after === undefined ? undefined : cursorOfText(id, after), limit);
      return cursorPageOf(page.rows, limit, page.next === undefined ? null : cursorText(id, page.next));
    },
  );
}

/** `GET …/:id/extractions`: the whole extract of an Active configuration, streamed as one file. */
function registerExtractDownloadRoute(app: ApiApp, extracts: ExtractService): void {
  app.get(
    '/api/v1/extraction-configurations/:id/extractions',
    {
      config: { permission: 'journals:read' },
      schema: {
        operationId: 'downloadExtraction',
        tags: ['extracts'],
        summary: 'The whole extract of an Active configuration, streamed as JSON Lines or CSV',
        description:
          'The same rows as the paginated read, as one file in the configuration’s format (or `format`), written as it is read from a keyed cursor, so memory stays flat at any size. An incremental extract answers its pending read, as the paginated read does, until `increment`. Refused as the paginated read is (409 when not Active; 404 `entity-not-found` for a records extract whose entity the configuration no longer holds).',
        params: IdPath,
        querystring: Type.Object(
          { format: Type.Optional(ExtractFormatInput) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.String({
            description: 'JSON Lines (`application/jsonl`) or CSV (`text/csv`) with a header line.',
          }),
          400: Problem,
          404: Problem,
          409: Problem,
        },
      },
    },
    async (request, reply) => {
      const config = await extracts.active(Number(request.params.id));
      const format = request.query.format ?? config.format;
      // The window is fixed before the first byte, so a failure to fix it is still a problem answer.
      const first = streamed(extracts, config, format);
      const head = await first.next();
      async function* all(): AsyncGenerator<string> {
        if (head.done !== true) yield head.value;
        yield* first;
      }
      const untyped: FastifyReply = reply;
      return untyped
        .type(CONTENT_TYPES[format])
        .header('content-disposition', `attachment; filename="extract-${config.id}.${format}"`)
        .send(Readable.from(all()));
    },
  );
}

/** `POST …/:id/increment`: acknowledges an incremental extract's last read. */
function registerIncrementRoute(app: ApiApp, extracts: ExtractService): void {
  app.post(
    '/api/v1/extraction-configurations/:id/increment',
    {
      config: { permission: 'journals:read' },
      schema: {
        operationId: 'incrementExtraction',
        tags: ['extracts'],
        summary: 'Acknowledge the last read of an incremental extract: its offset moves past it',
        description:
          'The next read answers only what is new after the acknowledged read. `latest offsets incremented` when a read was pending, `no extract performed since the last increment` when none was (nothing moves). 400 `extract-not-incremental` for a configuration that is not incremental. An increment that moves the offset is written to the audit log; one that moves nothing is not.',
        params: IdPath,
        querystring: ChangeQuery,
        headers: ChangeHeaders,
        response: { 200: ExtractIncrementAnswer, 400: Problem, 404: Problem, 422: Problem },
      },
    },
    async (request, reply) => {
      const outcome = await extracts.increment(Number(request.params.id), changeOptionsOf(request));
      return sendChange(reply, outcome, 200, { status: outcome.answer });
    },
  );
}
