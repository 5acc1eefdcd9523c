import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices, type Services } from '../../src/composition/services.js';
import { buildApp } from '../../src/http/app.js';
import type { ManualClock } from '../../src/lib/clock.js';
import { sha256Hex } from '../../src/lib/ids.js';
import { openSealed, seal } from '../../src/modules/auth/sealed-answer.js';
import type { AuthStore } from '../../src/modules/auth/store.js';
import { REFRESH_REUSE_GRACE_SECONDS_DEFAULT, TokenService } from '../../src/modules/auth/token-service.js';
import { createAuthStore } from '../../src/storage/auth-store.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { form } from '../helpers/app.js';
import { barrier } from '../helpers/barrier.js';
import { testClock } from '../helpers/clock.js';
import { createTestStore, TEST_DIALECT } from '../helpers/store.js';

/** One service instance on the shared database: its app and its services. */
interface Instance {
  app: FastifyInstance;
  services: Services;
}

const LIFETIMES = { accessTokenTtlSeconds: 300, refreshTokenTtlSeconds: 1800 };

async function instanceOn(store: Store, clock: ManualClock, graceSeconds?: number): Promise<Instance> {
  const services = createServices(store, clock, {
    ...LIFETIMES,
    businessDate: undefined,
    ...(graceSeconds === undefined ? {} : { refreshReuseGraceSeconds: graceSeconds }),
  });
  const app = await buildApp({ store, services, logger: false });
  await app.ready();
  return { app, services };
}

let clientCounter = 0;

async function newClient(services: Services): Promise<{ clientId: string; clientSecret: string }> {
  clientCounter += 1;
  const email = `refresher${clientCounter}-${Date.now()}@example.test`;
  await services.access.createUser({ email, roles: ['api-client'] }, { actor: { user: 'test-setup' } });
  const {
    answer: { clientId, clientSecret },
  } = await services.access.createCredential({ ownerEmail: email }, { actor: { user: 'test-setup' } });
  return { clientId, clientSecret };
}

function refresh(
  instance: Instance,
  client: { clientId: string; clientSecret: string },
  refreshToken: string,
) {
  const body = form({
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: client.clientId,
    client_secret: client.clientSecret,
  });
  return instance.app.inject({ method: 'POST', url: '/auth/token', ...body });
}

function ingestionsWith(instance: Instance, accessToken: string) {
  return instance.app.inject({
    method: 'GET',
    url: '/api/v1/ingestions',
    headers: { authorization: `Bearer ${accessToken}` },
  });
}

