import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices, type Services } from '../../src/composition/services.js';
import { buildApp } from '../../src/http/app.js';
import { createRequestCountStore } from '../../src/storage/request-count-store.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { createTestApp, form, type TestApp } from '../helpers/app.js';
import { testClock } from '../helpers/clock.js';
import { createTestStore, TEST_DIALECT } from '../helpers/store.js';

const LIMIT = 5;
const WINDOW_MS = 60_000;

describe('finding: one client can no longer starve the rest with API calls', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ rateLimitMax: LIMIT, rateLimitWindowMs: WINDOW_MS });
  });
  afterAll(async () => t?.close());

  const list = (token: string) => t.call(token, { method: 'GET', url: '/api/v1/ingestions' });

  it('refuses a client past RATE_LIMIT_MAX with 429 and Retry-After, and serves the others', async () => {
    const greedy = await t.tokenFor(['api-client']);
    const other = await t.tokenFor(['api-client']);
    for (let i = 0; i < LIMIT; i += 1) {
      const answer = await list(greedy);
      expect(answer.statusCode).toBe(200);
      expect(answer.headers['x-ratelimit-limit']).toBe(String(LIMIT));
      expect(answer.headers['x-ratelimit-remaining']).toBe(String(LIMIT - i - 1));
    }
    const refused = await list(greedy);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_MS / 1000);
    expect(refused.json()).toMatchObject({
      type: 'urn:ledgerflow:problem:too-many-requests',
      status: 429,
      detail: expect.stringMatching(
        /^the client lfc_\S+ made more than 5 requests in 60 s; try again in \d+ s$/,
      ),
      limit: LIMIT,
      windowMs: WINDOW_MS,
      reference: expect.any(String),
    });
    expect((await list(other)).statusCode).toBe(200);
    t.clock.advance(retryAfter * 1000);
    expect((await list(greedy)).statusCode).toBe(200);
  });

  it('refuses before the body is read: a limited chunk is 429 whatever it holds', async () => {
    const token = await t.tokenFor(['api-client']);
    for (let i = 0; i < LIMIT; i += 1) await list(token);
    const chunk = await t.call(token, {
      method: 'POST',
      url: '/api/v1/ingestions/in_00000000000000000000000000000000',
      headers: { 'content-type': 'application/json' },
      payload: '{not json',
    });
    expect(chunk.statusCode).toBe(429);
  });

  it('never limits health, readiness and metrics', async () => {
    for (const url of ['/healthz', '/readyz', '/metrics']) {
      for (let i = 0; i < LIMIT * 3; i += 1) {
        const answer = await t.app.inject({ method: 'GET', url });
        expect(answer.statusCode, url).toBe(200);
        expect(answer.headers['x-ratelimit-limit']).toBeUndefined();
      }
    }
  });

  it('answers the token endpoint past the limit of an address in the OAuth error form', async () => {
    t.clock.advance(WINDOW_MS);
    const client = await t.credentialFor(['api-client']);
    const grant = () =>
      t.app.inject({
        method: 'POST',
        url: '/auth/token',
        ...form({
          grant_type: 'client_credentials',
          client_id: client.clientId,
          client_secret: client.clientSecret,
        }),
      });
    for (let i = 0; i < LIMIT; i += 1) expect((await grant()).statusCode).toBe(200);
    const refused = await grant();
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['cache-control']).toBe('no-store');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.json()).toEqual({
      error: 'temporarily_unavailable',
      error_description: expect.stringMatching(
        /^this address made more than 5 requests in 60 s; try again in \d+ s$/,
      ),
      reference: expect.any(String),
    });
  });
});

describe('rate limit off', () => {
  it('with RATE_LIMIT_MAX=0 counts nothing and refuses nothing', async () => {
    const t = await createTestApp({ rateLimitMax: 0 });
    try {
      const token = await t.tokenFor(['viewer']);
      for (let i = 0; i < 50; i += 1) {
        const answer = await t.call(token, { method: 'GET', url: '/api/v1/ingestions' });
        expect(answer.statusCode).toBe(200);
        expect(answer.headers['x-ratelimit-limit']).toBeUndefined();
      }
    } finally {
      await t.close();
    }
  });
});

