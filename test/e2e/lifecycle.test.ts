import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { loanRecords } from '../helpers/records.js';
import {
  apiClient,
  E2E_CLIENT_ID,
  E2E_CLIENT_SECRET,
  eventually,
  startE2eServer,
  startServer,
} from '../helpers/server.js';
import { createTestDatabaseUrl, dropTestDatabase } from '../helpers/store.js';

describe('process lifecycle', () => {
  it('prints its URL and how to get a token, and on SIGTERM finishes the request in flight and exits 0', async () => {
    const databaseUrl = await createTestDatabaseUrl({ file: true });
    const server = await startServer({ DATABASE_URL: databaseUrl });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(server.output()).toContain(`curl -s -X POST ${server.url}/auth/token`);

      // A request whose body is still arriving when the signal comes is in flight for certain.
      const body = 'grant_type=client_credentials&client_id=lfc_x&client_secret=nope';
      const target = new URL('/auth/token', server.url);
      const answered = new Promise<number>((resolve, reject) => {
        const req = request(target, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': body.length },
        });
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.write(body.slice(0, 10));
        req.on('socket', (socket) =>
          socket.on('connect', async () => {
            await fetch(`${server.url}/healthz`); // the server has surely read our headers by now
            const exit = server.stop();
            req.end(body.slice(10));
            exitCode = await exit;
          }),
        );
      });
      let exitCode: number | null = -1;
      expect(await answered).toBe(401);
      await expect.poll(() => exitCode, { timeout: 10_000 }).toBe(0);
      expect(server.output()).toContain('"msg":"stopped"');
    } finally {
      await dropTestDatabase(databaseUrl);
    }
  });

  /** Records of the chunk in flight: about 900 KiB, just under the 1 MiB limit of a chunk. */
  const LONG_CHUNK_RECORDS = 3_700;

  it.each(['0', '1'])(
    'on SIGTERM finishes a long chunk in progress: 201, stored, then exits 0 (INGEST_WORKER_THREADS=%s)',
    async (threads) => {
      const databaseUrl = await createTestDatabaseUrl({ file: true });
      const env = { INGEST_WORKER_THREADS: threads };
      let server = await startE2eServer(databaseUrl, env);
      try {
        let api = await apiClient(server.url);
        expect((await api('PUT', '/api/v1/configuration/bulk', realisticConfiguration())).status).toBe(200);
        const session = (
          await api('POST', '/api/v1/ingestions', { namespace: 'loans', entity: 'loanTransaction' })
        ).body as { ingestionId: string };
        const token = (await (
          await fetch(`${server.url}/auth/token`, {
            method: 'POST',
            body: new URLSearchParams({
              grant_type: 'client_credentials',
              client_id: E2E_CLIENT_ID,
              client_secret: E2E_CLIENT_SECRET,
            }),
          })
        ).json()) as { access_token: string };
        const body = Buffer.from(
          JSON.stringify({ chunkName: 'in-flight', data: loanRecords(LONG_CHUNK_RECORDS) }),
        );
        expect(body.length).toBeGreaterThan(800 * 1024);

        // The service has read the headers when it answers `100 Continue`; all of the body but
        // its last byte goes then, the signal next, and the last byte only once the service has
        // logged that it is stopping. So the whole chunk (parse, validation, commit) is worked
        // after the signal.
        const running = server;
        let exit: Promise<number | null> | undefined;
        const answer = await new Promise<{ status: number; body: string; connection: string | undefined }>(
          (resolve, reject) => {
            const req = request(new URL(`/api/v1/ingestions/${session.ingestionId}`, running.url), {
              method: 'POST',
              headers: {
                authorization: `Bearer ${token.access_token}`,
                'content-type': 'application/json',
                'content-length': body.length,
                expect: '100-continue',
              },
            });
            req.on('error', reject);
            req.on('response', (res) => {
              let text = '';
              res.on('data', (data: Buffer) => {
                text += data.toString('utf8');
              });
              res.on('end', () =>
                resolve({ status: res.statusCode ?? 0, body: text, connection: res.headers.connection }),
              );
            });
            req.on('continue', async () => {
              req.write(body.subarray(0, body.length - 1));
              exit = running.stop();
              await eventually(async () => (running.output().includes('"msg":"stopping') ? true : undefined));
              req.end(body.subarray(body.length - 1));
            });
          },
        );
        expect(answer.status, answer.body).toBe(201);
        expect(JSON.parse(answer.body)).toMatchObject({ acceptedRows: LONG_CHUNK_RECORDS });
        expect(answer.connection).toBe('close');
        expect(await exit).toBe(0);

        server = await startE2eServer(databaseUrl, env);
        api = await apiClient(server.url);
        expect((await api('GET', `/api/v1/ingestions/${session.ingestionId}`)).body).toMatchObject({
          chunks: 1,
          successRows: LONG_CHUNK_RECORDS,
        });
      } finally {
        await server.stop();
        await dropTestDatabase(databaseUrl);
      }
    },
  );
});
