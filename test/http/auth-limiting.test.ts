import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices, type Services } from '../../src/composition/services.js';
import { buildApp } from '../../src/http/app.js';
import type { ManualClock } from '../../src/lib/clock.js';
import {
  AUTH_FAILURE_DELAY_BASE_MS,
  AUTH_FAILURE_DELAY_MAX_MS,
  AUTH_FAILURE_WINDOW_MS,
  AUTH_FAILURES_PER_ADDRESS_MAX,
  AUTH_FAILURES_UNSLOWED_MAX,
} from '../../src/modules/auth/failure-limiter.js';
import { CLIENT_FIELD_LENGTH_MAX, TokenService } from '../../src/modules/auth/token-service.js';
import { createAuthStore } from '../../src/storage/auth-store.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { form } from '../helpers/app.js';
import { testClock } from '../helpers/clock.js';
import { createTestStore } from '../helpers/store.js';

/** The address light-my-request gives the socket of an injected request. */
const PROXY_ADDRESS = '127.0.0.1';
const WRONG_SECRET = 'lfs_wrong-wrong-wrong-wrong';
const TOO_LONG_SECRET = 'x'.repeat(CLIENT_FIELD_LENGTH_MAX + 1);

/** One service instance: its app, its services, and the delays its limiter asked for. */
interface Instance {
  app: FastifyInstance;
  services: Services;
  waits: number[];
}

async function instanceOn(
  store: Store,
  clock: ManualClock,
  trustProxy: boolean | string[],
): Promise<Instance> {
  const waits: number[] = [];
  const services = createServices(store, clock, {
    accessTokenTtlSeconds: 300,
    refreshTokenTtlSeconds: 1800,
    businessDate: undefined,
    authFailureWait: async (ms) => {
      waits.push(ms);
    },
  });
  const app = await buildApp({ store, services, logger: false, trustProxy });
  await app.ready();
  return { app, services, waits };
}

let clientCounter = 0;

async function newClient(services: Services): Promise<{ clientId: string; clientSecret: string }> {
  clientCounter += 1;
  const email = `limited${clientCounter}-${Date.now()}@example.test`;
  await services.access.createUser({ email, roles: ['viewer'] }, { actor: { user: 'test-setup' } });
  const {
    answer: { clientId, clientSecret },
  } = await services.access.createCredential({ ownerEmail: email }, { actor: { user: 'test-setup' } });
  return { clientId, clientSecret };
}

function tokenRequest(
  instance: Instance,
  clientId: string,
  clientSecret: string,
  headers: Record<string, string> = {},
) {
  const body = form({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret });
  return instance.app.inject({
    method: 'POST',
    url: '/auth/token',
    payload: body.payload,
    headers: { ...body.headers, ...headers },
  });
}

/** The delays the limiter asks for after 0, 1, 2, ... failures of one client from one address. */
function expectedDelayMs(failuresBefore: number): number {
  const slowed = failuresBefore - AUTH_FAILURES_UNSLOWED_MAX;
  return slowed < 0 ? 0 : Math.min(AUTH_FAILURE_DELAY_BASE_MS * 2 ** slowed, AUTH_FAILURE_DELAY_MAX_MS);
}