describe('rate limit shared by instances on one database', () => {
  let store: Store;
  let second: Store;
  let dispose: () => Promise<void>;
  const clock = testClock();
  const instances: { app: FastifyInstance; services: Services }[] = [];

  beforeAll(async () => {
    let url: string;
    ({ store, dispose, url } = await createTestStore());
    // SQLite serves one process through one connection: both instances share it there.
    second = TEST_DIALECT === 'postgres' ? openStore(url) : store;
    for (const onStore of [store, second]) {
      const services = createServices(onStore, clock, {
        accessTokenTtlSeconds: 300,
        refreshTokenTtlSeconds: 1800,
        businessDate: undefined,
        rateLimitMax: LIMIT,
        rateLimitWindowMs: WINDOW_MS,
      });
      const app = await buildApp({ store: onStore, services, logger: false });
      await app.ready();
      instances.push({ app, services });
    }
  });
  afterAll(async () => {
    for (const { app } of instances) await app.close();
    if (second !== store) await second?.close();
    await dispose?.();
  });

  it('counts the requests a client sent through another instance once the counts are synced', async () => {
    const [a, b] = instances;
    if (a === undefined || b === undefined) throw new Error('two instances expected');
    const email = `limited-${Date.now()}@example.test`;
    await a.services.access.createUser({ email, roles: ['viewer'] }, { actor: { user: 'test-setup' } });
    const { answer: credential } = await a.services.access.createCredential(
      { ownerEmail: email },
      { actor: { user: 'test-setup' } },
    );
    const { access_token: token } = await a.services.tokens.clientCredentialsGrant(credential);
    const list = (instance: { app: FastifyInstance }) =>
      instance.app.inject({
        method: 'GET',
        url: '/api/v1/ingestions',
        headers: { authorization: `Bearer ${token}` },
      });
    for (let i = 0; i < 3; i += 1) expect((await list(a)).statusCode).toBe(200);
    await a.services.requestLimiter.sync();
    expect((await list(b)).statusCode).toBe(200);
    await b.services.requestLimiter.sync();
    // Instance b now knows of the three requests through a: one more is the fifth, then 429.
    expect((await list(b)).statusCode).toBe(200);
    expect((await list(b)).statusCode).toBe(429);
    // Instance a learns b's counts with its next sync of this key, which a new request starts.
    expect((await list(a)).statusCode).toBe(200);
    await b.services.requestLimiter.sync();
    await a.services.requestLimiter.sync();
    expect((await list(a)).statusCode).toBe(429);
  });

  it('adds concurrent syncs of the same keys from two instances without losing a count', async () => {
    const stores = [createRequestCountStore(store.db), createRequestCountStore(second.db)];
    const windowStartedMs = 3_000_000;
    const keys = ['k1', 'k2', 'k3'];
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        stores[i % 2]?.addRequestCounts(
          (i % 3 === 0 ? [...keys].reverse() : keys).map((keyHash) => ({
            keyHash,
            windowStartedMs,
            requests: 2,
          })),
        ),
      ),
    );
    const totals = await stores[0]?.addRequestCounts(
      keys.map((keyHash) => ({ keyHash, windowStartedMs, requests: 0 })),
    );
    expect([...(totals?.values() ?? [])]).toEqual(keys.map(() => ({ windowStartedMs, requests: 40 })));
    // A sync of an older window leaves the newer count alone; a newer window starts again.
    const stale = await stores[1]?.addRequestCounts([{ keyHash: 'k1', windowStartedMs: 0, requests: 7 }]);
    expect(stale?.get('k1')).toEqual({ windowStartedMs, requests: 40 });
    const next = await stores[1]?.addRequestCounts([
      { keyHash: 'k1', windowStartedMs: windowStartedMs + WINDOW_MS, requests: 1 },
    ]);
    expect(next?.get('k1')).toEqual({ windowStartedMs: windowStartedMs + WINDOW_MS, requests: 1 });
    expect(await stores[0]?.purgeRequestCounts(windowStartedMs + WINDOW_MS)).toBeGreaterThanOrEqual(2);
  });
});
