import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSealed } from '../../src/modules/auth/sealed-answer.js';
import { openStore } from '../../src/storage/store.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { loanRecords } from '../helpers/records.js';
import { type ServerProcess, startServer } from '../helpers/server.js';
import { createTestDatabaseUrl, dropTestDatabase, TEST_DIALECT } from '../helpers/store.js';

const BOOTSTRAP_ID = 'lfc_secrets';
const BOOTSTRAP_SECRET = 'lfs_secrets-bootstrap-0123456789abcdefghijklmnop';
const ADMIN_EMAIL = 'admin@localhost';
const ADMIN_PASSWORD = 'admin password: correct horse battery staple';

/** A secret seen in the session, and what it is (for the failure message). */
interface Secret {
  what: string;
  value: string;
}

/**
 * The forms a secret could take in a log line or a column: as sent, percent-encoded (a URL),
 * form-encoded (a body), and base64 in a Basic authorization header with its client id.
 */
function formsOf(secret: Secret, clientId?: string): string[] {
  const forms = new Set([
    secret.value,
    encodeURIComponent(secret.value),
    new URLSearchParams({ x: secret.value }).toString().slice(2),
  ]);
  if (clientId !== undefined) forms.add(Buffer.from(`${clientId}:${secret.value}`).toString('base64'));
  return [...forms];
}

/**
 * A realistic session against a running service at `LOG_LEVEL=debug`: tokens by client
 * credentials (form and Basic), refreshes (one reused), API calls with bearer tokens (one put
 * in a URL by mistake), a credential and users with passwords made through the API and the
 * administration interface, sign-ins with cookies and CSRF tokens, and failed attempts. Every
 * secret, password, token, cookie and CSRF token that crossed the wire is then looked for in
 * everything the process wrote and in every column of every table.
 */
