import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { createDatabaseStatement } from '../src/storage/postgres/ensure-database.js';
import type { Dialect } from '../src/storage/store.js';
import { type ServerProcess, startServer } from '../test/helpers/server.js';
import { benchConfiguration, type ChunkBody } from './data.js';

export type { Dialect };

/** A PostgreSQL server the benchmark may create and drop databases on (trust auth). */
export const BENCH_POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/**
 * Access tokens outlive any benchmark part, so no part has to refresh one mid-measurement: a day,
 * since a soak waits for processing to catch up after its load, which took over an hour after a
 * 10-minute SQLite load on a slow machine (an hour's token expired in that wait).
 */
const ACCESS_TOKEN_TTL_SECONDS = 24 * 3600;
/** How long SIGTERM may take before the service is killed. */
const STOP_TIMEOUT_MS = 15_000;
const BOOTSTRAP_CLIENT_ID = 'lfc_bench';
/**
 * The parts measure one client at full speed, which the per-client rate limit exists to stop:
 * the limit is raised past anything a part sends, not turned off, so its cost is in every figure.
 */
const RATE_LIMIT_MAX_BENCH = 1_000_000_000;
const KIB_BYTES = 1024;

/** A database made for one run, and how to remove it. */
export interface BenchDatabase {
  url: string;
  /** For the report, e.g. `PostgreSQL 15.20, local`. */
  storage: string;
  drop(): Promise<void>;
}

/** A fresh database of `dialect`: a file in a new temporary folder, or a new PostgreSQL database. */
export async function createDatabase(dialect: Dialect): Promise<BenchDatabase> {
  if (dialect === 'sqlite') {
    const folder = mkdtempSync(join(tmpdir(), 'ledgerflow-bench-'));
    return {
      url: `sqlite:${join(folder, 'bench.db')}`,
      storage:
        'SQLite file in the temporary folder (WAL, every write synced before its answer, as the service opens it)',
      drop: async () => rmSync(folder, { recursive: true, force: true }),
    };
  }
  const name = `lf_bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: BENCH_POSTGRES_URL });
  await admin.connect();
  let version: string;
  try {
    // As the service creates its database when it is missing (`ensure-database.ts`).
    await admin.query(createDatabaseStatement(name));
    const answer = await admin.query<{ server_version: string }>('show server_version');
    version = answer.rows[0]?.server_version ?? 'unknown version';
  } finally {
    await admin.end();
  }
  const url = new URL(BENCH_POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    storage: `PostgreSQL ${version.split(' ')[0]} on ${url.host}, a database made for this run`,
    async drop() {
      const dropper = new pg.Client({ connectionString: BENCH_POSTGRES_URL });
      await dropper.connect();
      try {
        await dropper.query(`drop database if exists ${name} with (force)`);
      } finally {
        await dropper.end();
      }
    },
  };
}

/** An answer of the service: status and parsed JSON body (undefined when there is none). */
export interface Answer {
  status: number;
  body: unknown;
}

/** A running service with an access token of the bootstrap credential. */
export interface BenchService {
  url: string;
  pid: number;
  dialect: Dialect;
  storage: string;
  /** The service's database, for a benchmark that fills it directly. */
  databaseUrl: string;
  clientId: string;
  clientSecret: string;
  accessToken: string;
  /** An authenticated JSON request. */
  request(method: string, path: string, body?: unknown, contentType?: string): Promise<Answer>;
}

async function readAnswer(response: Response): Promise<Answer> {
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

/** Throws with the answer when its status is not the expected one. */
export function expectStatus(answer: Answer, status: number, what: string): void {
  if (answer.status !== status) {
    throw new Error(`${what}: expected ${status}, got ${answer.status}: ${JSON.stringify(answer.body)}`);
  }
}

/** Lines of the service's output shown when a benchmark part fails. */
const SERVICE_LINES_ON_FAILURE = 30;

/**
 * Runs `work` against a fresh service on a fresh database of `dialect`, started as `npm start`
 * runs it (`MALLOC_ARENA_MAX=2 node --no-node-snapshot --max-semi-space-size=4 dist/main.js`) with `env` added to its environment, and always stops it with
 * SIGTERM and removes the database.
 */
export async function withService<T>(
  dialect: Dialect,
  work: (service: BenchService) => Promise<T>,
  env: Record<string, string> = {},
): Promise<T> {
  const database = await createDatabase(dialect);
  const clientSecret = randomBytes(24).toString('base64url');
  let server: ServerProcess | undefined;
  try {
    server = await startServer({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      LOG_LEVEL: 'warn',
      BOOTSTRAP_CLIENT_ID,
      BOOTSTRAP_CLIENT_SECRET: clientSecret,
      ACCESS_TOKEN_TTL: String(ACCESS_TOKEN_TTL_SECONDS),
      RATE_LIMIT_MAX: String(RATE_LIMIT_MAX_BENCH),
      ...env,
    });
    const { url } = server;
    const pid = server.child.pid;
    if (pid === undefined) throw new Error('the service process has no pid');
    const tokenResponse = await fetch(`${url}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: BOOTSTRAP_CLIENT_ID,
        client_secret: clientSecret,
      }),
    });
    const token = await readAnswer(tokenResponse);
    expectStatus(token, 200, 'POST /auth/token');
    const accessToken = (token.body as { access_token: string }).access_token;
    const service: BenchService = {
      url,
      pid,
      dialect,
      storage: database.storage,
      databaseUrl: database.url,
      clientId: BOOTSTRAP_CLIENT_ID,
      clientSecret,
      accessToken,
      async request(method, path, body, contentType = 'application/json') {
        const headers: Record<string, string> = { authorization: `Bearer ${accessToken}` };
        if (body !== undefined) headers['content-type'] = contentType;
        const response = await fetch(`${url}${path}`, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return readAnswer(response);
      },
    };
    return await work(service);
  } catch (error) {
    // What the service printed last says why it stopped answering, if it did.
    const printed = server?.output().trim().split('\n').slice(-SERVICE_LINES_ON_FAILURE).join('\n');
    throw new Error(
      `${error instanceof Error ? error.message : String(error)}\nservice output (last lines):\n${printed}`,
      {
        cause: error,
      },
    );
  } finally {
    if (server !== undefined) await stopServer(server);
    await database.drop();
  }
}

