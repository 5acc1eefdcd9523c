import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORM_BODY_BYTES_MAX } from '../../src/http/api/oauth/routes.js';
import { JSON_BODY_BYTES_MAX, JSON_BODY_NESTING_DEPTH_MAX } from '../../src/http/app.js';
import { CONFIGURATION_BODY_BYTES_MAX } from '../../src/modules/configuration/inputs.js';
import { CHUNK_BODY_BYTES_MAX, CHUNK_RECORDS_MAX } from '../../src/modules/ingestion/chunk-body.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { openLoanSession, realisticConfiguration } from '../helpers/fixtures.js';
import {
  contentType,
  hostileString,
  percentEncode,
  rawBody,
  type SchemaNode,
  schemaValue,
  toJsonText,
  urlValue,
} from '../helpers/fuzz-input.js';
import { loanRecord } from '../helpers/records.js';

/**
 * Every route of the OpenAPI document gets generated hostile input: wrong types, huge and deeply
 * nested JSON, NUL and odd unicode, prototype keys, out-of-range pages, traversal and SQL-looking
 * ids, repeated query parameters, wrong and missing content types, empty bodies and bodies just
 * over the limit. No answer may be a 5xx, and every refusal must be problem+json (the OAuth error
 * form at `/auth/*`). The seed is fixed, so a run is the same every time.
 */

/** The fast-check seed of every property here: fixed, so the suite is deterministic. */
const FUZZ_SEED = 20_261_123;
/** Generated requests per route and method. */
const FUZZ_RUNS_PER_OPERATION = 300;

interface Parameter {
  in: 'path' | 'query' | 'header';
  name: string;
  schema?: SchemaNode;
}

interface Operation {
  method: string;
  path: string;
  parameters: Parameter[];
  body?: SchemaNode;
}

interface OpenApiDocument {
  paths: Record<
    string,
    Record<
      string,
      { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema?: SchemaNode }> } }
    >
  >;
}

/** Routes left out of random runs: emptying the configuration makes every later case shallower. */
const NOT_FUZZED = new Set(['DELETE /api/v1/configuration/bulk']);

/** The body limit of a route, as the app sets it. */
function bodyLimitOf(operation: Operation): number {
  if (operation.path.startsWith('/auth/')) return FORM_BODY_BYTES_MAX;
  if (operation.path === '/api/v1/configuration/bulk') return CONFIGURATION_BODY_BYTES_MAX;
  if (operation.path === '/api/v1/ingestions/{ingestionId}') return CHUNK_BODY_BYTES_MAX;
  return JSON_BODY_BYTES_MAX;
}

/** Whether the route answers in the OAuth error form rather than problem+json. */
const isOAuthRoute = (path: string) => path.startsWith('/auth/');

/**
 * Fails on a 5xx, and on a refusal that is not problem+json with `type`, `status` equal to the
 * HTTP status and `reference` (or, at `/auth/*`, not `{error, error_description}` in JSON).
 */
function expectWellFormedAnswer(request: InjectOptions, response: LightMyRequestResponse): void {
  const label = `${request.method} ${String(request.url).slice(0, 300)} → ${response.statusCode} ${response.body.slice(0, 300)}`;
  expect(response.statusCode, label).toBeLessThan(500);
  if (response.statusCode < 400) return;
  const type = String(response.headers['content-type'] ?? '');
  const body = response.json() as Record<string, unknown>;
  if (isOAuthRoute(String(request.url))) {
    expect(type, label).toMatch(/^application\/json/);
    expect(typeof body.error, label).toBe('string');
    expect(typeof body.error_description, label).toBe('string');
    return;
  }
  expect(type, label).toMatch(/^application\/problem\+json/);
  expect(typeof body.type, label).toBe('string');
  expect(body.status, label).toBe(response.statusCode);
  expect(typeof body.reference, label).toBe('string');
}

