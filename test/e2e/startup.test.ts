import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { type AddressInfo, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createServices } from '../../src/composition/services.js';
import { parseEnv } from '../../src/env.js';
import { STARTING_DETAIL } from '../../src/http/api/operations.js';
import { systemClock } from '../../src/lib/clock.js';
import { migrateToLatest } from '../../src/storage/migrations/index.js';
import { openStore } from '../../src/storage/store.js';
import { TEST_BUSINESS_DATE } from '../helpers/clock.js';
import {
  E2E_CLIENT_ID,
  E2E_CLIENT_SECRET,
  eventually,
  startE2eServer,
  startServer,
} from '../helpers/server.js';
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
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', BUSINESS_DATE: TEST_BUSINESS_DATE, ...env },
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

/** A token request with the e2e bootstrap credential, answered once: its status. */
async function bootstrapTokenStatus(url: string): Promise<number> {
  const response = await fetch(`${url}/auth/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: E2E_CLIENT_ID,
      client_secret: E2E_CLIENT_SECRET,
    }),
  });
  await response.arrayBuffer();
  return response.status;
}

/**
 * Holds the write lock of the users table of a migrated database from another connection, so a
 * service starting on it can read but not make its first administrator until `release`.
 */
async function holdUsersWriteLock(databaseUrl: string): Promise<{ release(): Promise<void> }> {
  if (databaseUrl.startsWith('sqlite:')) {
    // SQLite locks the whole file: a reserved lock lets readers in (WAL) and keeps writers out.
    const sqlite = new SqliteDatabase(databaseUrl.slice('sqlite:'.length));
    sqlite.exec('begin immediate');
    return {
      async release() {
        sqlite.exec('rollback');
        sqlite.close();
      },
    };
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  // EXCLUSIVE lets selects through and makes inserts wait.
  await client.query('begin');
  await client.query('lock table users in exclusive mode');
  return {
    async release() {
      await client.query('rollback');
      await client.end();
    },
  };
}

/** The service started as a process, without waiting for anything it prints. */
function spawnService(env: Record<string, string>): {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
} {
  const child = spawn(process.execPath, ['--no-node-snapshot', MAIN], {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', BUSINESS_DATE: TEST_BUSINESS_DATE, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (data: Buffer) => {
    output += data.toString('utf8');
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

describe('readiness at start', () => {
  it('prints its listening line only once the bootstrap credential is served: a token at the first try, and /readyz 200', async () => {
    const databaseUrl = await createTestDatabaseUrl({ file: true });
    const server = await startE2eServer(databaseUrl);
    try {
      // No retry: the line promises the credential works now.
      expect(await bootstrapTokenStatus(server.url)).toBe(200);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      // Without APPROVAL_REQUIRED nothing waits for approval, and the start says nothing of it.
      expect(server.output()).not.toContain('Approval by a second user');
    } finally {
      expect(await server.stop()).toBe(0);
      await dropTestDatabase(databaseUrl);
    }
  });

  it('answers /readyz 503 and prints no listening line while the first administrator cannot be made yet, then both at once', async () => {
    const databaseUrl = await createTestDatabaseUrl({ file: true });
    const migrated = openStore(databaseUrl);
    await migrateToLatest(migrated);
    await migrated.close();
    const lock = await holdUsersWriteLock(databaseUrl);
    let locked = true;
    const service = spawnService({
      DATABASE_URL: databaseUrl,
      BOOTSTRAP_CLIENT_ID: E2E_CLIENT_ID,
      BOOTSTRAP_CLIENT_SECRET: E2E_CLIENT_SECRET,
    });
    try {
      // The port is open (Fastify's log line says where) while the administrator waits for the lock.
      const url = await eventually(
        async () => /"msg":"port open at (http:\/\/[^;"]+);/.exec(service.output())?.[1],
      );
      const starting = await fetch(`${url}/readyz`);
      expect(starting.status).toBe(503);
      expect(starting.headers.get('retry-after')).toBe('1');
      expect(await starting.json()).toMatchObject({
        type: 'urn:ledgerflow:problem:unavailable',
        detail: STARTING_DETAIL,
      });
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      expect(service.output()).not.toContain('Ledgerflow listening on');

      await lock.release();
      locked = false;
      await eventually(async () => (service.output().includes('Ledgerflow listening on') ? true : undefined));
      expect(await bootstrapTokenStatus(url)).toBe(200);
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
      service.child.kill('SIGTERM');
      expect(await service.exited).toBe(0);
    } finally {
      if (locked) await lock.release();
      service.child.kill('SIGKILL');
      await service.exited;
      await dropTestDatabase(databaseUrl);
    }
  });

  it('names the kinds of action that wait for approval in one line of its output and of its log', async () => {
    const databaseUrl = await createTestDatabaseUrl({ file: true });
    const server = await startServer({
      DATABASE_URL: databaseUrl,
      APPROVAL_REQUIRED: 'reversal, configuration.upload',
    });
    try {
      const line =
        'Approval by a second user required for: reversal, configuration.upload (APPROVAL_REQUIRED)';
      expect(
        server
          .output()
          .split('\n')
          .filter((text) => text === line),
      ).toHaveLength(1);
      // The log is written asynchronously, and may come after the printed lines.
      const logged = await eventually(async () => {
        const found = server
          .output()
          .split('\n')
          .filter((text) => text.startsWith('{') && text.includes('"msg":"Approval by'));
        return found.length > 0 ? found : undefined;
      });
      expect(logged).toHaveLength(1);
      expect(JSON.parse(logged[0] ?? '{}')).toMatchObject({
        level: 30,
        approvalRequired: ['reversal', 'configuration.upload'],
        msg: line,
      });
    } finally {
      expect(await server.stop()).toBe(0);
      await dropTestDatabase(databaseUrl);
    }
  });
});