describe('failed client authentication limit', () => {
  let store: Store;
  let dispose: () => Promise<void>;
  let url: string;
  const clock = testClock();
  let direct: Instance;
  let proxied: Instance;

  beforeAll(async () => {
    ({ store, dispose, url } = await createTestStore({ file: true }));
    direct = await instanceOn(store, clock, false);
    proxied = await instanceOn(store, clock, [PROXY_ADDRESS]);
  });
  afterAll(async () => {
    await direct?.app.close();
    await proxied?.app.close();
    await dispose?.();
  });

  it('12 wrong secrets then the correct one: slowed down, never locked out (regression)', async () => {
    const client = await newClient(direct.services);
    direct.waits.length = 0;
    for (let i = 0; i < 12; i += 1) {
      const wrong = await tokenRequest(direct, client.clientId, WRONG_SECRET);
      expect(wrong.statusCode).toBe(401);
      expect(wrong.json().error_description).toBe('client authentication failed');
    }
    const right = await tokenRequest(direct, client.clientId, client.clientSecret);
    expect(right.statusCode).toBe(200);
    expect(right.json().token_type).toBe('Bearer');
    const expected = Array.from({ length: 13 }, (_, failures) => expectedDelayMs(failures)).filter(
      (ms) => ms > 0,
    );
    expect(direct.waits).toEqual(expected);
    expect(Math.max(...direct.waits)).toBe(AUTH_FAILURE_DELAY_MAX_MS);
    // The success forgot the failures: the next request is not held.
    direct.waits.length = 0;
    expect((await tokenRequest(direct, client.clientId, client.clientSecret)).statusCode).toBe(200);
    expect(direct.waits).toEqual([]);
  });

  it('counts clients behind a trusted proxy apart by the address the proxy names', async () => {
    const client = await newClient(proxied.services);
    proxied.waits.length = 0;
    for (let i = 0; i < AUTH_FAILURES_UNSLOWED_MAX + 2; i += 1) {
      await tokenRequest(proxied, client.clientId, WRONG_SECRET, { 'x-forwarded-for': '203.0.113.7' });
    }
    expect(proxied.waits).toEqual([expectedDelayMs(AUTH_FAILURES_UNSLOWED_MAX), expectedDelayMs(6)]);
    proxied.waits.length = 0;
    const elsewhere = await tokenRequest(proxied, client.clientId, client.clientSecret, {
      'x-forwarded-for': '198.51.100.9',
    });
    expect(elsewhere.statusCode).toBe(200);
    expect(proxied.waits).toEqual([]);
    const slowedHere = await tokenRequest(proxied, client.clientId, client.clientSecret, {
      'x-forwarded-for': '203.0.113.7',
    });
    expect(slowedHere.statusCode).toBe(200);
    expect(proxied.waits).toEqual([expectedDelayMs(AUTH_FAILURES_UNSLOWED_MAX + 2)]);
  });

  it('ignores X-Forwarded-For without TRUST_PROXY: the socket address is counted', async () => {
    const client = await newClient(direct.services);
    direct.waits.length = 0;
    for (let i = 0; i < AUTH_FAILURES_UNSLOWED_MAX + 1; i += 1) {
      await tokenRequest(direct, client.clientId, WRONG_SECRET, { 'x-forwarded-for': `203.0.113.${i}` });
    }
    expect(direct.waits).toEqual([expectedDelayMs(AUTH_FAILURES_UNSLOWED_MAX)]);
  });

  it('shares the counts between instances on one database', async () => {
    const second = openStore(url);
    const other = await instanceOn(second, clock, false);
    try {
      const client = await newClient(direct.services);
      direct.waits.length = 0;
      for (let i = 0; i < AUTH_FAILURES_UNSLOWED_MAX; i += 1) {
        const instance = i % 2 === 0 ? direct : other;
        expect((await tokenRequest(instance, client.clientId, WRONG_SECRET)).statusCode).toBe(401);
      }
      expect(direct.waits).toEqual([]);
      expect(other.waits).toEqual([]);
      expect((await tokenRequest(other, client.clientId, client.clientSecret)).statusCode).toBe(200);
      expect(other.waits).toEqual([expectedDelayMs(AUTH_FAILURES_UNSLOWED_MAX)]);
    } finally {
      await other.app.close();
      await second.close();
    }
  });

  it('refuses a flood from one address with Retry-After before hashing, and only that address', async () => {
    const known = await newClient(proxied.services);
    const fresh = await newClient(proxied.services);
    const flooder = { 'x-forwarded-for': '192.0.2.66' };
    // The known client got a token from the flooding address before: its secret was verified
    // moments ago, so checking it again costs no hashing and it is not refused.
    expect((await tokenRequest(proxied, known.clientId, known.clientSecret, flooder)).statusCode).toBe(200);
    for (let i = 0; i < AUTH_FAILURES_PER_ADDRESS_MAX; i += 1) {
      const answer = await tokenRequest(proxied, `lfc_flood${i}`, TOO_LONG_SECRET, flooder);
      expect(answer.statusCode).toBe(401);
      expect(answer.headers['retry-after']).toBeUndefined();
    }
    const refused = await tokenRequest(proxied, fresh.clientId, fresh.clientSecret, flooder);
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({
      error: 'invalid_client',
      error_description: expect.stringContaining('too many failed'),
      reference: expect.any(String),
    });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(AUTH_FAILURE_WINDOW_MS / 1000);
    expect((await tokenRequest(proxied, known.clientId, known.clientSecret, flooder)).statusCode).toBe(200);
    const elsewhere = { 'x-forwarded-for': '192.0.2.67' };
    expect((await tokenRequest(proxied, fresh.clientId, fresh.clientSecret, elsewhere)).statusCode).toBe(200);
    clock.advance(retryAfter * 1000);
    expect((await tokenRequest(proxied, fresh.clientId, fresh.clientSecret, flooder)).statusCode).toBe(200);
  });

  it('gives a token to every one of many clients starting at once with one credential from one address', async () => {
    const client = await newClient(proxied.services);
    const gateway = { 'x-forwarded-for': '192.0.2.80' };
    // More at once than the flood limit: each waits for the one hash of their common secret
    // instead of being counted as an attempt of its own, so none is refused as a flood.
    const answers = await Promise.all(
      Array.from({ length: 2 * AUTH_FAILURES_PER_ADDRESS_MAX }, () =>
        tokenRequest(proxied, client.clientId, client.clientSecret, gateway),
      ),
    );
    expect(answers.map((answer) => answer.statusCode)).toEqual(
      new Array(2 * AUTH_FAILURES_PER_ADDRESS_MAX).fill(200),
    );
  });

  it('writes the use of a credential once for many clients authenticating with it at once', async () => {
    const client = await newClient(direct.services);
    let marks = 0;
    const authStore = createAuthStore(store);
    const tokens = new TokenService(
      {
        ...authStore,
        markCredentialUsed: (clientId, at) => {
          marks += 1;
          return authStore.markCredentialUsed(clientId, at);
        },
      },
      clock,
      { accessTokenTtlSeconds: 300, refreshTokenTtlSeconds: 1800 },
    );
    const granted = await Promise.all(
      Array.from({ length: 32 }, () =>
        tokens.clientCredentialsGrant({ ...client, remoteAddress: '192.0.2.81' }),
      ),
    );
    expect(granted).toHaveLength(32);
    expect(marks).toBe(1);
  });

  it('forgets the counters of ended windows when tokens are purged', async () => {
    clock.advance(AUTH_FAILURE_WINDOW_MS + 1);
    await direct.services.tokens.purgeExpired();
    const left = await store.db.selectFrom('auth_failures').select('key_hash').execute();
    expect(left).toEqual([]);
  });
});
