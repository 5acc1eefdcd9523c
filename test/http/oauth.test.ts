import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTH_FAILURES_PER_ADDRESS_MAX } from '../../src/modules/auth/failure-limiter.js';
import {
  CLIENT_FIELD_LENGTH_MAX,
  CREDENTIAL_USE_PRECISION_MS,
  REFRESH_REUSE_GRACE_SECONDS_DEFAULT,
} from '../../src/modules/auth/token-service.js';
import { createTestApp, form, type TestApp } from '../helpers/app.js';

/** Contract 2.1 (token endpoint) and 2.2 (calling the API), rule by rule. */
describe('OAuth 2.0 token endpoint and bearer access', () => {
  let t: TestApp;
  let client: { clientId: string; clientSecret: string; ownerEmail: string };

  beforeAll(async () => {
    t = await createTestApp({ accessTokenTtlSeconds: 60, refreshTokenTtlSeconds: 600 });
    client = await t.credentialFor(['api-client']);
  });
  afterAll(async () => t?.close());

  const token = (fields: Record<string, string>, headers: Record<string, string> = {}) => {
    const body = form(fields);
    return t.app.inject({
      method: 'POST',
      url: '/auth/token',
      payload: body.payload,
      headers: { ...body.headers, ...headers },
    });
  };
  const basic = (id: string, secret: string) =>
    `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
  const grant = () =>
    token({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
  const ingestionsWith = (accessToken: string) =>
    t.call(accessToken, { method: 'GET', url: '/api/v1/credentials' });

  it('issues tokens for client credentials sent as form fields, with lifetimes from the settings', async () => {
    const response = await grant();
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers.pragma).toBe('no-cache');
    const body = response.json();
    expect(body).toEqual({
      access_token: expect.stringMatching(/^lfa_/),
      token_type: 'Bearer',
      expires_in: 60,
      refresh_token: expect.stringMatching(/^lfr_/),
      refresh_expires_in: 600,
    });
  });

  it("writes a credential's last use at most once a minute, and counts nothing for a secret verified moments ago", async () => {
    const own = await t.credentialFor(['api-client']);
    const ownGrant = () =>
      token({ grant_type: 'client_credentials', client_id: own.clientId, client_secret: own.clientSecret });
    const lastUsed = async () =>
      (
        await t.store.db
          .selectFrom('credentials')
          .select('last_used_at')
          .where('client_id', '=', own.clientId)
          .executeTakeFirstOrThrow()
      ).last_used_at;
    const failureRows = async () =>
      (await t.store.db.selectFrom('auth_failures').selectAll().execute()).length;
    expect((await ownGrant()).statusCode).toBe(200);
    const first = await lastUsed();
    expect(first).not.toBeNull();
    const failuresBefore = await failureRows();
    t.clock.advance(CREDENTIAL_USE_PRECISION_MS - 1);
    expect((await ownGrant()).statusCode).toBe(200);
    expect(await lastUsed()).toBe(first);
    expect(await failureRows()).toBe(failuresBefore);
    t.clock.advance(1);
    expect((await ownGrant()).statusCode).toBe(200);
    expect(await lastUsed()).toBe(t.clock.now().toISOString());
  });

  it('issues tokens for client credentials sent with HTTP Basic', async () => {
    const response = await token(
      { grant_type: 'client_credentials' },
      { authorization: basic(client.clientId, client.clientSecret) },
    );
    expect(response.statusCode).toBe(200);
    expect(response.json().token_type).toBe('Bearer');
  });

  it('refuses Basic and a form secret together with invalid_request', async () => {
    const response = await token(
      { grant_type: 'client_credentials', client_secret: client.clientSecret },
      { authorization: basic(client.clientId, client.clientSecret) },
    );
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe('invalid_request');
  });

  it.each([
    ['an unknown client', () => ({ client_id: 'lfc_nobody', client_secret: 'x' })],
    ['a wrong secret', () => ({ client_id: client.clientId, client_secret: 'wrong' })],
    ['no client authentication', () => ({})],
  ])('answers 401 invalid_client for %s', async (_name, fields) => {
    const response = await token({ grant_type: 'client_credentials', ...fields() });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({
      error: 'invalid_client',
      error_description: expect.any(String),
      reference: expect.any(String),
    });
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it('adds WWW-Authenticate Basic to invalid_client when Basic was used', async () => {
    const response = await token(
      { grant_type: 'client_credentials' },
      { authorization: basic(client.clientId, 'wrong') },
    );
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Basic realm="ledgerflow"');
  });

  it.each([
    [{ grant_type: 'password' }, 'unsupported_grant_type'],
    [{ grant_type: 'authorization_code' }, 'unsupported_grant_type'],
    [{}, 'invalid_request'],
  ])('answers 400 for grant %j', async (fields, error) => {
    const response = await token({
      ...fields,
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe(error);
  });

  it('answers invalid_request for a repeated field and for a body that is not a form', async () => {
    const repeated = await t.app.inject({
      method: 'POST',
      url: '/auth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `grant_type=client_credentials&grant_type=client_credentials&client_id=${client.clientId}&client_secret=${client.clientSecret}`,
    });
    expect(repeated.statusCode).toBe(400);
    expect(repeated.json().error).toBe('invalid_request');
    const json = await t.app.inject({
      method: 'POST',
      url: '/auth/token',
      payload: { grant_type: 'client_credentials' },
    });
    expect(json.statusCode).toBe(400);
    expect(json.json().error).toBe('invalid_request');
    const huge = await token({ grant_type: 'client_credentials', client_id: 'x'.repeat(20_000) });
    expect(huge.statusCode).toBe(413);
    expect(huge.json().error).toBe('invalid_request');
  });

  it('refreshes with rotation: a new refresh token each time, the used one spent', async () => {
    const first = (await grant()).json();
    const refreshed = await token({
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(refreshed.statusCode).toBe(200);
    const second = refreshed.json();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect((await ingestionsWith(second.access_token)).statusCode).not.toBe(401);
  });

  it('treats a reused refresh token as theft and revokes the whole family (RFC 9700)', async () => {
    const first = (await grant()).json();
    const refresh = (refreshToken: string) =>
      token({
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: client.clientId,
        client_secret: client.clientSecret,
      });
    const second = (await refresh(first.refresh_token)).json();
    // A repeat within the grace window gets the same answer (refresh-reuse-grace.test.ts).
    t.clock.advance(REFRESH_REUSE_GRACE_SECONDS_DEFAULT * 1000);
    const reuse = await refresh(first.refresh_token);
    expect(reuse.statusCode).toBe(400);
    expect(reuse.json().error).toBe('invalid_grant');
    // Everything descended from the same client-credentials grant is now dead.
    expect((await refresh(second.refresh_token)).json().error).toBe('invalid_grant');
    expect((await ingestionsWith(second.access_token)).statusCode).toBe(401);
    expect((await ingestionsWith(first.access_token)).statusCode).toBe(401);
    // Another grant of the same client is not affected.
    expect((await grant()).statusCode).toBe(200);
  });

  it("refuses another client's refresh token with invalid_grant", async () => {
    const other = await t.credentialFor(['api-client']);
    const first = (await grant()).json();
    const response = await token({
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: other.clientId,
      client_secret: other.clientSecret,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe('invalid_grant');
  });

  it('requires client authentication on refresh, as the seed says', async () => {
    const first = (await grant()).json();
    const response = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(response.statusCode).toBe(401);
    expect(response.json().error).toBe('invalid_client');
  });

  it.each(['garbage', 'lfr_unknown', '', 'lfa_looks-like-access'])(
    'refuses refresh token %j',
    async (refreshToken) => {
      const response = await token({
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: client.clientId,
        client_secret: client.clientSecret,
      });
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toMatch(/invalid_grant|invalid_request/);
    },
  );

  it('answers 403 unauthorized_client when the owner is disabled or has no role', async () => {
    const disabled = await t.credentialFor(['api-client']);
    await t.services.access.updateUser(
      disabled.ownerEmail,
      { disabled: true },
      { actor: { user: 'test-setup' } },
    );
    const response = await token({
      grant_type: 'client_credentials',
      client_id: disabled.clientId,
      client_secret: disabled.clientSecret,
    });
    expect(response.statusCode).toBe(403);
    expect(response.json().error).toBe('unauthorized_client');
    const roleless = await t.credentialFor([]);
    const second = await token({
      grant_type: 'client_credentials',
      client_id: roleless.clientId,
      client_secret: roleless.clientSecret,
    });
    expect(second.statusCode).toBe(403);
    expect(second.json().error).toBe('unauthorized_client');
  });

  it('rejects a revoked credential at the token endpoint and its live token at once', async () => {
    const victim = await t.credentialFor(['api-client']);
    const live = await t.services.tokens.clientCredentialsGrant(victim);
    const admin = await t.tokenFor(['admin']);
    expect(
      (await t.call(live.access_token, { method: 'GET', url: '/api/v1/configuration/bulk' })).statusCode,
    ).not.toBe(401);
    const revoked = await t.call(admin, { method: 'DELETE', url: `/api/v1/credentials/${victim.clientId}` });
    expect(revoked.statusCode).toBe(204);
    const after = await t.call(live.access_token, { method: 'GET', url: '/api/v1/configuration/bulk' });
    expect(after.statusCode).toBe(401);
    expect(after.headers['www-authenticate']).toContain('error="invalid_token"');
    const again = await token({
      grant_type: 'client_credentials',
      client_id: victim.clientId,
      client_secret: victim.clientSecret,
    });
    expect(again.statusCode).toBe(401);
    expect(again.json().error).toBe('invalid_client');
  });

  it('stops a live token at once when its owner is disabled, and applies role changes on the next request', async () => {
    const user = await t.credentialFor(['admin']);
    const live = await t.services.tokens.clientCredentialsGrant(user);
    expect((await t.call(live.access_token, { method: 'GET', url: '/api/v1/users' })).statusCode).toBe(200);
    await t.services.access.updateUser(
      user.ownerEmail,
      { roles: ['viewer'] },
      { actor: { user: 'test-setup' } },
    );
    const demoted = await t.call(live.access_token, { method: 'GET', url: '/api/v1/users' });
    expect(demoted.statusCode).toBe(403);
    await t.services.access.updateUser(
      user.ownerEmail,
      { disabled: true },
      { actor: { user: 'test-setup' } },
    );
    expect((await t.call(live.access_token, { method: 'GET', url: '/api/v1/users' })).statusCode).toBe(401);
  });

  it('rejects an expired credential with invalid_client', async () => {
    const short = await t.credentialFor(['api-client']);
    const admin = await t.tokenFor(['admin']);
    const created = await t.call(admin, {
      method: 'POST',
      url: '/api/v1/credentials',
      payload: { ownerEmail: short.ownerEmail, expiresInDays: 1 },
    });
    expect(created.statusCode).toBe(201);
    const { clientId, clientSecret } = created.json();
    expect(
      (await token({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }))
        .statusCode,
    ).toBe(200);
    t.clock.advance(25 * 3600 * 1000);
    try {
      const response = await token({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: clientSecret,
      });
      expect(response.statusCode).toBe(401);
      expect(response.json().error).toBe('invalid_client');
    } finally {
      t.clock.advance(-25 * 3600 * 1000);
    }
  });

  it('serves RFC 8414 metadata', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      token_endpoint: expect.stringMatching(/\/auth\/token$/),
      grant_types_supported: ['client_credentials', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    });
  });

  it('revokes an access token, and a refresh token with its family (RFC 7009)', async () => {
    const issued = (await grant()).json();
    const revoke = (value: string) =>
      t.app.inject({
        method: 'POST',
        url: '/auth/revoke',
        ...form({ token: value, client_id: client.clientId, client_secret: client.clientSecret }),
      });
    expect((await revoke(issued.access_token)).statusCode).toBe(200);
    expect((await ingestionsWith(issued.access_token)).statusCode).toBe(401);
    const family = (await grant()).json();
    expect((await revoke(family.refresh_token)).statusCode).toBe(200);
    expect((await ingestionsWith(family.access_token)).statusCode).toBe(401);
    expect((await revoke('lfa_unknown')).statusCode).toBe(200);
  });
});

describe('token lifetimes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ accessTokenTtlSeconds: 2, refreshTokenTtlSeconds: 5 });
  });
  afterAll(async () => t?.close());

  it('expires access tokens and refresh tokens after the configured lifetimes', async () => {
    const client = await t.credentialFor(['admin']);
    const issued = await t.services.tokens.clientCredentialsGrant(client);
    expect(issued.expires_in).toBe(2);
    expect(issued.refresh_expires_in).toBe(5);
    const users = () => t.call(issued.access_token, { method: 'GET', url: '/api/v1/users' });
    expect((await users()).statusCode).toBe(200);
    t.clock.advance(2_001);
    const expired = await users();
    expect(expired.statusCode).toBe(401);
    expect(expired.json().detail).toContain('expired');
    t.clock.advance(3_000);
    const refresh = await t.app.inject({
      method: 'POST',
      url: '/auth/token',
      ...form({
        grant_type: 'refresh_token',
        refresh_token: issued.refresh_token,
        ...{ client_id: client.clientId, client_secret: client.clientSecret },
      }),
    });
    expect(refresh.statusCode).toBe(400);
    expect(refresh.json()).toEqual({
      error: 'invalid_grant',
      error_description: 'the refresh token has expired',
      reference: expect.any(String),
    });
  });

  it('purges tokens that expired more than a day ago', async () => {
    const client = await t.credentialFor(['viewer']);
    await t.services.tokens.clientCredentialsGrant(client);
    t.clock.advance(5_000 + 24 * 3600 * 1000 + 1);
    expect(await t.services.tokens.purgeExpired()).toBeGreaterThanOrEqual(2);
    expect(await t.services.tokens.purgeExpired()).toBe(0);
  });
});

describe('bootstrap credential', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it('is made with its owner when missing, kept when valid, and renewed when revoked or expired', async () => {
    const { access, tokens } = t.services;
    await access.ensureCredential('lfc_boot', 'lfs_boot-secret', 'boot@example.test');
    expect(
      (await tokens.clientCredentialsGrant({ clientId: 'lfc_boot', clientSecret: 'lfs_boot-secret' }))
        .token_type,
    ).toBe('Bearer');
    await access.revokeCredential('lfc_boot', { actor: { user: 'test-setup' } });
    await access.ensureCredential('lfc_boot', 'lfs_boot-secret', 'boot@example.test');
    expect(
      (await tokens.clientCredentialsGrant({ clientId: 'lfc_boot', clientSecret: 'lfs_boot-secret' }))
        .token_type,
    ).toBe('Bearer');
    t.clock.advance(3651 * 24 * 3600 * 1000);
    await expect(
      tokens.clientCredentialsGrant({ clientId: 'lfc_boot', clientSecret: 'lfs_boot-secret' }),
    ).rejects.toMatchObject({ error: 'invalid_client' });
    await access.ensureCredential('lfc_boot', 'lfs_boot-secret', 'boot@example.test');
    expect(
      (await tokens.clientCredentialsGrant({ clientId: 'lfc_boot', clientSecret: 'lfs_boot-secret' }))
        .token_type,
    ).toBe('Bearer');
  });
});

describe('failed client authentications in the server log', () => {
  let t: TestApp;
  const lines: Record<string, unknown>[] = [];
  beforeAll(async () => {
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n')) {
          if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
        }
        done();
      },
    });
    t = await createTestApp({ authFailureWait: async () => {} }, { logger: pino({ level: 'info' }, stream) });
  });
  afterAll(async () => t?.close());

  const attempt = (clientId: string, clientSecret: string) =>
    t.app.inject({
      method: 'POST',
      url: '/auth/token',
      ...form({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
    });
  /** The failure line of the request whose answer carried this reference. */
  const failureLine = (reference: unknown) =>
    lines.find(
      (line) => line.reference === reference && line.msg?.toString().startsWith('client authentication'),
    );

  it('names the client id and the reason on one line with the reference of the answer, never the secret', async () => {
    const client = await t.credentialFor(['viewer']);
    const revoked = await t.credentialFor(['viewer']);
    await t.services.access.revokeCredential(revoked.clientId, { actor: { user: 'test-setup' } });
    const ownerless = await t.credentialFor(['viewer']);
    await t.services.access.updateUser(
      ownerless.ownerEmail,
      { disabled: true },
      { actor: { user: 'test-setup' } },
    );
    const cases = [
      { clientId: 'lfc_nobody', secret: 'lfs_whatever-secret-value', reason: 'unknown-client' },
      { clientId: client.clientId, secret: 'lfs_not-the-right-secret', reason: 'wrong-secret' },
      { clientId: revoked.clientId, secret: revoked.clientSecret, reason: 'revoked' },
      { clientId: ownerless.clientId, secret: ownerless.clientSecret, reason: 'owner-disabled' },
    ];
    for (const { clientId, secret, reason } of cases) {
      const answer = await attempt(clientId, secret);
      expect(answer.statusCode, reason).toBeGreaterThanOrEqual(400);
      const { reference } = answer.json();
      expect(reference).toMatch(/^[0-9a-f-]{36}$/);
      expect(failureLine(reference), reason).toMatchObject({
        level: 40,
        clientId,
        reason,
        msg: `client authentication failed: ${reason}`,
      });
    }
    const logged = JSON.stringify(lines);
    for (const { secret } of cases) expect(logged).not.toContain(secret);
  });

  it('logs an expired credential and the failure limit by their reasons', async () => {
    const short = await t.credentialFor(['viewer']);
    const { answer: expiring } = await t.services.access.createCredential(
      {
        ownerEmail: short.ownerEmail,
        expiresInDays: 1,
      },
      { actor: { user: 'test-setup' } },
    );
    t.clock.advance(25 * 3600 * 1000);
    const expired = await attempt(expiring.clientId, expiring.clientSecret);
    expect(failureLine(expired.json().reference)).toMatchObject({
      clientId: expiring.clientId,
      reason: 'expired',
    });
    t.clock.advance(-25 * 3600 * 1000);

    const limited = await t.credentialFor(['viewer']);
    // A flood from one address (secrets too long to be hashed, so the test stays quick).
    const tooLong = 'x'.repeat(CLIENT_FIELD_LENGTH_MAX + 1);
    for (let i = 0; i < AUTH_FAILURES_PER_ADDRESS_MAX; i += 1) await attempt(`lfc_flood${i}`, tooLong);
    const blocked = await attempt(limited.clientId, limited.clientSecret);
    expect(failureLine(blocked.json().reference)).toMatchObject({
      clientId: limited.clientId,
      reason: 'limited',
    });
  });

  it('puts the reference of the log into OAuth answers of malformed requests too', async () => {
    const answer = await t.app.inject({
      method: 'POST',
      url: '/auth/token',
      headers: { 'content-type': 'application/xml' },
      payload: '<grant_type>client_credentials</grant_type>',
    });
    expect(answer.statusCode).toBe(415);
    expect(answer.json()).toEqual({
      error: 'invalid_request',
      error_description: expect.stringContaining('application/x-www-form-urlencoded'),
      reference: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(lines.some((line) => line.reference === answer.json().reference)).toBe(true);
  });
});
