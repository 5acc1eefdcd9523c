import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/storage/store.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent, loanRecords } from '../helpers/records.js';
import {
  apiClient,
  E2E_CLIENT_ID,
  E2E_CLIENT_SECRET,
  eventually,
  type ServerProcess,
  startE2eServer,
} from '../helpers/server.js';
import { createTestDatabaseUrl, dropTestDatabase, TEST_DIALECT } from '../helpers/store.js';

type Api = Awaited<ReturnType<typeof apiClient>>;

/** The first administrator's password, to sign in to the administration interface. */
const ADMIN_PASSWORD = 'multi-instance administrator password';

/** Several service instances on one PostgreSQL behave as one (issues 2, 4, 5). */
describe.runIf(TEST_DIALECT === 'postgres')('two service processes on one PostgreSQL', () => {
  let databaseUrl: string;
  let a: ServerProcess;
  let b: ServerProcess;
  let apiA: Api;
  let apiB: Api;

  beforeAll(async () => {
    databaseUrl = await createTestDatabaseUrl();
    const env = { BUSINESS_DATE: '2026-11-20', ADMIN_PASSWORD };
    [a, b] = await Promise.all([startE2eServer(databaseUrl, env), startE2eServer(databaseUrl, env)]);
    [apiA, apiB] = await Promise.all([apiClient(a.url), apiClient(b.url)]);
    expect((await apiA('PUT', '/api/v1/configuration/bulk', realisticConfiguration())).status).toBe(200);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await dropTestDatabase(databaseUrl);
  });

  it('counts 24 parallel chunks sent through both instances exactly, with distinct chunkSeq', async () => {
    const session = (
      await apiA('POST', '/api/v1/ingestions', { namespace: 'loans', entity: 'loanTransaction' })
    ).body as { ingestionId: string };
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        (i % 2 === 0 ? apiA : apiB)('POST', `/api/v1/ingestions/${session.ingestionId}`, {
          data: loanRecords(100, i * 100),
        }),
      ),
    );
    expect(answers.map((x) => x.status)).toEqual(Array(24).fill(201));
    expect(new Set(answers.map((x) => (x.body as { chunkSeq: number }).chunkSeq)).size).toBe(24);
    const view = (await apiB('GET', `/api/v1/ingestions/${session.ingestionId}`)).body;
    expect(view).toMatchObject({ chunks: 24, totalRows: 2400, successRows: 2400, failedRows: 0 });
    const records = (
      await apiA(
        'GET',
        `/api/v1/namespaces/loans/entities/loanTransaction/records?ingestionId=${session.ingestionId}&limit=1`,
      )
    ).body;
    expect(records).toMatchObject({ totalSize: 2400 });
  });

  it('replays an idempotency key sent to both instances at once, storing the chunk once', async () => {
    const session = (
      await apiA('POST', '/api/v1/ingestions', { namespace: 'loans', entity: 'loanTransaction' })
    ).body as { ingestionId: string };
    const body = { data: loanRecords(500) };
    const answers = await Promise.all(
      [apiA, apiB, apiA, apiB].map((api) =>
        api('POST', `/api/v1/ingestions/${session.ingestionId}`, body, { 'idempotency-key': 'same' }),
      ),
    );
    expect(answers.map((x) => x.status)).toEqual([201, 201, 201, 201]);
    expect(new Set(answers.map((x) => JSON.stringify(x.body))).size).toBe(1);
    expect((await apiB('GET', `/api/v1/ingestions/${session.ingestionId}`)).body).toMatchObject({
      chunks: 1,
      successRows: 500,
    });
  });

  it.each([
    [
      'events',
      'ledger',
      'businessEvent',
      (c: number) => Array.from({ length: 300 }, (_, i) => businessEvent({ amount: `${c}${i}.5` })),
    ],
    ['loan records through the flow', 'loans', 'loanTransaction', (c: number) => loanRecords(300, c * 300)],
  ])(
    'processes %s with both instances working, each record exactly once',
    async (_kind, namespace, entity, chunkOf) => {
      const session = (await apiA('POST', '/api/v1/ingestions', { namespace, entity })).body as {
        ingestionId: string;
      };
      await Promise.all(
        Array.from({ length: 10 }, (_, c) =>
          (c % 2 === 0 ? apiA : apiB)('POST', `/api/v1/ingestions/${session.ingestionId}`, {
            data: chunkOf(c),
          }),
        ),
      );
      await apiB('PATCH', `/api/v1/ingestions/${session.ingestionId}`, { state: 'closed' });
      await eventually(async () => {
        const view = (await apiA('GET', `/api/v1/ingestions/${session.ingestionId}`)).body as {
          processingStatus: string;
        };
        return view.processingStatus === 'completed' ? true : undefined;
      }, 150_000);
      const store = openStore(databaseUrl);
      try {
        const rows = await store.db
          .selectFrom('journals')
          .where('ingestion_id', '=', session.ingestionId)
          .select((eb) => [
            eb.fn.countAll().as('journals'),
            eb.fn.count('record_id').distinct().as('records'),
          ])
          .executeTakeFirstOrThrow();
        // Two journals per record (both bases of LF_NL/AMS), each record booked once.
        expect(Number(rows.records)).toBe(3000);
        expect(Number(rows.journals)).toBe(6000);
      } finally {
        await store.close();
      }
    },
  );

  it('revokes a credential through one instance and the other refuses its token at once', async () => {
    const admin = apiA;
    const created = (await admin('POST', '/api/v1/credentials', { ownerEmail: 'admin@localhost' })).body as {
      clientId: string;
      clientSecret: string;
    };
    const token = (await (
      await fetch(`${b.url}/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: created.clientId,
          client_secret: created.clientSecret,
        }),
      })
    ).json()) as { access_token: string };
    const call = () =>
      fetch(`${b.url}/api/v1/ingestions?limit=1`, {
        headers: { authorization: `Bearer ${token.access_token}` },
      });
    expect((await call()).status).toBe(200);
    expect((await admin('DELETE', `/api/v1/credentials/${created.clientId}`)).status).toBe(204);
    expect((await call()).status).toBe(401);
    expect(E2E_CLIENT_ID).not.toBe(created.clientId);
    expect(E2E_CLIENT_SECRET).not.toBe(created.clientSecret);
  });

  it('finding: refreshes of one refresh token through both instances at once answer the same 200', async () => {
    const grant = (url: string, fields: Record<string, string>) =>
      fetch(`${url}/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: E2E_CLIENT_ID, client_secret: E2E_CLIENT_SECRET, ...fields }),
      });
    for (let round = 0; round < 5; round += 1) {
      const first = (await (await grant(a.url, { grant_type: 'client_credentials' })).json()) as {
        refresh_token: string;
      };
      const answers = await Promise.all(
        [a.url, b.url, a.url, b.url].map((url) =>
          grant(url, { grant_type: 'refresh_token', refresh_token: first.refresh_token }),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
      const bodies = await Promise.all(answers.map((answer) => answer.text()));
      expect(new Set(bodies).size).toBe(1);
      const renewed = JSON.parse(bodies[0] ?? '{}') as { access_token: string };
      const call = await fetch(`${b.url}/api/v1/ingestions?limit=1`, {
        headers: { authorization: `Bearer ${renewed.access_token}` },
      });
      expect(call.status).toBe(200);
    }
  });

  it('shows a credential secret created through one instance on the page the other serves, once', async () => {
    const signedIn = await fetch(`${a.url}/admin/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: 'admin@localhost', password: ADMIN_PASSWORD }),
    });
    expect(signedIn.status).toBe(303);
    const cookie = /^lf_admin_session=([^;]+)/.exec(signedIn.headers.getSetCookie()[0] ?? '')?.[1] ?? '';
    const headers = { cookie: `lf_admin_session=${cookie}` };
    const account = await (await fetch(`${a.url}/admin/account`, { headers })).text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(account)?.[1] ?? '';
    const created = await fetch(`${a.url}/admin/credentials`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ownerEmail: 'admin@localhost', expiresInDays: '7', _csrf: csrf }),
    });
    expect(created.status).toBe(303);
    const view = created.headers.get('location') ?? '';
    const shown = await fetch(`${b.url}${view}`, { headers });
    expect(shown.status).toBe(200);
    const page = await shown.text();
    const clientId = /id="client-id">([^<]+)</.exec(page)?.[1] ?? '';
    const clientSecret = /id="client-secret" class="secret">([^<]+)</.exec(page)?.[1] ?? '';
    expect(clientSecret).toMatch(/^lfs_/);
    for (const url of [a.url, b.url]) {
      const again = await fetch(`${url}${view}`, { headers });
      expect(again.status).toBe(410);
      expect(await again.text()).not.toContain(clientSecret);
    }
    const token = await fetch(`${a.url}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: clientSecret,
      }),
    });
    expect(token.status).toBe(200);
  });

  it('serves a configuration uploaded through one instance from the other on the next request', async () => {
    const changed = realisticConfiguration();
    (changed.configuration.businessEventTypes as { name: string; description?: string }[]).push({
      name: 'WRITE_OFF',
      description: 'Write-off',
    });
    expect((await apiB('PUT', '/api/v1/configuration/bulk', changed)).status).toBe(200);
    const seen = (await apiA('GET', '/api/v1/configuration/bulk')).body as {
      configuration: { businessEventTypes: { name: string }[] };
    };
    expect(seen.configuration.businessEventTypes.map((t) => t.name)).toContain('WRITE_OFF');
  });
});
