import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { type AddressInfo, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createServices } from '../../src/composition/services.js';
import { parseEnv } from '../../src/env.js';
import { systemClock } from '../../src/lib/clock.js';
import { openStore } from '../../src/storage/store.js';
import { E2E_CLIENT_ID, E2E_CLIENT_SECRET, startServer } from '../helpers/server.js';
import {
  createTestDatabaseUrl,
  dropTestDatabase,
  TEST_DATABASE_URL,
  TEST_DIALECT,
} from '../helpers/store.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

/** Runs the built service until it exits by itself; its exit code and what it wrote. */
function runUntilExit(
  env: Record<string, string>,
  nodeFlags: string[] = ['--no-node-snapshot'],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...nodeFlags, MAIN], {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (data: Buffer) => {
    stdout += data.toString('utf8');
  });
  child.stderr.on('data', (data: Buffer) => {
    stderr += data.toString('utf8');
  });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

describe('start-up problems the operator fixes', () => {
  it('refuses to start without --no-node-snapshot, which the script isolates need, and says how', async () => {
    const { code, stderr } = await runUntilExit({ DATABASE_URL: 'sqlite::memory:' }, []);
    expect(code).toBe(2);
    expect(stderr).toMatch(
      /^ledgerflow: start the service with `node --no-node-snapshot dist\/main.js` \(`npm start` does\)/,
    );
  });

  it('names an unreachable PostgreSQL server in one line and exits 1, with no stack', async () => {
    const { code, stderr } = await runUntilExit({
      DATABASE_URL: 'postgres://postgres:hunter2@127.0.0.1:1/ledgerflow',
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /^ledgerflow: cannot start: cannot reach PostgreSQL at 127\.0\.0\.1:1 \(ECONNREFUSED\)[^\n]*\n$/,
    );
    expect(stderr).not.toContain('hunter2');
  });

  it('refuses a short BOOTSTRAP_CLIENT_SECRET with one line naming the minimum, and exits 2', async () => {
    const { code, stderr } = await runUntilExit({
      DATABASE_URL: 'sqlite::memory:',
      BOOTSTRAP_CLIENT_ID: 'ci',
      BOOTSTRAP_CLIENT_SECRET: 'short',
    });
    expect(code).toBe(2);
    expect(stderr).toMatch(
      /^ledgerflow: BOOTSTRAP_CLIENT_SECRET must be at least 24 characters long[^\n]*\n$/,
    );
  });

  it('names a port in use in one line, exits 1, and leaves the first administrator to the next start', async () => {
    const databaseUrl = await createTestDatabaseUrl({ file: true });
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const failed = await runUntilExit({ DATABASE_URL: databaseUrl, PORT: String(port) });
      expect(failed.code).toBe(1);
      expect(failed.stderr).toBe(
        `ledgerflow: port ${port} on 127.0.0.1 is in use; set PORT to another port\n`,
      );
      expect(failed.stdout).not.toContain('generated password');
      // No administrator was made whose password no one saw: the next start makes and shows it.
      const server = await startServer({ DATABASE_URL: databaseUrl });
      let password: string;
      try {
        password = /generated password \(shown once\): (\S+)/.exec(server.output())?.[1] ?? '';
        expect(password).not.toBe('');
      } finally {
        await server.stop();
      }
      const store = openStore(databaseUrl);
      try {
        const services = createServices(store, systemClock, parseEnv({}));
        expect((await services.access.listUsers(0, 10)).total).toBe(1);
        expect((await services.signIns.signIn('admin@localhost', password, undefined)).ok).toBe(true);
      } finally {
        await store.close();
      }
    } finally {
      taken.close();
      await dropTestDatabase(databaseUrl);
    }
  });

  it.runIf(TEST_DIALECT === 'postgres')(
    'creates a PostgreSQL database that does not exist, says so in one log line, and serves',
    async () => {
      const name = `lf_test_${randomBytes(6).toString('hex')}`;
      const url = new URL(TEST_DATABASE_URL);
      url.pathname = `/${name}`;
      try {
        const server = await startServer({
          DATABASE_URL: url.toString(),
          BOOTSTRAP_CLIENT_ID: E2E_CLIENT_ID,
          BOOTSTRAP_CLIENT_SECRET: E2E_CLIENT_SECRET,
        });
        try {
          const created = server
            .output()
            .split('\n')
            .filter((line) => line.includes('was created'));
          expect(created).toHaveLength(1);
          expect(JSON.parse(created[0] ?? '{}')).toMatchObject({
            level: 30,
            database: name,
            msg: `database "${name}" did not exist and was created`,
          });
          expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
        } finally {
          expect(await server.stop()).toBe(0);
        }
      } finally {
        const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await admin.connect();
        await admin.query(`drop database if exists ${name} with (force)`).finally(() => admin.end());
      }
    },
  );
});
