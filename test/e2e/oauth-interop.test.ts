import { readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/storage/store.js';
import { type ServerProcess, startServer } from '../helpers/server.js';
import { createTestDatabaseUrl, dropTestDatabase, TEST_DIALECT } from '../helpers/store.js';

const CLIENT_ID = 'lfc_interop';
const CLIENT_SECRET = 'lfs_interop-secret-0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * The running server, driven by an independent, maintained OAuth 2.0 client library
 * (oauth4webapi), with both client authentication methods and a refresh; then the store and
 * the log of the run are searched for every secret and token that crossed the wire.
 */
describe('OAuth 2.0 interoperability and secrecy (running server)', () => {
  let server: ServerProcess;
  let databaseUrl: string;
  const seen: string[] = [CLIENT_SECRET];

  beforeAll(async () => {
    databaseUrl = await createTestDatabaseUrl({ file: true });
    server = await startServer({
      DATABASE_URL: databaseUrl,
      BOOTSTRAP_CLIENT_ID: CLIENT_ID,
      BOOTSTRAP_CLIENT_SECRET: CLIENT_SECRET,
      ADMIN_PASSWORD: 'correct-horse-battery-staple',
      LOG_LEVEL: 'trace',
    });
  });
  afterAll(async () => {
    await server?.stop();
    await dropTestDatabase(databaseUrl);
  });

  async function discover(): Promise<oauth.AuthorizationServer> {
    const issuer = new URL(server.url);
    const response = await oauth.discoveryRequest(issuer, {
      algorithm: 'oauth2',
      [oauth.allowInsecureRequests]: true,
    });
    return oauth.processDiscoveryResponse(issuer, response);
  }

  it.each([
    ['client_secret_post', oauth.ClientSecretPost(CLIENT_SECRET)],
    ['client_secret_basic', oauth.ClientSecretBasic(CLIENT_SECRET)],
  ])('gets and refreshes tokens with %s', async (_method, clientAuth) => {
    const as = await discover();
    const client: oauth.Client = { client_id: CLIENT_ID };
    const options = { [oauth.allowInsecureRequests]: true };
    const granted = await oauth.processClientCredentialsResponse(
      as,
      client,
      await oauth.clientCredentialsGrantRequest(as, client, clientAuth, new URLSearchParams(), options),
    );
    expect(granted.token_type).toBe('bearer');
    expect(granted.expires_in).toBe(300);
    expect(typeof granted.refresh_token).toBe('string');
    seen.push(granted.access_token, String(granted.refresh_token));

    const api = await fetch(`${server.url}/api/v1/users`, {
      headers: { authorization: `Bearer ${granted.access_token}` },
    });
    expect(api.status).toBe(200);

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, clientAuth, String(granted.refresh_token), options),
    );
    expect(refreshed.refresh_token).not.toBe(granted.refresh_token);
    seen.push(refreshed.access_token, String(refreshed.refresh_token));

    // A failed attempt with a wrong secret must not be logged either.
    const wrong = `${CLIENT_SECRET}-wrong`;
    seen.push(wrong);
    const refused = await fetch(`${server.url}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: CLIENT_ID,
        client_secret: wrong,
      }),
    });
    expect(refused.status).toBe(401);
  });

  it('answers a huge header with 431 and an unparsable request with 400, and keeps serving', async () => {
    const huge = await fetch(`${server.url}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-padding': 'x'.repeat(64 * 1024) },
      body: 'grant_type=client_credentials',
    });
    expect(huge.status).toBe(431);
    const { connect } = await import('node:net');
    const raw = await new Promise<string>((resolve, reject) => {
      const { hostname, port } = new URL(server.url);
      const socket = connect(Number(port), hostname, () => socket.end('GARBAGE / NOT-HTTP\r\n\r\n'));
      let answer = '';
      socket.on('data', (data) => {
        answer += data.toString('latin1');
      });
      socket.on('end', () => resolve(answer));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400/);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it('keeps no secret or token in the log of the run', async () => {
    const log = server.output();
    expect(log).toContain('"reference"');
    for (const secret of seen) expect(log).not.toContain(secret);
    expect(log).not.toContain('correct-horse-battery-staple');
  });

  it('keeps no client secret or token in plain text in the database', async () => {
    let bytes: string;
    if (TEST_DIALECT === 'sqlite') {
      // The raw files, WAL included: what an attacker with a copy of the disk would see.
      const folder = dirname(databaseUrl.slice('sqlite:'.length));
      bytes = readdirSync(folder)
        .map((name) => readFileSync(`${folder}/${name}`).toString('latin1'))
        .join('\n');
    } else {
      const store = openStore(databaseUrl);
      try {
        const tables = ['users', 'credentials', 'token_families', 'oauth_tokens'] as const;
        const rows = await Promise.all(
          tables.map((table) => store.db.selectFrom(table).selectAll().execute()),
        );
        bytes = JSON.stringify(rows);
      } finally {
        await store.close();
      }
    }
    expect(bytes).toContain(CLIENT_ID);
    for (const secret of seen) expect(bytes).not.toContain(secret);
  });
});