describe('secrets stay out of the logs and out of the store', () => {
  let server: ServerProcess;
  let databaseUrl: string;
  const secrets: Secret[] = [];
  /** Basic authorization headers sent, keyed by the client id they carry. */
  const basicClients = new Map<string, string>();

  const keep = (what: string, value: string): string => {
    expect(value.length, what).toBeGreaterThanOrEqual(12);
    secrets.push({ what, value });
    return value;
  };

  async function tokenRequest(
    fields: Record<string, string>,
    basic?: { id: string; secret: string },
  ): Promise<{ status: number; body: Record<string, string> }> {
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (basic !== undefined) {
      headers.authorization = `Basic ${Buffer.from(`${basic.id}:${basic.secret}`).toString('base64')}`;
      basicClients.set(basic.secret, basic.id);
    }
    const response = await fetch(`${server.url}/auth/token`, {
      method: 'POST',
      headers,
      body: new URLSearchParams(fields),
    });
    return { status: response.status, body: (await response.json()) as Record<string, string> };
  }

  async function api(token: string, method: string, path: string, body?: unknown): Promise<Response> {
    return fetch(`${server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  /** Signs in to the administration interface; returns the cookie value and the CSRF token. */
  async function signIn(email: string, password: string): Promise<{ cookie: string; csrf: string }> {
    const response = await fetch(`${server.url}/admin/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email, password }),
    });
    expect(response.status).toBe(303);
    const cookie = /^lf_admin_session=([^;]+)/.exec(response.headers.getSetCookie()[0] ?? '')?.[1];
    if (cookie === undefined) throw new Error('no session cookie');
    const account = await (
      await fetch(`${server.url}/admin/account`, { headers: { cookie: `lf_admin_session=${cookie}` } })
    ).text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(account)?.[1];
    if (csrf === undefined) throw new Error('no CSRF token');
    return { cookie: keep('session cookie', cookie), csrf: keep('CSRF token', csrf) };
  }

  async function adminPost(
    session: { cookie: string; csrf: string },
    path: string,
    fields: Record<string, string>,
  ): Promise<Response> {
    return fetch(`${server.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: `lf_admin_session=${session.cookie}`,
      },
      body: new URLSearchParams({ ...fields, _csrf: session.csrf }),
    });
  }

  beforeAll(async () => {
    databaseUrl = await createTestDatabaseUrl({ file: true });
    server = await startServer({
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'debug',
      // Long enough that the repeated refresh below always falls in the window, however slow the
      // machine: the answer it gets back is kept sealed in the store, which the search covers.
      REFRESH_REUSE_GRACE_SECONDS: '300',
      BOOTSTRAP_CLIENT_ID: BOOTSTRAP_ID,
      BOOTSTRAP_CLIENT_SECRET: BOOTSTRAP_SECRET,
      ADMIN_EMAIL,
      ADMIN_PASSWORD,
    });
    keep('bootstrap client secret', BOOTSTRAP_SECRET);
    keep('administrator password', ADMIN_PASSWORD);

    // Tokens by client credentials, in the body and by Basic authentication, and refreshes.
    const first = await tokenRequest({
      grant_type: 'client_credentials',
      client_id: BOOTSTRAP_ID,
      client_secret: BOOTSTRAP_SECRET,
    });
    expect(first.status).toBe(200);
    const basic = await tokenRequest(
      { grant_type: 'client_credentials' },
      { id: BOOTSTRAP_ID, secret: BOOTSTRAP_SECRET },
    );
    expect(basic.status).toBe(200);
    for (const [name, grant] of [
      ['first', first],
      ['basic', basic],
    ] as const) {
      keep(`${name} access token`, grant.body.access_token ?? '');
      keep(`${name} refresh token`, grant.body.refresh_token ?? '');
    }
    const refreshed = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token ?? '',
      client_id: BOOTSTRAP_ID,
      client_secret: BOOTSTRAP_SECRET,
    });
    expect(refreshed.status).toBe(200);
    const admin = keep('refreshed access token', refreshed.body.access_token ?? '');
    keep('refreshed refresh token', refreshed.body.refresh_token ?? '');
    // API calls with a bearer token: a user with a password, a credential, data.
    const operatorPassword = keep('operator password', 'operator password 0123456789');
    expect(
      (
        await api(basic.body.access_token ?? '', 'POST', '/api/v1/users', {
          email: 'operator@example.test',
          roles: ['bulk-operator', 'admin'],
          password: operatorPassword,
        })
      ).status,
    ).toBe(201);
    const created = (await (
      await api(basic.body.access_token ?? '', 'POST', '/api/v1/credentials', {
        ownerEmail: 'operator@example.test',
      })
    ).json()) as { clientId: string; clientSecret: string };
    keep('API-made client secret', created.clientSecret);
    const operator = await tokenRequest(
      { grant_type: 'client_credentials' },
      { id: created.clientId, secret: created.clientSecret },
    );
    expect(operator.status).toBe(200);
    const operatorToken = keep('operator access token', operator.body.access_token ?? '');
    keep('operator refresh token', operator.body.refresh_token ?? '');
    expect(
      (await api(operatorToken, 'PUT', '/api/v1/configuration/bulk', realisticConfiguration())).status,
    ).toBe(200);
    const session = (await (
      await api(operatorToken, 'POST', '/api/v1/ingestions', {
        namespace: 'loans',
        entity: 'loanTransaction',
      })
    ).json()) as { ingestionId: string };
    expect(
      (
        await api(operatorToken, 'POST', `/api/v1/ingestions/${session.ingestionId}`, {
          data: loanRecords(20),
        })
      ).status,
    ).toBe(201);
    expect((await api(admin, 'GET', '/api/v1/journals?limit=5')).status).toBe(200);
    expect((await api(admin, 'GET', '/api/v1/statistics/processing')).status).toBe(200);
    // A client that puts its token in the URL as well.
    expect((await api(admin, 'GET', `/api/v1/ingestions?access_token=${admin}`)).status).toBe(200);

    // The first refresh token again, within the grace window: the same answer, read back from
    // where it is kept sealed under that token.
    const repeated = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token ?? '',
      client_id: BOOTSTRAP_ID,
      client_secret: BOOTSTRAP_SECRET,
    });
    expect(repeated.status).toBe(200);
    expect(repeated.body.refresh_token).toBe(refreshed.body.refresh_token);

    // Failed client authentications: a wrong secret of a known client, an unknown client.
    const wrong = keep('wrong client secret', `${BOOTSTRAP_SECRET}-wrong`);
    expect(
      (
        await tokenRequest({
          grant_type: 'client_credentials',
          client_id: BOOTSTRAP_ID,
          client_secret: wrong,
        })
      ).status,
    ).toBe(401);
    expect(
      (
        await tokenRequest(
          { grant_type: 'client_credentials' },
          { id: 'lfc_nobody', secret: keep('unknown client secret', 'lfs_nobody-0123456789abcdef') },
        )
      ).status,
    ).toBe(401);
    // Revocation of the operator's refresh token, authenticated by Basic.
    const revoke = await fetch(`${server.url}/auth/revoke`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${created.clientId}:${created.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ token: operator.body.refresh_token ?? '' }),
    });
    expect(revoke.status).toBe(200);

    // The administration interface: a failed sign-in, then sign-ins with cookies and CSRF.
    const failed = await fetch(`${server.url}/admin/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        email: ADMIN_EMAIL,
        password: keep('wrong password', 'not the administrator password'),
      }),
    });
    expect(failed.status).toBe(401);
    const adminSession = await signIn(ADMIN_EMAIL, ADMIN_PASSWORD);
    const webPassword = keep('password set in the interface', 'interface-made password 9876543210');
    expect(
      (
        await adminPost(adminSession, '/admin/users', {
          email: 'viewer@example.test',
          roles: 'viewer',
          password: webPassword,
        })
      ).status,
    ).toBe(303);
    const madeInInterface = await adminPost(adminSession, '/admin/credentials', {
      ownerEmail: 'operator@example.test',
      expiresInDays: '30',
    });
    expect(madeInInterface.status).toBe(303);
    const page = await (
      await fetch(`${server.url}${madeInInterface.headers.get('location')}`, {
        headers: { cookie: `lf_admin_session=${adminSession.cookie}` },
      })
    ).text();
    const shown = /id="client-secret" class="secret">([^<]+)</.exec(page)?.[1];
    if (shown === undefined) throw new Error('no secret on the created page');
    keep('interface-made client secret', shown);
    expect((await adminPost(adminSession, '/admin/logout', {})).status).toBe(200);
    // A credential made in a session that stays open and never opens the page of its secret:
    // the secret waits in the store, sealed under that session's cookie value, when it is searched.
    const keeper = await signIn(ADMIN_EMAIL, ADMIN_PASSWORD);
    const unseen = await adminPost(keeper, '/admin/credentials', {
      ownerEmail: 'operator@example.test',
      expiresInDays: '30',
    });
    expect(unseen.status).toBe(303);
    const waiting = openStore(databaseUrl);
    try {
      const rows = await waiting.db.selectFrom('admin_one_time_views').select('sealed').execute();
      expect(rows).toHaveLength(1);
      const opened = openSealed(keeper.cookie, rows[0]?.sealed ?? '', 'one-time view');
      const secret = (JSON.parse(opened ?? '{}') as { clientSecret?: string }).clientSecret;
      if (secret === undefined) throw new Error('the waiting secret does not open with its session');
      keep('interface-made client secret, waiting to be shown', secret);
    } finally {
      await waiting.close();
    }
    // A session that stays open, so its rows are in the store when it is searched.
    const viewer = await signIn('viewer@example.test', webPassword);
    expect(
      (
        await fetch(`${server.url}/admin/journals`, {
          headers: { cookie: `lf_admin_session=${viewer.cookie}` },
        })
      ).status,
    ).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await dropTestDatabase(databaseUrl);
  });

  it('writes none of them to stdout or stderr, at LOG_LEVEL=debug', async () => {
    await server.stop();
    const output = server.output();
    expect(output).toContain('"reference"');
    expect(output).toContain('sign-in failed');
    for (const secret of secrets) {
      for (const form of formsOf(secret, basicClients.get(secret.value))) {
        expect(output.includes(form), `${secret.what} (${form.slice(0, 12)}…) is in the output`).toBe(false);
      }
    }
  });

  it('stores none of them in clear in any column of any table', async () => {
    const store = openStore(databaseUrl);
    const dump: { table: string; column: string; value: string }[] = [];
    try {
      const tables =
        TEST_DIALECT === 'sqlite'
          ? await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(store.db)
          : await sql<{ name: string }>`select table_name as name from information_schema.tables
              where table_schema = 'public' and table_type = 'BASE TABLE'`.execute(store.db);
      expect(tables.rows.map((t) => t.name)).toEqual(
        expect.arrayContaining([
          'users',
          'credentials',
          'oauth_tokens',
          'admin_sign_ins',
          'admin_one_time_views',
          'records',
        ]),
      );
      for (const { name } of tables.rows) {
        const rows = await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(store.db);
        for (const row of rows.rows) {
          for (const [column, value] of Object.entries(row)) {
            if (value !== null) dump.push({ table: name, column, value: String(value) });
          }
        }
      }
    } finally {
      await store.close();
    }
    expect(dump.some((cell) => cell.table === 'credentials' && cell.value === BOOTSTRAP_ID)).toBe(true);
    expect(dump.some((cell) => cell.table === 'admin_one_time_views' && cell.column === 'sealed')).toBe(true);
    for (const secret of secrets) {
      const forms = formsOf(secret, basicClients.get(secret.value));
      const found = dump.filter((cell) => forms.some((form) => cell.value.includes(form)));
      expect(
        found.map((cell) => `${cell.table}.${cell.column}`),
        `${secret.what} is stored in clear`,
      ).toEqual([]);
    }
  });
});
