import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startServer } from '../helpers/server.js';
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
});