describe('fuzzing every route with hostile input', () => {
  let t: TestApp;
  let admin: string;
  let operations: Operation[];
  /** Real values for path parameters, so generated requests also reach past the lookups. */
  const realValues: Record<string, () => Promise<string>> = {};

  const send = async (request: InjectOptions) => {
    const response = await t.app.inject(request);
    expectWellFormedAnswer(request, response);
    return response;
  };

  const openSession = () => openLoanSession(t, admin);

  const uploadConfiguration = async () => {
    const put = await t.call(admin, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk',
      payload: realisticConfiguration(),
    });
    expect(put.statusCode, put.body).toBe(200);
  };

  beforeAll(async () => {
    t = await createTestApp();
    admin = await t.tokenFor(['admin']);
    await uploadConfiguration();
    const spare = await t.credentialFor(['viewer']);
    const document = t.app.swagger() as unknown as OpenApiDocument;
    operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        parameters: operation.parameters ?? [],
        ...(operation.requestBody === undefined
          ? {}
          : { body: Object.values(operation.requestBody.content)[0]?.schema ?? {} }),
      })),
    );
    realValues.ingestionId = openSession;
    realValues.ns = async () => 'loans';
    realValues.entity = async () => 'loanTransaction';
    realValues.email = async () => spare.ownerEmail;
    realValues.clientId = async () => spare.clientId;
    realValues.id = async () => '1';
  });
  afterAll(async () => t?.close());

  it('reads every documented route', () => {
    expect(operations.length).toBeGreaterThan(30);
    expect(operations.map((operation) => `${operation.method} ${operation.path}`)).toContain(
      'POST /api/v1/ingestions/{ingestionId}',
    );
  });

  /** A generated request to one operation, built once its real path values are known. */
  const requestOf = (operation: Operation) => {
    const pathNames = operation.parameters.filter((p) => p.in === 'path').map((p) => p.name);
    const queryParameters = operation.parameters.filter((p) => p.in === 'query');
    const pathValue = fc.option(urlValue(hostileString), { nil: undefined, freq: 3 });
    const queryValue = (parameter: Parameter) =>
      fc.oneof(
        {
          weight: 2,
          arbitrary: schemaValue(parameter.schema ?? {}).map((value) => percentEncode(String(value))),
        },
        { weight: 3, arbitrary: urlValue(hostileString) },
      );
    const query = fc.array(
      fc.oneof(
        ...queryParameters.map((parameter) =>
          fc.tuple(
            fc.constant(parameter.name),
            fc.array(queryValue(parameter), { minLength: 1, maxLength: 3 }),
          ),
        ),
        fc.tuple(
          fc.constantFrom('__proto__', 'constructor', 'page[]', 'limit', 'unknown', '%00', ''),
          fc.array(urlValue(hostileString), { minLength: 1, maxLength: 2 }),
        ),
      ),
      { maxLength: 4 },
    );
    const form = fc
      .array(
        fc.tuple(
          fc.constantFrom(
            'grant_type',
            'client_id',
            'client_secret',
            'refresh_token',
            'token',
            'scope',
            '__proto__',
          ),
          fc.oneof(
            fc.constantFrom('client_credentials', 'refresh_token', 'password', 'lfc_unknown'),
            urlValue(hostileString),
          ),
        ),
        { maxLength: 5 },
      )
      .map((fields) => fields.map(([name, value]) => `${name}=${value}`).join('&'));
    const body: fc.Arbitrary<string | undefined> = isOAuthRoute(operation.path)
      ? fc.oneof(form, rawBody, fc.constant(undefined))
      : fc.oneof(
          {
            weight: operation.body === undefined ? 1 : 4,
            arbitrary: schemaValue(operation.body ?? {}).map(toJsonText),
          },
          { weight: 2, arbitrary: rawBody },
          { weight: 1, arbitrary: fc.constant(undefined) },
        );
    const headers = fc.record({
      contentType: isOAuthRoute(operation.path)
        ? fc.oneof(contentType, fc.constant('application/x-www-form-urlencoded'))
        : contentType,
      authorization: fc.constantFrom<'admin' | 'lower-case' | 'none' | 'garbage'>(
        'admin',
        'admin',
        'admin',
        'admin',
        'lower-case',
        'none',
        'garbage',
      ),
      idempotencyKey: fc.option(fc.constantFrom('k', 'key-1', 'x'.repeat(201), '%00', '\u00ff'), {
        nil: undefined,
      }),
    });
    return fc.record({
      pathValues: fc.tuple(...pathNames.map(() => pathValue)),
      query,
      body,
      headers,
    });
  };

  const FUZZED = [
    'GET /healthz',
    'GET /readyz',
    'GET /metrics',
    'POST /auth/token',
    'POST /auth/revoke',
    'GET /.well-known/oauth-authorization-server',
    'POST /api/v1/credentials',
    'GET /api/v1/credentials',
    'DELETE /api/v1/credentials/{clientId}',
    'POST /api/v1/users',
    'GET /api/v1/users',
    'PATCH /api/v1/users/{email}',
    'GET /api/v1/configuration/bulk',
    'PUT /api/v1/configuration/bulk',
    'GET /api/v1/configuration/revisions',
    'GET /api/v1/configuration/revisions/{revision}',
    'GET /api/v1/configuration/revisions/{revision}/diff',
    'GET /api/v1/audit-log',
    'GET /api/v1/audit-log/export',
    'GET /api/v1/audit-log/verification',
    'GET /api/v1/namespaces',
    'GET /api/v1/namespaces/{ns}/entities',
    'GET /api/v1/namespaces/{ns}/entities/{entity}',
    'GET /api/v1/namespaces/{ns}/entities/{entity}/example',
    'POST /api/v1/ingestions',
    'GET /api/v1/ingestions',
    'GET /api/v1/ingestions/{ingestionId}',
    'PATCH /api/v1/ingestions/{ingestionId}',
    'POST /api/v1/ingestions/{ingestionId}',
    'GET /api/v1/ingestions/{ingestionId}/errors',
    'GET /api/v1/namespaces/{ns}/entities/{entity}/records',
    'GET /api/v1/statistics/operational-dashboard/ingestion-metrics',
    'GET /api/v1/statistics/operational-dashboard/journal-metrics',
    'GET /api/v1/statistics/operational-dashboard/journal-metrics-by-day',
    'GET /api/v1/statistics/processing',
    'GET /api/v1/journals',
    'GET /api/v1/journals/{journalId}',
    'GET /api/v1/balances',
    'GET /api/v1/processing-errors',
    'POST /api/v1/processing-errors/reprocess',
    'GET /api/v1/processing-errors/reprocess-runs',
    'GET /api/v1/processing-errors/reprocess-runs/{id}',
    'GET /api/v1/processing-errors/reprocess-schedule',
    'PUT /api/v1/processing-errors/reprocess-schedule',
    'GET /api/v1/statistics/reprocessing',
    'POST /api/v1/reversals',
    'GET /api/v1/reversals',
    'GET /api/v1/reversals/{reversalId}',
    'GET /api/v1/approval-requests',
    'GET /api/v1/approval-requests/{requestId}',
    'POST /api/v1/approval-requests/{requestId}/approve',
    'POST /api/v1/approval-requests/{requestId}/reject',
    'POST /api/v1/approval-requests/{requestId}/cancel',
    'GET /api/v1/periods',
    'POST /api/v1/periods/close',
    'POST /api/v1/periods/lock',
    'POST /api/v1/periods/reopen',
    'GET /api/v1/periods/snapshots',
    'GET /api/v1/periods/snapshots/{snapshotId}',
    'POST /api/v1/extraction-configurations',
    'GET /api/v1/extraction-configurations',
    'GET /api/v1/extraction-configurations/{id}',
    'PATCH /api/v1/extraction-configurations/{id}',
    'DELETE /api/v1/extraction-configurations/{id}',
    'GET /api/v1/extraction-configurations/{id}/extractions/paginated',
    'GET /api/v1/extraction-configurations/{id}/extractions',
    'POST /api/v1/extraction-configurations/{id}/increment',
    'POST /api/v1/extraction-configurations/{id}/executions',
    'GET /api/v1/extraction-configurations/{id}/executions',
    'GET /api/v1/extraction-executions/{executionId}',
    'GET /api/v1/extraction-executions/{executionId}/file',
    'GET /api/v1/event-deliveries/event-types',
    'POST /api/v1/event-deliveries/subscriptions',
    'GET /api/v1/event-deliveries/subscriptions',
    'GET /api/v1/event-deliveries/subscriptions/{id}',
    'PATCH /api/v1/event-deliveries/subscriptions/{id}',
    'POST /api/v1/event-deliveries/subscriptions/{id}/pause',
    'POST /api/v1/event-deliveries/subscriptions/{id}/resume',
    'DELETE /api/v1/event-deliveries/subscriptions/{id}',
    'GET /api/v1/event-deliveries/subscriptions/{id}/deliveries',
    'POST /api/v1/event-deliveries/subscriptions/{id}/redeliver',
    'POST /api/v1/event-deliveries/secrets',
    'POST /api/v1/event-deliveries/secrets/rotate',
    'GET /api/v1/event-deliveries/secrets',
    'GET /api/v1/event-deliveries/deliveries',
    'GET /api/v1/event-deliveries/deliveries/{id}',
    'POST /api/v1/event-deliveries/deliveries/{id}/redeliver',
  ];

  it('fuzzes every documented route but the configuration wipe', () => {
    const documented = operations
      .map((operation) => `${operation.method} ${operation.path}`)
      .filter((key) => !NOT_FUZZED.has(key));
    expect([...FUZZED].sort()).toEqual(documented.sort());
  });

  it.each(FUZZED)('%s: no 5xx, every refusal well formed', async (key) => {
    const operation = operations.find((candidate) => `${candidate.method} ${candidate.path}` === key);
    if (operation === undefined) throw new Error(`${key} is not in the OpenAPI document`);
    try {
      await fc.assert(
        fc.asyncProperty(requestOf(operation), async ({ pathValues, query, body, headers }) => {
          let url = operation.path;
          const pathNames = operation.parameters.filter((p) => p.in === 'path').map((p) => p.name);
          for (const [index, name] of pathNames.entries()) {
            const real = realValues[name];
            const value = pathValues[index] ?? (real === undefined ? 'unknown' : percentEncode(await real()));
            url = url.replace(`{${name}}`, value);
          }
          const queryText = query
            .flatMap(([name, values]) => values.map((value) => `${name}=${value}`))
            .join('&');
          const requestHeaders: Record<string, string> = {};
          if (headers.authorization === 'admin') requestHeaders.authorization = `Bearer ${admin}`;
          if (headers.authorization === 'lower-case') requestHeaders.authorization = `bearer ${admin}`;
          if (headers.authorization === 'garbage')
            requestHeaders.authorization = 'Bearer \u00ff.%00.'.repeat(50);
          if (headers.contentType !== undefined) requestHeaders['content-type'] = headers.contentType;
          if (headers.idempotencyKey !== undefined)
            requestHeaders['idempotency-key'] = headers.idempotencyKey;
          await send({
            method: operation.method as InjectOptions['method'],
            url: queryText === '' ? url : `${url}?${queryText}`,
            headers: requestHeaders,
            ...(body === undefined ? {} : { payload: body }),
          });
        }),
        { seed: FUZZ_SEED, numRuns: FUZZ_RUNS_PER_OPERATION },
      );
    } finally {
      // A generated configuration that happens to be valid replaces the realistic one: put it back.
      if (key === 'PUT /api/v1/configuration/bulk') await uploadConfiguration();
    }
  });

  it.each(FUZZED.filter((key) => /^(POST|PUT|PATCH) /.test(key)))(
    '%s: a body one byte over the limit is a well-formed 413',
    async (key) => {
      const operation = operations.find((candidate) => `${candidate.method} ${candidate.path}` === key);
      if (operation === undefined) throw new Error(`${key} is not in the OpenAPI document`);
      const limit = bodyLimitOf(operation);
      const oauth = isOAuthRoute(operation.path);
      // A document valid in form, one byte over: `{"a":"xxx…"}` or `a=xxx…`.
      const payload = oauth ? `a=${'x'.repeat(limit - 1)}` : `{"a":"${'x'.repeat(limit - 7)}"}`;
      expect(Buffer.byteLength(payload)).toBe(limit + 1);
      const url = operation.path.replace(/\{[^}]+\}/g, 'unknown');
      const response = await send({
        method: operation.method as InjectOptions['method'],
        url,
        headers: {
          authorization: `Bearer ${admin}`,
          'content-type': oauth ? 'application/x-www-form-urlencoded' : 'application/json',
        },
        payload,
      });
      expect(response.statusCode, response.body).toBe(413);
    },
  );

  it.each([
    ['GET', '/api/v1/ingestions/%ZZ'],
    ['GET', '/api/v1/journals/%C0%AE%C0%AE'],
    ['DELETE', '/api/v1/credentials/%E0%A4'],
    ['GET', `/api/v1/namespaces/loans/entities/${'x'.repeat(201)}`],
  ] as const)(
    "a path the router cannot read is a 400 problem, not Fastify's own form: %s %s",
    async (method, url) => {
      const response = await send({ method, url, headers: { authorization: `Bearer ${admin}` } });
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json()).toMatchObject({
        type: 'urn:ledgerflow:problem:validation-failed',
        status: 400,
      });
    },
  );

  it.each([
    ['POST', '/api/v1/users'],
    ['PATCH', '/api/v1/users/someone@example.test'],
    ['PUT', '/api/v1/configuration/bulk'],
    ['POST', '/api/v1/ingestions'],
  ] as const)(
    'a JSON body nested 20,000 levels deep is a 400, not a stack overflow: %s %s',
    async (method, url) => {
      const levels = 20_000;
      const response = await send({
        method,
        url,
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        payload: `{"a":${'['.repeat(levels)}${']'.repeat(levels)}}`,
      });
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json()).toMatchObject({
        type: 'urn:ledgerflow:problem:validation-failed',
        detail: `the body must not nest arrays and objects more than ${JSON_BODY_NESTING_DEPTH_MAX} levels deep`,
      });
    },
  );

  describe('the hostile inputs of issue 14', () => {
    const paginated = () =>
      operations.filter((operation) =>
        operation.parameters.some((parameter) => parameter.in === 'query' && parameter.name === 'page'),
      );

    it('point 3: an out-of-range page is a 400 naming the page on every paginated route', async () => {
      expect(paginated().length).toBeGreaterThanOrEqual(8);
      const id = await openSession();
      for (const operation of paginated()) {
        const url = operation.path
          .replace('{ns}', 'loans')
          .replace('{entity}', 'loanTransaction')
          .replace('{ingestionId}', id)
          .replace('{id}', '1');
        for (const page of ['1e20', '99999999999999999999', '-1', '1e400', '9007199254740992']) {
          const response = await send({
            method: 'GET',
            url: `${url}?page=${page}&limit=1000`,
            headers: { authorization: `Bearer ${admin}` },
          });
          expect(response.statusCode, `${url} page=${page}: ${response.body}`).toBe(400);
          expect(response.json().errors).toEqual(
            expect.arrayContaining([expect.objectContaining({ path: '/querystring/page' })]),
          );
        }
      }
    });

    it('point 4: a NUL in the token form is a 400 in the OAuth form, not stored', async () => {
      const response = await send({
        method: 'POST',
        url: '/auth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'grant_type=client_credentials&client_id=%00&client_secret=x',
      });
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json()).toMatchObject({ error: 'invalid_request' });
      expect(response.headers['cache-control']).toBe('no-store');
    });

    it.each([
      ['GET', '/api/v1/ingestions/in_%00'],
      ['GET', '/api/v1/journals/%00'],
      ['GET', '/api/v1/namespaces/lo%00ans/entities'],
      ['GET', '/api/v1/journals?ingestionId=%00'],
      ['PATCH', '/api/v1/users/a%00@example.test'],
    ] as const)('point 4: %s %s with a NUL is a 400', async (method, url) => {
      const response = await send({
        method,
        url,
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        ...(method === 'PATCH' ? { payload: { roles: ['viewer'] } } : {}),
      });
      expect(response.statusCode, response.body).toBe(400);
    });

    it('point 4: a NUL inside a chunk record is refused, not a 500', async () => {
      const id = await openSession();
      const response = await send({
        method: 'POST',
        url: `/api/v1/ingestions/${id}`,
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        payload: `{"data":[${JSON.stringify({ ...loanRecord(1), note: 'a\u0000b' })}]}`,
      });
      expect(response.statusCode, response.body).toBe(400);
    });

    it('point 5: a record nested 100,000 levels deep is a 400 and does not use up a sequence number', async () => {
      const id = await openSession();
      const levels = 100_000;
      const response = await send({
        method: 'POST',
        url: `/api/v1/ingestions/${id}`,
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        payload: `{"data":[{"extra":${'['.repeat(levels)}${']'.repeat(levels)}}]}`,
      });
      expect(response.statusCode, response.body).toBe(400);
      const next = await send({
        method: 'POST',
        url: `/api/v1/ingestions/${id}`,
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        payload: { data: [loanRecord(2)] },
      });
      expect(next.statusCode, next.body).toBe(201);
      expect(next.json().chunkSeq).toBe(response.json().chunkSeq + 1);
    });

    it('point 6: 20,000 empty records answer with a capped error list', async () => {
      const id = await openSession();
      const response = await send({
        method: 'POST',
        url: `/api/v1/ingestions/${id}`,
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ data: Array.from({ length: CHUNK_RECORDS_MAX }, () => ({})) }),
      });
      expect(response.statusCode).toBe(400);
      expect(response.body.length).toBeLessThan(200_000);
      const body = response.json() as { errors: unknown[]; errorsOmitted: number };
      expect(body.errors).toHaveLength(100);
      expect(body.errors.length + body.errorsOmitted).toBe(CHUNK_RECORDS_MAX);
    });
  });
});