async function stopServer(server: ServerProcess): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), STOP_TIMEOUT_MS);
  });
  const outcome = await Promise.race([server.stop(), timedOut]);
  clearTimeout(timer);
  if (outcome === 'timeout') {
    process.stderr.write(`bench: the service did not stop within ${STOP_TIMEOUT_MS} ms; killing it\n`);
    await server.kill();
  } else if (outcome !== 0) {
    process.stderr.write(`bench: the service exited with ${outcome}:\n${server.output()}\n`);
  }
}

/** Uploads the realistic fixture plus the benchmark entity (data.ts). */
export async function uploadBenchConfiguration(service: BenchService): Promise<void> {
  expectStatus(
    await service.request('PUT', '/api/v1/configuration/bulk', benchConfiguration()),
    200,
    'PUT /api/v1/configuration/bulk',
  );
}

/** The session fields the benchmarks read (docs/reference.md, Sessions). */
export interface SessionAnswer {
  ingestionId: string;
  state: string;
  chunks: number;
  totalRows: number;
  successRows: number;
  failedRows: number;
  processingStatus: string;
}

/** Opens an ingestion session and returns its id. */
export async function openSession(service: BenchService, namespace: string, entity: string): Promise<string> {
  const answer = await service.request('POST', '/api/v1/ingestions', { namespace, entity, timeout: 'PT1H' });
  expectStatus(answer, 201, 'POST /api/v1/ingestions');
  return (answer.body as SessionAnswer).ingestionId;
}

/** The session as the service reports it now. */
export async function getSession(service: BenchService, ingestionId: string): Promise<SessionAnswer> {
  const answer = await service.request('GET', `/api/v1/ingestions/${ingestionId}`);
  expectStatus(answer, 200, 'GET /api/v1/ingestions/{id}');
  return answer.body as SessionAnswer;
}