describe('finding: two concurrent refreshes of one refresh token get one answer, not a revocation', () => {
  let store: Store;
  let second: Store;
  let dispose: () => Promise<void>;
  let url: string;
  const clock = testClock();
  let a: Instance;
  let b: Instance;

  beforeAll(async () => {
    ({ store, dispose, url } = await createTestStore());
    // SQLite serves one process, through one connection: both instances share it there.
    second = TEST_DIALECT === 'postgres' ? openStore(url) : store;
    a = await instanceOn(store, clock);
    b = await instanceOn(second, clock);
  });
  afterAll(async () => {
    await a?.app.close();
    await b?.app.close();
    if (second !== store) await second?.close();
    await dispose?.();
  });

  it('races two instances past the read of the unused token: one issues, both answer the same', async () => {
    const client = await newClient(a.services);
    const first = await a.services.tokens.clientCredentialsGrant(client);
    // Each instance reads the token, then waits until the other has read it too, so both saw it
    // unused before either spends it: exactly the race of two instances or a quick retry.
    const bothRead = barrier(2);
    const racing = (base: AuthStore): AuthStore => ({
      ...base,
      async findToken(hash) {
        const row = await base.findToken(hash);
        await bothRead();
        return row;
      },
    });
    const serviceA = new TokenService(racing(createAuthStore(store)), clock, LIFETIMES);
    const serviceB = new TokenService(racing(createAuthStore(second)), clock, LIFETIMES);
    const [fromA, fromB] = await Promise.all([
      serviceA.refreshGrant(client, first.refresh_token),
      serviceB.refreshGrant(client, first.refresh_token),
    ]);
    expect(fromB).toEqual(fromA);
    expect(fromA.refresh_token).not.toBe(first.refresh_token);
    // Exactly one refresh issued tokens: the family holds the first pair and one more.
    const family = await store.db
      .selectFrom('oauth_tokens')
      .select(['kind', 'family_id'])
      .where('client_id', '=', client.clientId)
      .execute();
    expect(family.map((row) => row.kind).sort()).toEqual(['access', 'access', 'refresh', 'refresh']);
    expect((await ingestionsWith(a, fromA.access_token)).statusCode).toBe(200);
    expect((await refresh(b, client, fromA.refresh_token)).statusCode).toBe(200);
  });

  it('answers two concurrent HTTP refreshes through two instances with one 200 body twice', async () => {
    const client = await newClient(a.services);
    const first = await a.services.tokens.clientCredentialsGrant(client);
    const answers = await Promise.all([
      refresh(a, client, first.refresh_token),
      refresh(b, client, first.refresh_token),
    ]);
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200]);
    expect(answers[1]?.json()).toEqual(answers[0]?.json());
    const renewed = answers[0]?.json() as { access_token: string; refresh_token: string };
    expect((await ingestionsWith(b, renewed.access_token)).statusCode).toBe(200);
    expect((await refresh(a, client, renewed.refresh_token)).statusCode).toBe(200);
  });

  it('gives a retry within the grace window the same answer, sealed in the store, never in clear', async () => {
    const client = await newClient(a.services);
    const first = await a.services.tokens.clientCredentialsGrant(client);
    const answer = await refresh(a, client, first.refresh_token);
    clock.advance(REFRESH_REUSE_GRACE_SECONDS_DEFAULT * 1000 - 1);
    const retry = await refresh(b, client, first.refresh_token);
    expect(retry.statusCode).toBe(200);
    expect(retry.body).toBe(answer.body);
    expect(retry.headers['cache-control']).toBe('no-store');
    const row = await store.db
      .selectFrom('oauth_tokens')
      .select('answer_sealed')
      .where('token_hash', '=', sha256Hex(first.refresh_token))
      .executeTakeFirstOrThrow();
    const renewed = answer.json() as { access_token: string; refresh_token: string };
    expect(row.answer_sealed).toEqual(expect.stringMatching(/^v1\./));
    expect(row.answer_sealed).not.toContain(renewed.access_token);
    expect(row.answer_sealed).not.toContain(renewed.refresh_token);
    expect(openSealed(first.refresh_token, row.answer_sealed ?? '')).toBe(answer.body);
    expect(openSealed(renewed.refresh_token, row.answer_sealed ?? '')).toBeUndefined();
  });

  it('treats a repeat after the grace window as reuse and revokes the family (RFC 9700)', async () => {
    const client = await newClient(a.services);
    const first = await a.services.tokens.clientCredentialsGrant(client);
    const renewed = (await refresh(a, client, first.refresh_token)).json() as { access_token: string };
    clock.advance(REFRESH_REUSE_GRACE_SECONDS_DEFAULT * 1000);
    const reuse = await refresh(b, client, first.refresh_token);
    expect(reuse.statusCode).toBe(400);
    expect(reuse.json()).toMatchObject({
      error: 'invalid_grant',
      error_description: expect.stringContaining('used before'),
    });
    expect((await ingestionsWith(a, renewed.access_token)).statusCode).toBe(401);
  });

  it('treats a repeat as reuse once the refresh token of the answer was used', async () => {
    const client = await newClient(a.services);
    const first = await a.services.tokens.clientCredentialsGrant(client);
    const renewed = (await refresh(a, client, first.refresh_token)).json() as { refresh_token: string };
    const next = (await refresh(a, client, renewed.refresh_token)).json() as { access_token: string };
    const reuse = await refresh(b, client, first.refresh_token);
    expect(reuse.json().error).toBe('invalid_grant');
    expect((await ingestionsWith(a, next.access_token)).statusCode).toBe(401);
  });

  it('refuses another client the repeat of a refresh token it does not own', async () => {
    const client = await newClient(a.services);
    const other = await newClient(a.services);
    const first = await a.services.tokens.clientCredentialsGrant(client);
    expect((await refresh(a, client, first.refresh_token)).statusCode).toBe(200);
    const stolen = await refresh(b, other, first.refresh_token);
    expect(stolen.statusCode).toBe(400);
    expect(stolen.json().error_description).toBe('the refresh token was issued to another client');
  });

  it('with REFRESH_REUSE_GRACE_SECONDS=0 treats every repeat as reuse and seals nothing', async () => {
    const strict = await instanceOn(store, clock, 0);
    try {
      const client = await newClient(strict.services);
      const first = await strict.services.tokens.clientCredentialsGrant(client);
      expect((await refresh(strict, client, first.refresh_token)).statusCode).toBe(200);
      const row = await store.db
        .selectFrom('oauth_tokens')
        .select('answer_sealed')
        .where('token_hash', '=', sha256Hex(first.refresh_token))
        .executeTakeFirstOrThrow();
      expect(row.answer_sealed).toBeNull();
      expect((await refresh(strict, client, first.refresh_token)).json().error).toBe('invalid_grant');
    } finally {
      await strict.app.close();
    }
  });

  it('forgets sealed answers whose grace window has passed when tokens are purged', async () => {
    const client = await newClient(a.services);
    const first = await a.services.tokens.clientCredentialsGrant(client);
    expect((await refresh(a, client, first.refresh_token)).statusCode).toBe(200);
    clock.advance(REFRESH_REUSE_GRACE_SECONDS_DEFAULT * 1000 + 1);
    await a.services.tokens.purgeExpired();
    const sealed = await store.db
      .selectFrom('oauth_tokens')
      .select('token_hash')
      .where('answer_sealed', 'is not', null)
      .execute();
    expect(sealed).toEqual([]);
  });
});

describe('sealed answers', () => {
  it('open only with the token they were sealed under, and not once altered', () => {
    const token = 'lfr_one';
    const sealed = seal(token, '{"access_token":"lfa_x"}');
    expect(openSealed(token, sealed)).toBe('{"access_token":"lfa_x"}');
    expect(openSealed('lfr_two', sealed)).toBeUndefined();
    const [version, nonce, ciphertext, tag] = sealed.split('.');
    const flipped = Buffer.from(ciphertext ?? '', 'base64url');
    flipped[0] = (flipped[0] ?? 0) ^ 1;
    expect(openSealed(token, [version, nonce, flipped.toString('base64url'), tag].join('.'))).toBeUndefined();
    expect(openSealed(token, 'v2.a.b.c')).toBeUndefined();
    expect(openSealed(token, 'not sealed')).toBeUndefined();
  });
});
