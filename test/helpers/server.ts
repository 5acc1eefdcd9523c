import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../src/storage/store.js';
import { TEST_BUSINESS_DATE } from './clock.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const START_TIMEOUT_MS = 30_000;

/** A service process started from the built `dist/main.js`, as `npm start` runs it (its flags and `MALLOC_ARENA_MAX`). */
export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** SIGTERM, then waits for the exit; returns the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<void>;
}

/**
 * Starts the service with these environment variables (PORT=0) and waits for its URL line. Its
 * business date is pinned to the fixtures' (`BUSINESS_DATE`, unless `env` sets another), so what
 * the tests post is in an open period whatever the real date.
 */
export async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  // SERVICE_CPU_PROFILE_DIR=dir writes a V8 CPU profile of the service (and of its worker
  // threads) into dir when it stops: how the benchmarks are profiled.
  const profileDir = process.env.SERVICE_CPU_PROFILE_DIR;
  const profile = profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`];
  const child = spawn(process.execPath, ['--no-node-snapshot', '--max-semi-space-size=4', ...profile, MAIN], {
    env: {
      MALLOC_ARENA_MAX: '2',
      ...process.env,
      PORT: '0',
      LOG_LEVEL: 'info',
      BUSINESS_DATE: TEST_BUSINESS_DATE,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let exitSignal: NodeJS.Signals | null = null;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code, signal) => {
      exitSignal = signal;
      resolve(code);
    }),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server did not start in time:\n${output}`)),
      START_TIMEOUT_MS,
    );
    const onData = (data: Buffer) => {
      output += data.toString('utf8');
      const match = /Ledgerflow listening on (\S+)/.exec(output);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output}`));
    });
  });
  return {
    url,
    child,
    output: () => output,
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      // A service that failed to stop cleanly (an error, a timeout, an abort) says why in its
      // output; one ended by SIGTERM before it could handle it, or killed, has nothing to say.
      const ended = exitSignal === 'SIGTERM' || exitSignal === 'SIGKILL';
      if (code !== 0 && !ended)
        process.stderr.write(`service exited with ${code ?? exitSignal}:\n${output.slice(-8_000)}\n`);
      return code;
    },
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 20_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

export const E2E_CLIENT_ID = 'lfc_e2e';
export const E2E_CLIENT_SECRET = 'lfs_e2e-secret-0123456789abcdefghijklmnopqrstuvwxyz';

/** Starts a server with the bootstrap credential of the e2e tests. */
export function startE2eServer(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  return startServer({
    DATABASE_URL: databaseUrl,
    BOOTSTRAP_CLIENT_ID: E2E_CLIENT_ID,
    BOOTSTRAP_CLIENT_SECRET: E2E_CLIENT_SECRET,
    ...env,
  });
}

/** A tiny JSON client of a running server, authenticated with the bootstrap credential. */
export async function apiClient(
  url: string,
): Promise<
  (
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ) => Promise<{ status: number; body: unknown }>
> {
  const tokenResponse = await fetch(`${url}/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: E2E_CLIENT_ID,
      client_secret: E2E_CLIENT_SECRET,
    }),
  });
  const { access_token: token } = (await tokenResponse.json()) as { access_token: string };
  return async (method, path, body, headers = {}) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
  };
}

/**
 * The journals a service left in its store, read straight from it: how many, how many records
 * have journals, and how many (record, accounting configuration) pairs have more than one.
 */
export async function storedBookings(
  databaseUrl: string,
): Promise<{ journals: number; records: number; doubled: number }> {
  const store = openStore(databaseUrl);
  try {
    const doubled = await store.db
      .selectFrom('journals')
      .select(['record_id', 'accounting_config'])
      .groupBy(['record_id', 'accounting_config'])
      .having((eb) => eb.fn.countAll(), '>', 1)
      .execute();
    const totals = await store.db
      .selectFrom('journals')
      .select((eb) => [eb.fn.countAll().as('journals'), eb.fn.count('record_id').distinct().as('records')])
      .executeTakeFirstOrThrow();
    return { journals: Number(totals.journals), records: Number(totals.records), doubled: doubled.length };
  } finally {
    await store.close();
  }
}