/** Closes a session with the merge-patch `{ "state": "closed" }` (docs/reference.md, Sessions). */
export async function closeSession(service: BenchService, ingestionId: string): Promise<void> {
  const answer = await service.request(
    'PATCH',
    `/api/v1/ingestions/${ingestionId}`,
    { state: 'closed' },
    'application/merge-patch+json',
  );
  expectStatus(answer, 200, 'PATCH /api/v1/ingestions/{id}');
}

/** Timing of a batch of chunks sent in parallel. */
export interface SendTiming {
  /** `performance.now()` when the first request started. */
  startMs: number;
  /** `performance.now()` when the last 201 arrived. */
  endMs: number;
  chunks: number;
  records: number;
  bytes: number;
  /** Milliseconds from sending each chunk to its answer, in completion order. */
  latenciesMs: number[];
}

/**
 * Sends `count` chunks (cycling through `bodies`) to one session from `clients` concurrent
 * clients, each sending its next chunk as soon as its previous one is answered. Every chunk must
 * be answered 201 with all its records accepted.
 */
export async function postChunks(
  service: BenchService,
  ingestionId: string,
  bodies: readonly ChunkBody[],
  clients: number,
  count = bodies.length,
): Promise<SendTiming> {
  const target = `${service.url}/api/v1/ingestions/${ingestionId}`;
  const headers = { authorization: `Bearer ${service.accessToken}`, 'content-type': 'application/json' };
  let next = 0;
  let records = 0;
  let bytes = 0;
  const latenciesMs: number[] = [];
  const startMs = performance.now();
  const client = async () => {
    for (let index = next++; index < count; index = next++) {
      const chunk = bodies[index % bodies.length];
      if (chunk === undefined) throw new Error('no chunk bodies to send');
      const sentMs = performance.now();
      const answer = await readAnswer(await fetch(target, { method: 'POST', headers, body: chunk.body }));
      latenciesMs.push(performance.now() - sentMs);
      expectStatus(answer, 201, `chunk ${index}`);
      const accepted = (answer.body as { acceptedRows: number }).acceptedRows;
      if (accepted !== chunk.records) {
        throw new Error(`chunk ${index}: ${accepted} of ${chunk.records} records accepted`);
      }
      records += chunk.records;
      bytes += chunk.body.length;
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  return { startMs, endMs: performance.now(), chunks: count, records, bytes, latenciesMs };
}

/** Processing statuses of a session whose every record is processed. */
export const PROCESSED_STATUSES: ReadonlySet<string> = new Set(['completed', 'completed_with_errors']);

/**
 * Polls a closed session every `pollMs` until every record is processed: its status and the
 * time it was seen so (late by at most one poll), or undefined once `deadlineMs` have passed
 * since `sinceMs`.
 */
export async function awaitProcessed(
  service: BenchService,
  ingestionId: string,
  sinceMs: number,
  { pollMs, deadlineMs }: { pollMs: number; deadlineMs: number },
): Promise<{ status: string; atMs: number } | undefined> {
  for (;;) {
    const { processingStatus } = await getSession(service, ingestionId);
    const nowMs = performance.now();
    if (PROCESSED_STATUSES.has(processingStatus)) return { status: processingStatus, atMs: nowMs };
    if (nowMs - sinceMs > deadlineMs) return undefined;
    await sleep(pollMs);
  }
}

/** The value below which `fraction` of the values lie (nearest rank). */
export function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))] ?? 0;
}

/** The resident set size of a process, from /proc (Linux). */
export function residentBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (match?.[1] === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) * KIB_BYTES;
}

/** Samples a process's RSS every `everyMs` until stopped; `stop` returns the peak in bytes. */
export function sampleResidentBytes(pid: number, everyMs: number): { stop(): number } {
  let peak = residentBytes(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, residentBytes(pid));
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      peak = Math.max(peak, residentBytes(pid));
      return peak;
    },
  };
}
