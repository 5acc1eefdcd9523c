import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices } from '../../src/composition/services.js';
import { STARTING_DETAIL } from '../../src/http/api/operations.js';
import { type AppDeps, buildApp } from '../../src/http/app.js';
import type { ProcessingStatus } from '../../src/processing/messages.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { testClock } from '../helpers/clock.js';
import { createTestStore } from '../helpers/store.js';

describe('operations endpoints and problem details', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it('answers healthz and readyz without a token', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' });
  });

  it('counts requests per route and status in Prometheus format', async () => {
    await t.app.inject({ method: 'GET', url: '/healthz' });
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.headers['content-type']).toContain('text/plain');
    expect(metrics.body).toMatch(
      /http_requests_total\{method="GET",route="\/healthz",status_code="200"\} \d+/,
    );
    expect(metrics.body).toContain('http_request_duration_seconds_bucket');
  });

  it('serves an OpenAPI 3.1 document of every endpoint and a docs page', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(response.statusCode).toBe(200);
    const document = response.json();
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/auth/token', '/api/v1/credentials', '/api/v1/users/{email}']),
    );
    const docs = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(docs.statusCode).toBe(200);
    expect(docs.body).toContain('<html');
  });

  it('answers unknown routes and malformed JSON with problem+json carrying a reference', async () => {
    const missing = await t.app.inject({ method: 'GET', url: '/api/v1/nothing-here' });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toContain('application/problem+json');
    expect(missing.json()).toEqual({
      type: 'urn:ledgerflow:problem:not-found',
      title: expect.any(String),
      status: 404,
      detail: expect.any(String),
      instance: '/api/v1/nothing-here',
      timestamp: expect.stringMatching(/Z$/),
      reference: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    const admin = await t.tokenFor(['admin']);
    const malformed = await t.call(admin, {
      method: 'POST',
      url: '/api/v1/users',
      headers: { 'content-type': 'application/json' },
      payload: '{"email": ',
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().type).toBe('urn:ledgerflow:problem:malformed-json');
  });

  it('names the byte limit in a 413 and application/json in a 415', async () => {
    const admin = await t.tokenFor(['admin']);
    const tooLarge = await t.call(admin, {
      method: 'POST',
      url: '/api/v1/users',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email: 'x'.repeat(1024 * 1024) }),
    });
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json()).toMatchObject({
      type: 'urn:ledgerflow:problem:payload-too-large',
      detail: 'the body is larger than this endpoint accepts: at most 1,048,576 bytes',
      limitBytes: 1_048_576,
    });
    const wrongType = await t.call(admin, {
      method: 'POST',
      url: '/api/v1/users',
      headers: { 'content-type': 'application/xml' },
      payload: '<email>a@b.c</email>',
    });
    expect(wrongType.statusCode).toBe(415);
    expect(wrongType.json()).toMatchObject({
      type: 'urn:ledgerflow:problem:unsupported-media-type',
      detail: 'the Content-Type application/xml is not accepted here; send the body as application/json',
    });
  });

  it('documents the limits of a chunk in the OpenAPI description of the chunk route', async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const description: string = document.paths['/api/v1/ingestions/{ingestionId}'].post.description;
    expect(description).toContain('at most 1,048,576 bytes');
    expect(description).toContain('at most 20,000 records');
  });
});

/**
 * Issue 20, point 2: background processing that runs degraded (on the main thread after the
 * processing thread ended too often, or not at all) shows in `/readyz` and in the metrics.
 */
/** The app on a fresh store with `deps` as main.ts gives them, and how to close both. */
async function appWith(
  deps: Pick<AppDeps, 'processingStatus' | 'startingUp'>,
): Promise<{ app: FastifyInstance; dispose(): Promise<void> }> {
  const created = await createTestStore();
  const services = createServices(created.store, testClock(), {
    accessTokenTtlSeconds: 300,
    refreshTokenTtlSeconds: 1800,
    businessDate: undefined,
  });
  const app = await buildApp({ store: created.store, services, logger: false, ...deps });
  return {
    app,
    async dispose() {
      await app.close();
      await created.dispose();
    },
  };
}

describe('readyz and metrics of degraded processing', () => {
  let app: FastifyInstance;
  let dispose: () => Promise<void>;
  let status: ProcessingStatus = {
    runsOn: 'processing-thread',
    degraded: false,
    detail: undefined,
    threadRestarts: 0,
  };
  beforeAll(async () => {
    ({ app, dispose } = await appWith({ processingStatus: () => status }));
  });
  afterAll(async () => dispose?.());

  const metric = async (name: string) => {
    const body = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(body)?.[1]);
  };

  it('says nothing of processing that runs where it should', async () => {
    expect((await app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' });
    expect(await metric('processing_degraded')).toBe(0);
    expect(await metric('processing_thread_restarts_total')).toBe(0);
  });

  it('stays ready but names degraded processing, and counts the restarts', async () => {
    status = {
      runsOn: 'main-thread',
      degraded: true,
      detail: 'the processing thread ended unexpectedly too often',
      threadRestarts: 3,
    };
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({
      status: 'ready',
      processing: {
        state: 'degraded',
        runsOn: 'main-thread',
        detail: 'the processing thread ended unexpectedly too often',
      },
    });
    expect(await metric('processing_degraded')).toBe(1);
    expect(await metric('processing_thread_restarts_total')).toBe(3);
  });
});

/**
 * The process holds readiness until the first administrator and the bootstrap credential exist
 * (main.ts), so a probe never sends traffic that a credential request would see refused.
 */
describe('readyz while the process starts', () => {
  let app: FastifyInstance;
  let dispose: () => Promise<void>;
  let startingUp = true;
  beforeAll(async () => {
    ({ app, dispose } = await appWith({ startingUp: () => startingUp }));
  });
  afterAll(async () => dispose?.());

  it('answers 503 with Retry-After while starting, stays alive, and is ready once started', async () => {
    const starting = await app.inject({ method: 'GET', url: '/readyz' });
    expect(starting.statusCode).toBe(503);
    expect(starting.headers['retry-after']).toBe('1');
    expect(starting.headers['content-type']).toContain('application/problem+json');
    expect(starting.json()).toMatchObject({
      type: 'urn:ledgerflow:problem:unavailable',
      status: 503,
      detail: STARTING_DETAIL,
    });
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);

    startingUp = false;
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready' });
  });
});
