import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { BUSINESS_EVENT_ENTITY_NAME, LEDGER_NAMESPACE } from '../src/modules/configuration/model.js';
import { loanRecord } from '../test/helpers/records.js';
import { benchConfiguration } from './data.js';
import { fillerOf } from './direct-fill.js';
import {
  DIALECT_TITLE,
  formatNumber,
  type RunContext,
  type Section,
  sectionHead,
  stampNow,
  table,
} from './report.js';
import {
  type Answer,
  type BenchService,
  closeSession,
  type Dialect,
  expectStatus,
  getSession,
  openSession,
  percentile,
  residentBytes,
  uploadBenchConfiguration,
  withService,
} from './service.js';
import { type StoreDisk, storeDisk } from './store-disk.js';

/** How long the soak runs unless `--soak-minutes` says otherwise. */
export const SOAK_MINUTES_DEFAULT = 10;
/** Concurrent clients, each doing one thing at a time, with no pause between requests. */
const CLIENTS = 64;
/** Credentials the clients share (client i uses credential i mod this). */
const CREDENTIALS = 8;
const RECORDS_PER_CHUNK = 500;
/** A session gets 1 to this many chunks. */
const CHUNKS_PER_SESSION_MAX = 3;
/** Distinct chunk bodies made per entity before the run; clients cycle through them. */
const BODIES_PER_ENTITY = 16;
/** Every this many cycles a client refreshes its token, and every `GRANT_EVERY_CYCLES` it starts anew. */
const REFRESH_EVERY_CYCLES = 2;
const GRANT_EVERY_CYCLES = 10;
/** A request that takes longer than this counts as an error. */
const REQUEST_TIMEOUT_MS = 120_000;
/** A client pauses this long after an error, so a failing service is not hammered in a tight loop. */
const ERROR_PAUSE_MS = 200;
const RSS_SAMPLE_INTERVAL_MS = 1000;
/**
 * How long the backlog may stay as large as it was before the soak reports processing unfinished:
 * the soak waits as long as processing makes headway, however long the backlog of a long load.
 */
const DRAIN_STALL_MS = 5 * 60_000;
/** How long a calibration session's single record may take to be processed. */
const CALIBRATION_DEADLINE_MS = 5 * 60_000;
const DRAIN_POLL_INTERVAL_MS = 1000;
/**
 * Room the soak leaves on the disk of the store: it stops its load or its wait for processing,
 * and fails, when less is free. Processing's catch-up after a 10-minute PostgreSQL load writes tens of
 * gigabytes (about 4 KiB a record, processed: the record, two journals of two lines, their
 * indexes), and a full disk stops PostgreSQL.
 */
const DISK_FREE_MIN_BYTES = 4 * 1024 ** 3;
const GIB_BYTES = 1024 ** 3;
const KIB_BYTES = 1024;
/** How often a calibration session is asked whether its event is processed. */
const CALIBRATION_POLL_INTERVAL_MS = 100;
/** Concurrent requests of the final check. */
const CHECK_CONCURRENCY = 8;
const LOANS_NAMESPACE = 'loans';
const LOANS_ENTITY = 'loanTransaction';
const SOAK_USER_EMAIL = 'soak-client@example.test';
const MS_PER_MINUTE = 60_000;
const MS_PER_SECOND = 1000;
const MIB_BYTES = 1024 * 1024;
/** Distinct errors listed in the report at most (all are printed on the console). */
const ERRORS_LISTED_MAX = 20;

const KINDS = [
  'token',
  'refresh',
  'open session',
  'chunk',
  'close session',
  'read session',
  'read journals',
  'read statistics',
] as const;
type Kind = (typeof KINDS)[number];

const KIND_LABEL: Record<Kind, string> = {
  token: '`POST /auth/token` client_credentials',
  refresh: '`POST /auth/token` refresh_token',
  'open session': '`POST /api/v1/ingestions`',
  chunk: `\`POST /api/v1/ingestions/{id}\` (${RECORDS_PER_CHUNK} records)`,
  'close session': '`PATCH /api/v1/ingestions/{id}`',
  'read session': '`GET /api/v1/ingestions/{id}`',
  'read journals': '`GET /api/v1/journals?limit=50`',
  'read statistics': '`GET /api/v1/statistics/…` (ingestion, journal, processing in turn)',
};

/** Requests, latencies and errors per request kind, and every distinct error with its count. */
class Recorder {
  readonly #requests = new Map<Kind, number>();
  readonly #errors = new Map<Kind, number>();
  readonly #latenciesMs = new Map<Kind, number[]>(KINDS.map((kind) => [kind, []]));
  /** When each answered request was sent, in ms since the load started, beside its latency. */
  readonly #sentAtMs = new Map<Kind, number[]>(KINDS.map((kind) => [kind, []]));
  /** Every distinct error message, with how often it happened. */
  readonly distinct = new Map<string, number>();
  requests = 0;
  errors = 0;
  /** `performance.now()` when the load started. */
  originMs = 0;

  /** A request sent at `sentMs` (`performance.now()`); `latencyMs` is undefined when it got no answer. */
  sent(kind: Kind, sentMs: number, latencyMs: number | undefined): void {
    this.requests += 1;
    this.#requests.set(kind, (this.#requests.get(kind) ?? 0) + 1);
    if (latencyMs === undefined) return;
    this.#latenciesMs.get(kind)?.push(latencyMs);
    this.#sentAtMs.get(kind)?.push(sentMs - this.originMs);
  }

  /**
   * An error of a request of this kind: a wrong status, no answer, or a wrong answer. Errors
   * with the same `message` count as one distinct error; `example` (a problem's detail) is
   * printed with the first of them only.
   */
  failed(kind: Kind, message: string, example = ''): void {
    this.errors += 1;
    this.#errors.set(kind, (this.#errors.get(kind) ?? 0) + 1);
    const key = `${kind}: ${message}`;
    if (!this.distinct.has(key)) console.error(`soak: first error of its kind: ${key} ${example}`.trimEnd());
    this.distinct.set(key, (this.distinct.get(key) ?? 0) + 1);
  }

  of(kind: Kind): { requests: number; errors: number; latenciesMs: readonly number[] } {
    return {
      requests: this.#requests.get(kind) ?? 0,
      errors: this.#errors.get(kind) ?? 0,
      latenciesMs: this.#latenciesMs.get(kind) ?? [],
    };
  }

  /** The latencies of the requests of `kind` sent from `fromMs` to before `toMs` after the start. */
  between(kind: Kind, fromMs: number, toMs: number): number[] {
    const sentAt = this.#sentAtMs.get(kind) ?? [];
    return (this.#latenciesMs.get(kind) ?? []).filter((_, i) => {
      const at = sentAt[i] as number;
      return at >= fromMs && at < toMs;
    });
  }
}

/** What one request answered: its status and JSON body, or nothing when it got no answer. */
type Reply = { status: number; body: unknown } | undefined;

/** The type and title of a problem answer (its detail names ids, so it is kept apart). */
function describeProblem(body: unknown): { message: string; detail: string } {
  if (typeof body !== 'object' || body === null) return { message: String(body).slice(0, 200), detail: '' };
  const problem = body as { type?: unknown; title?: unknown; error?: unknown; detail?: unknown };
  return {
    message: [problem.type ?? problem.error, problem.title]
      .filter((part) => typeof part === 'string')
      .join(' — '),
    detail: typeof problem.detail === 'string' ? problem.detail : '',
  };
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** A request as a client sends it. */
interface Outgoing {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * Sends one request over the client's own keep-alive connection (`agent` holds one socket), as
 * a separate program would; a pool shared by all clients would make some wait for a socket
 * and count that wait as the service's latency.
 */
function send(agent: Agent, url: string, outgoing: Outgoing): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const body = outgoing.body === undefined ? undefined : Buffer.from(outgoing.body);
    const headers = {
      ...outgoing.headers,
      ...(body === undefined ? {} : { 'content-length': String(body.length) }),
    };
    const req = request(
      url,
      { agent, method: outgoing.method ?? 'GET', headers, timeout: REQUEST_TIMEOUT_MS },
      (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('error', reject);
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8') }),
        );
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS / MS_PER_SECOND} s`)),
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** One HTTP request of a client, timed and checked against the expected status. */
async function call(
  recorder: Recorder,
  agent: Agent,
  kind: Kind,
  label: string,
  expected: number,
  url: string,
  outgoing: Outgoing,
): Promise<Reply> {
  const startedMs = performance.now();
  let reply: { status: number; body: unknown };
  try {
    const { status, text } = await send(agent, url, outgoing);
    reply = { status, body: text === '' ? undefined : parsed(text) };
  } catch (error) {
    recorder.sent(kind, startedMs, undefined);
    recorder.failed(kind, `${label}: ${error instanceof Error ? error.message : String(error)}`);
    await sleep(ERROR_PAUSE_MS);
    return undefined;
  }
  recorder.sent(kind, startedMs, performance.now() - startedMs);
  if (reply.status !== expected) {
    const { message, detail } = describeProblem(reply.body);
    recorder.failed(kind, `${label}: ${reply.status} ${message}`, detail);
    await sleep(ERROR_PAUSE_MS);
  }
  return reply;
}

interface Credential {
  clientId: string;
  clientSecret: string;
}

interface Tokens {
  access: string;
  refresh: string;
}

/** A chunk body and what the service must make of it. */
interface Body {
  text: string;
  records: number;
  /** Journals its records make once processed: events by the engine, loan records by the flow. */
  journals: number;
}

/** A session a client opened, with what the service acknowledged to it. */
interface SoakSession {
  ingestionId: string;
  events: boolean;
  acknowledgedRecords: number;
  acknowledgedJournals: number;
  /** Records of chunks that got no clear answer (stored or not: the check allows either). */
  uncertainRecords: number;
  uncertainJournals: number;
}

interface EventShape {
  eventType: string;
  legalEntity: string;
  branch: string;
}

interface FixtureForEvents {
  businessEventTypes: { name: string }[];
  nodes: { fields: { legalEntity: string; branch: string } }[];
}

/** Every event type of the fixture at every node: the events of the soak cycle through them. */
function eventShapes(): EventShape[] {
  const configuration = benchConfiguration().configuration as unknown as FixtureForEvents;
  return configuration.businessEventTypes.flatMap((type) =>
    configuration.nodes.map((node) => ({ eventType: type.name, ...node.fields })),
  );
}

function eventRecord(shape: EventShape, index: number, date: string): Record<string, unknown> {
  return {
    ...shape,
    effectiveDate: date,
    amount: `${1 + (index % 99_999)}.${String(index % 100).padStart(2, '0')}`,
    currency: 'EUR',
    productCode: 'MORTGAGE',
  };
}

async function journalsOf(service: BenchService, ingestionId: string): Promise<number> {
  const answer = await service.request('GET', `/api/v1/journals?ingestionId=${ingestionId}&limit=1`);
  expectStatus(answer, 200, 'GET /api/v1/journals');
  return (answer.body as { totalSize: number }).totalSize;
}

/** Waits until the session's records are all processed; returns its session view. */
async function processed(service: BenchService, ingestionId: string) {
  const deadline = performance.now() + CALIBRATION_DEADLINE_MS;
  for (;;) {
    const session = await getSession(service, ingestionId);
    if (session.processingStatus.startsWith('completed')) return session;
    if (performance.now() > deadline) throw new Error(`session ${ingestionId} was not processed in time`);
    await sleep(CALIBRATION_POLL_INTERVAL_MS);
  }
}

/**
 * How many journals one record of each shape makes, measured on the service itself (one session
 * of one record per shape), so the final check does not depend on reading the fixture's rules.
 */
async function journalsPerShape(
  service: BenchService,
  [namespace, entity]: readonly [string, string],
  records: readonly Record<string, unknown>[],
): Promise<{ perShape: number[]; journals: number }> {
  const perShape: number[] = [];
  for (const record of records) {
    const id = await openSession(service, namespace, entity);
    expectStatus(
      await service.request('POST', `/api/v1/ingestions/${id}`, { data: [record] }),
      201,
      'calibration chunk',
    );
    await closeSession(service, id);
    const session = await processed(service, id);
    if (session.processingStatus !== 'completed') {
      throw new Error(
        `a record ${JSON.stringify(record)} was not processed cleanly: ${session.processingStatus}`,
      );
    }
    perShape.push(await journalsOf(service, id));
  }
  return { perShape, journals: perShape.reduce((a, b) => a + b, 0) };
}

/**
 * The shapes of loan records as far as journals go: `loanRecord(n)` alternates its transaction
 * type with the parity of `n`, and the fixture's flow books loan records into journals.
 */
const LOAN_SHAPES = 2;

/** Chunk bodies of business events (every shape in turn) and of loan records. */
function bodiesOf(
  shapes: readonly EventShape[],
  perShape: readonly number[],
  perLoanShape: readonly number[],
  date: string,
): { events: Body[]; loans: Body[] } {
  const events: Body[] = [];
  const loans: Body[] = [];
  for (let b = 0; b < BODIES_PER_ENTITY; b += 1) {
    let journals = 0;
    const data = Array.from({ length: RECORDS_PER_CHUNK }, (_, i) => {
      const index = b * RECORDS_PER_CHUNK + i;
      const shape = index % shapes.length;
      journals += perShape[shape] ?? 0;
      return eventRecord(shapes[shape] as EventShape, index, date);
    });
    events.push({
      text: JSON.stringify({ chunkName: `events-${b}`, data }),
      records: RECORDS_PER_CHUNK,
      journals,
    });
    loans.push({
      text: JSON.stringify({
        chunkName: `loans-${b}`,
        data: Array.from({ length: RECORDS_PER_CHUNK }, (_, i) => loanRecord(b * RECORDS_PER_CHUNK + i)),
      }),
      records: RECORDS_PER_CHUNK,
      journals: Array.from(
        { length: RECORDS_PER_CHUNK },
        (_, i) => perLoanShape[(b * RECORDS_PER_CHUNK + i) % LOAN_SHAPES] ?? 0,
      ).reduce((a, c) => a + c, 0),
    });
  }
  return { events, loans };
}

/** The load: `CLIENTS` clients, each cycling through a session's life until the deadline. */
async function load(
  service: BenchService,
  credentials: readonly Credential[],
  bodies: { events: Body[]; loans: Body[] },
  deadlineMs: number,
  recorder: Recorder,
  sessions: SoakSession[],
  stopped: () => boolean,
): Promise<void> {
  const form = (fields: Record<string, string>): Outgoing => ({
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  const tokensOf = (reply: Reply): Tokens | undefined => {
    if (reply?.status !== 200) return undefined;
    const body = reply.body as { access_token: string; refresh_token: string };
    return { access: body.access_token, refresh: body.refresh_token };
  };

  const client = async (index: number) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const credential = credentials[index % credentials.length] as Credential;
    const http = (kind: Kind, label: string, expected: number, path: string, outgoing: Outgoing = {}) =>
      call(recorder, agent, kind, label, expected, `${service.url}${path}`, outgoing);
    const grant = async () =>
      tokensOf(
        await http(
          'token',
          'POST /auth/token',
          200,
          '/auth/token',
          form({
            grant_type: 'client_credentials',
            client_id: credential.clientId,
            client_secret: credential.clientSecret,
          }),
        ),
      );
    const refresh = async (tokens: Tokens) =>
      tokensOf(
        await http(
          'refresh',
          'POST /auth/token (refresh)',
          200,
          '/auth/token',
          form({
            grant_type: 'refresh_token',
            refresh_token: tokens.refresh,
            client_id: credential.clientId,
            client_secret: credential.clientSecret,
          }),
        ),
      );
    let tokens: Tokens | undefined;
    for (let cycle = 0; performance.now() < deadlineMs && !stopped(); cycle += 1) {
      if (tokens === undefined || cycle % GRANT_EVERY_CYCLES === 0) tokens = await grant();
      else if (cycle % REFRESH_EVERY_CYCLES === 0) tokens = await refresh(tokens);
      if (tokens === undefined) continue;
      const auth = { authorization: `Bearer ${tokens.access}` };
      const json = { ...auth, 'content-type': 'application/json' };
      const events = (index + cycle) % 2 === 0;
      const opened = await http('open session', 'POST /api/v1/ingestions', 201, '/api/v1/ingestions', {
        method: 'POST',
        headers: json,
        body: JSON.stringify(
          events
            ? { namespace: LEDGER_NAMESPACE, entity: BUSINESS_EVENT_ENTITY_NAME }
            : { namespace: LOANS_NAMESPACE, entity: LOANS_ENTITY },
        ),
      });
      if (opened?.status !== 201) continue;
      const session: SoakSession = {
        ingestionId: (opened.body as { ingestionId: string }).ingestionId,
        events,
        acknowledgedRecords: 0,
        acknowledgedJournals: 0,
        uncertainRecords: 0,
        uncertainJournals: 0,
      };
      sessions.push(session);
      const sessionPath = `/api/v1/ingestions/${session.ingestionId}`;
      const chunks = 1 + ((index + cycle) % CHUNKS_PER_SESSION_MAX);
      for (let c = 0; c < chunks; c += 1) {
        const pool = events ? bodies.events : bodies.loans;
        const body = pool[(index + cycle + c) % pool.length] as Body;
        const answer = await http('chunk', 'POST /api/v1/ingestions/{id}', 201, sessionPath, {
          method: 'POST',
          headers: { ...json, 'idempotency-key': `chunk-${c}` },
          body: body.text,
        });
        const accepted = (answer?.body as { acceptedRows?: number } | undefined)?.acceptedRows;
        if (answer?.status === 201 && accepted === body.records) {
          session.acknowledgedRecords += body.records;
          session.acknowledgedJournals += body.journals;
        } else {
          if (answer?.status === 201)
            recorder.failed('chunk', `201 with ${accepted} of ${body.records} accepted`);
          session.uncertainRecords += body.records;
          session.uncertainJournals += body.journals;
        }
      }
      await http('close session', 'PATCH /api/v1/ingestions/{id}', 200, sessionPath, {
        method: 'PATCH',
        headers: { ...auth, 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({ state: 'closed' }),
      });
      const view = await http('read session', 'GET /api/v1/ingestions/{id}', 200, sessionPath, {
        headers: auth,
      });
      const successRows = (view?.body as { successRows?: number } | undefined)?.successRows;
      if (
        view?.status === 200 &&
        session.uncertainRecords === 0 &&
        successRows !== session.acknowledgedRecords
      ) {
        recorder.failed(
          'read session',
          `successRows ${successRows} right after the close, ${session.acknowledgedRecords} acknowledged`,
        );
      }
      await http('read journals', 'GET /api/v1/journals', 200, '/api/v1/journals?limit=50', {
        headers: auth,
      });
      const statistics = [
        '/api/v1/statistics/operational-dashboard/ingestion-metrics',
        '/api/v1/statistics/operational-dashboard/journal-metrics',
        '/api/v1/statistics/processing',
      ][cycle % 3] as string;
      await http('read statistics', `GET ${statistics}`, 200, statistics, { headers: auth });
    }
    agent.destroy();
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, index) => client(index)));
}

/** Why the soak stopped: less than `DISK_FREE_MIN_BYTES` free on the disk of its store. */
function diskLowError(freeBytes: number, storeBytes: number, when: string): Error {
  return new Error(
    `the disk of the store has ${gib(freeBytes)} free, less than the ${gib(DISK_FREE_MIN_BYTES)} the soak leaves, ${when}, the store at ${gib(storeBytes)}: stopped before the disk fills`,
  );
}

/**
 * Waits until no record waits for processing; returns how long that took, or undefined when the
 * backlog stopped shrinking for `DRAIN_STALL_MS`.
 */
async function drain(service: BenchService, disk: StoreDisk): Promise<number | undefined> {
  const startedMs = performance.now();
  let smallest = Number.POSITIVE_INFINITY;
  let shrankMs = startedMs;
  let loggedMs = startedMs;
  for (;;) {
    const answer = await service.request('GET', '/api/v1/statistics/processing');
    expectStatus(answer, 200, 'GET /api/v1/statistics/processing');
    const rows = (answer.body as { data: { pending: number }[] }).data;
    const pending = rows.reduce((sum, row) => sum + row.pending, 0);
    const nowMs = performance.now();
    if (pending === 0) return nowMs - startedMs;
    if (pending < smallest) {
      smallest = pending;
      shrankMs = nowMs;
    }
    if (nowMs - shrankMs > DRAIN_STALL_MS) return undefined;
    const free = disk.free();
    if (free !== undefined && free < DISK_FREE_MIN_BYTES) {
      throw diskLowError(
        free,
        await disk.size(),
        `with ${formatNumber(pending)} records waiting for processing`,
      );
    }
    if (nowMs - loggedMs >= MS_PER_MINUTE) {
      loggedMs = nowMs;
      console.log(
        `soak ${service.dialect}: ${formatNumber(pending)} records wait for processing; store ${gib(await disk.size())}${free === undefined ? '' : `, ${gib(free)} free on its disk`}`,
      );
    }
    await sleep(DRAIN_POLL_INTERVAL_MS);
  }
}

/** What the final check found, session by session: its view through the API, its rows in the store. */
interface CheckResult {
  sessions: number;
  eventSessions: number;
  acknowledgedRecords: number;
  storedRecords: number;
  acknowledgedJournals: number;
  storedJournals: number;
  /** Journals in the store, counted row by row, of every session (the calibration sessions too). */
  journalsInStore: number;
  mismatches: string[];
}

/** Rows per session in the store, counted by one grouped query per table beside the service. */
async function rowsPerSession(
  service: BenchService,
  table: 'records' | 'journals',
): Promise<Map<string, number>> {
  const filler = await fillerOf(service.dialect, service.databaseUrl);
  try {
    const rows = await filler.all(`select ingestion_id, count(*) as n from ${table} group by ingestion_id`);
    return new Map(rows.map((row) => [String(row.ingestion_id), Number(row.n)]));
  } finally {
    await filler.close();
  }
}

/**
 * Checks every session: its state and row counts through the API (one read of the session each),
 * its records and journals counted in the store (two grouped queries in all, rather than two
 * counting requests per session, which took minutes after a long run).
 */
async function check(service: BenchService, sessions: readonly SoakSession[]): Promise<CheckResult> {
  const recordsStored = await rowsPerSession(service, 'records');
  const journalsStored = await rowsPerSession(service, 'journals');
  const result: CheckResult = {
    sessions: sessions.length,
    eventSessions: 0,
    acknowledgedRecords: 0,
    storedRecords: 0,
    acknowledgedJournals: 0,
    storedJournals: 0,
    journalsInStore: [...journalsStored.values()].reduce((sum, n) => sum + n, 0),
    mismatches: [],
  };
  const within = (value: number, low: number, uncertain: number) => value >= low && value <= low + uncertain;
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < sessions.length; i = next++) {
      const session = sessions[i] as SoakSession;
      const { ingestionId } = session;
      const view = await getSession(service, ingestionId);
      const stored = recordsStored.get(ingestionId) ?? 0;
      result.acknowledgedRecords += session.acknowledgedRecords;
      result.storedRecords += stored;
      const problems: string[] = [];
      if (view.state !== 'closed') problems.push(`state ${view.state}`);
      if (view.failedRows !== 0) problems.push(`${view.failedRows} failed rows`);
      if (
        !within(stored, session.acknowledgedRecords, session.uncertainRecords) ||
        stored !== view.successRows
      ) {
        problems.push(
          `${stored} records stored, successRows ${view.successRows}, ${session.acknowledgedRecords} acknowledged`,
        );
      }
      // Loan records make journals too, through the fixture's flow: every session is counted,
      // or journal-metrics (every journal) cannot be compared with the store.
      if (session.events) result.eventSessions += 1;
      const journals = journalsStored.get(ingestionId) ?? 0;
      result.acknowledgedJournals += session.acknowledgedJournals;
      result.storedJournals += journals;
      if (view.processingStatus !== 'completed') problems.push(`processingStatus ${view.processingStatus}`);
      if (!within(journals, session.acknowledgedJournals, session.uncertainJournals)) {
        problems.push(`${journals} journals, ${session.acknowledgedJournals} expected`);
      }
      if (problems.length > 0) result.mismatches.push(`${ingestionId}: ${problems.join('; ')}`);
    }
  };
  await Promise.all(Array.from({ length: CHECK_CONCURRENCY }, worker));
  return result;
}

interface SoakRun {
  storage: string;
  minutes: number;
  loadMs: number;
  recorder: Recorder;
  rss: { startBytes: number; peakBytes: number; endBytes: number };
  drainMs: number | undefined;
  /** The store's size after the check: its SQLite files, or its PostgreSQL database. */
  storeBytes: number;
  checked: CheckResult;
  totalJournals: { expected: number; found: number };
}

async function soak(service: BenchService, minutes: number): Promise<SoakRun> {
  await uploadBenchConfiguration(service);
  const user = await service.request('POST', '/api/v1/users', {
    email: SOAK_USER_EMAIL,
    roles: ['api-client'],
  });
  expectStatus(user, 201, 'POST /api/v1/users');
  const credentials: Credential[] = [];
  for (let i = 0; i < CREDENTIALS; i += 1) {
    const created = await service.request('POST', '/api/v1/credentials', {
      ownerEmail: SOAK_USER_EMAIL,
      name: `soak-${i}`,
    });
    expectStatus(created, 201, 'POST /api/v1/credentials');
    credentials.push(created.body as Credential);
  }
  const date = new Date().toISOString().slice(0, 10);
  const shapes = eventShapes();
  const calibration = await journalsPerShape(
    service,
    [LEDGER_NAMESPACE, BUSINESS_EVENT_ENTITY_NAME],
    shapes.map((shape, index) => eventRecord(shape, index, date)),
  );
  const loanCalibration = await journalsPerShape(
    service,
    [LOANS_NAMESPACE, LOANS_ENTITY],
    Array.from({ length: LOAN_SHAPES }, (_, n) => loanRecord(n)),
  );
  const bodies = bodiesOf(shapes, calibration.perShape, loanCalibration.perShape, date);

  const disk = await storeDisk(service);
  const recorder = new Recorder();
  const sessions: SoakSession[] = [];
  const startBytes = residentBytes(service.pid);
  const startedMs = performance.now();
  recorder.originMs = startedMs;
  let peakBytes = startBytes;
  /** When the peak was sampled, in seconds from the start of the load (where to look for its cause). */
  let peakAtSeconds = 0;
  const sampler = setInterval(() => {
    const bytes = residentBytes(service.pid);
    if (bytes <= peakBytes) return;
    peakBytes = bytes;
    peakAtSeconds = (performance.now() - startedMs) / MS_PER_SECOND;
  }, RSS_SAMPLE_INTERVAL_MS);
  /** The free bytes that stopped the load, when the disk of the store ran low. */
  let lowFreeBytes: number | undefined;
  const progress = setInterval(() => {
    console.log(
      `soak ${service.dialect}: ${formatNumber(recorder.requests)} requests, ${recorder.errors} errors, ${sessions.length} sessions, RSS ${formatNumber(residentBytes(service.pid) / MIB_BYTES, 1)} MiB`,
    );
    const free = disk.free();
    if (free !== undefined && free < DISK_FREE_MIN_BYTES) lowFreeBytes ??= free;
  }, 10 * MS_PER_SECOND);
  let drainMs: number | undefined;
  let loadMs: number;
  let checked: CheckResult;
  let metrics: Answer;
  let storeBytes: number;
  try {
    try {
      await load(
        service,
        credentials,
        bodies,
        startedMs + minutes * MS_PER_MINUTE,
        recorder,
        sessions,
        () => lowFreeBytes !== undefined,
      );
      if (lowFreeBytes !== undefined) throw diskLowError(lowFreeBytes, await disk.size(), 'during the load');
      loadMs = performance.now() - startedMs;
      console.log(
        `soak ${service.dialect}: chunk p99 minute by minute: ${chunkP99ByMinute(recorder, loadMs)}`,
      );
      console.log(`soak ${service.dialect}: load done; waiting for processing to catch up`);
      drainMs = await drain(service, disk);
    } finally {
      clearInterval(progress);
      clearInterval(sampler);
    }
    peakBytes = Math.max(peakBytes, residentBytes(service.pid));
    console.log(
      `soak ${service.dialect}: peak RSS ${formatNumber(peakBytes / MIB_BYTES, 1)} MiB, sampled ${formatNumber(peakAtSeconds, 0)} s after the load started (load ${formatNumber(loadMs / MS_PER_SECOND, 0)} s)`,
    );
    console.log(`soak ${service.dialect}: checking ${sessions.length} sessions`);
    checked = await check(service, sessions);
    metrics = await service.request('GET', '/api/v1/statistics/operational-dashboard/journal-metrics');
    expectStatus(metrics, 200, 'GET journal-metrics');
    storeBytes = await disk.size();
  } finally {
    await disk.close();
  }
  const { postedJournals, unpostedJournals } = metrics.body as {
    postedJournals: number;
    unpostedJournals: number;
  };
  const endBytes = residentBytes(service.pid);
  return {
    storage: service.storage,
    minutes,
    loadMs,
    recorder,
    rss: { startBytes, peakBytes: Math.max(peakBytes, endBytes), endBytes },
    drainMs,
    storeBytes,
    checked,
    totalJournals: {
      expected: checked.acknowledgedJournals + calibration.journals + loanCalibration.journals,
      found: postedJournals + unpostedJournals,
    },
  };
}

const mib = (bytes: number) => `${formatNumber(bytes / MIB_BYTES, 1)} MiB`;
const gib = (bytes: number) => `${formatNumber(bytes / GIB_BYTES, 1)} GiB`;
const ms = (value: number) => `${formatNumber(value, value < 10 ? 1 : 0)} ms`;
const p99Of = (latencies: readonly number[]) =>
  latencies.length === 0 ? '' : ms(percentile(latencies, 0.99));

/**
 * The chunk answers' p99 of each whole minute of the load, in ms, in order: whether the last
 * minute's figure is a trend or one slow moment.
 */
function chunkP99ByMinute(recorder: Recorder, loadMs: number): string {
  const figures: string[] = [];
  for (let from = 0; from + MS_PER_MINUTE <= loadMs + MS_PER_SECOND; from += MS_PER_MINUTE) {
    const latencies = recorder.between('chunk', from, from + MS_PER_MINUTE);
    figures.push(latencies.length === 0 ? '-' : formatNumber(percentile(latencies, 0.99), 0));
  }
  return figures.join(', ');
}

function markdownOf(context: RunContext, run: SoakRun, stamp: ReturnType<typeof stampNow>, dialect: Dialect) {
  const { recorder, checked } = run;
  const seconds = run.loadMs / MS_PER_SECOND;
  const kindRows = KINDS.map((kind) => {
    const { requests, errors, latenciesMs: latencies } = recorder.of(kind);
    return [
      KIND_LABEL[kind],
      formatNumber(requests),
      errors === 0 ? '0' : `**${formatNumber(errors)}**`,
      latencies.length === 0 ? '' : ms(percentile(latencies, 0.5)),
      latencies.length === 0 ? '' : ms(percentile(latencies, 0.99)),
      p99Of(recorder.between(kind, 0, MS_PER_MINUTE)),
      p99Of(recorder.between(kind, run.loadMs - MS_PER_MINUTE, run.loadMs)),
    ];
  });
  const errors = [...recorder.distinct.entries()].sort((a, b) => b[1] - a[1]);
  const shortRun = run.minutes < SOAK_MINUTES_DEFAULT;
  const exact =
    checked.mismatches.length === 0 &&
    checked.storedRecords === checked.acknowledgedRecords &&
    checked.storedJournals === checked.acknowledgedJournals &&
    run.totalJournals.found === run.totalJournals.expected &&
    checked.journalsInStore === run.totalJournals.expected;
  return [
    ...sectionHead({
      title: `Soak: ${CLIENTS} clients for ${formatNumber(run.minutes)} minute${run.minutes === 1 ? '' : 's'}, ${DIALECT_TITLE[dialect]}`,
      machine: context.machine,
      storage: run.storage,
      command: context.command,
      stamp,
    }),
    ...(shortRun
      ? [
          `**A shortened run** (\`--soak-minutes ${run.minutes}\`), not the ${SOAK_MINUTES_DEFAULT}-minute soak; its figures say less about slow growth.`,
          '',
        ]
      : []),
    ...table(
      ['request', 'requests', 'errors', 'latency p50', 'latency p99', 'p99 first minute', 'p99 last minute'],
      [
        ...kindRows,
        [
          '**all**',
          `${formatNumber(recorder.requests)} (${formatNumber(recorder.requests / seconds)}/s)`,
          recorder.errors === 0 ? '0' : `**${formatNumber(recorder.errors)}**`,
          '',
          '',
          '',
          '',
        ],
      ],
    ),
    '',
    `Chunk answers' p99 minute by minute (ms): ${chunkP99ByMinute(recorder, run.loadMs)}.`,
    '',
    ...(errors.length === 0
      ? ['Errors: none.']
      : [
          'Errors (every distinct one, with its count):',
          '',
          ...errors.slice(0, ERRORS_LISTED_MAX).map(([message, count]) => `- ${count} × ${message}`),
          ...(errors.length > ERRORS_LISTED_MAX
            ? [`- … ${errors.length - ERRORS_LISTED_MAX} more on the console`]
            : []),
        ]),
    '',
    ...table(
      ['measure', 'result'],
      [
        [
          'RSS of the service: before the load, peak (sampled every second), after the check',
          `${mib(run.rss.startBytes)}, ${mib(run.rss.peakBytes)}, ${mib(run.rss.endBytes)}`,
        ],
        [
          'records acknowledged (201) and stored (counted in the store, session by session)',
          `${formatNumber(checked.acknowledgedRecords)} and ${formatNumber(checked.storedRecords)} in ${formatNumber(checked.sessions)} sessions (${formatNumber(checked.acknowledgedRecords / seconds)} records/s)`,
        ],
        [
          'journals expected from the acknowledged records and found (counted in the store, session by session: events, and loan records through the flow)',
          `${formatNumber(checked.acknowledgedJournals)} and ${formatNumber(checked.storedJournals)} in ${formatNumber(checked.sessions)} sessions (${formatNumber(checked.eventSessions)} of events)`,
        ],
        [
          'all journals with the calibration sessions: expected, counted in the store, journal-metrics (kept counters)',
          `${formatNumber(run.totalJournals.expected)}, ${formatNumber(checked.journalsInStore)}, ${formatNumber(run.totalJournals.found)}`,
        ],
        [
          'size of the store after the check (its SQLite files, or its PostgreSQL database), and per acknowledged record',
          `${gib(run.storeBytes)} (${formatNumber(run.storeBytes / Math.max(1, checked.acknowledgedRecords) / KIB_BYTES, 1)} KiB)`,
        ],
        [
          'processing caught up after the load',
          run.drainMs === undefined
            ? `**no**: the backlog stopped shrinking for ${DRAIN_STALL_MS / MS_PER_MINUTE} minutes`
            : `${formatNumber(run.drainMs / MS_PER_SECOND, 1)} s`,
        ],
        [
          'every session exact (closed, no failed rows, stored = acknowledged, events processed once)',
          exact
            ? 'yes'
            : `**no**: ${checked.mismatches.length} sessions differ${checked.mismatches.length > 0 ? `, e.g. ${checked.mismatches.slice(0, 3).join(' | ')}` : ''}`,
        ],
      ],
    ),
    '',
    `Method. ${CLIENTS} clients run at once against a freshly started service for ${formatNumber(run.minutes)} minute${run.minutes === 1 ? '' : 's'}, each without pause: it gets a token by client credentials (again every ${GRANT_EVERY_CYCLES} cycles) or refreshes it (every ${REFRESH_EVERY_CYCLES} cycles), opens a session of business events (\`${LEDGER_NAMESPACE}/${BUSINESS_EVENT_ENTITY_NAME}\`, every event type of the realistic fixture at each of its nodes) or of the fixture's loan entity, which a flow books (\`${LOANS_NAMESPACE}/${LOANS_ENTITY}\`) in turn, sends 1 to ${CHUNKS_PER_SESSION_MAX} chunks of ${RECORDS_PER_CHUNK} records with an idempotency key, closes the session, reads it back, reads the first page of journals and one statistics endpoint. The clients share ${CREDENTIALS} credentials of one \`api-client\` user. A request counts as an error when its status is not the expected one or it gets no answer within ${REQUEST_TIMEOUT_MS / MS_PER_SECOND} s. After the load the soak waits until no record waits for processing (as long as the backlog keeps shrinking; it gives up when it has not shrunk for ${DRAIN_STALL_MS / MS_PER_MINUTE} minutes), then checks every session: its state and counts through the API, its records and journals counted in the store. The soak stops, and fails, whenever the disk of the store has less than ${gib(DISK_FREE_MIN_BYTES)} free. Journals per record are measured first on the same service (one event of each type and node, one loan record of each transaction type, which the fixture's flow books), so the expected count does not depend on reading the accounting rules; journal-metrics, which the service keeps as counters, must equal the journals counted in the store and the journals expected of every session and of these calibration sessions. The p99 of the first and the last minute are of the requests sent in that minute of the load. Each client has its own keep-alive connection. Latencies are from sending a request to reading its whole answer, in the benchmark process on the same machine.`,
  ].join('\n');
}

/** Runs the soak on each dialect for `minutes`. */
export async function runSoak(
  context: RunContext,
  dialects: readonly Dialect[],
  minutes: number,
): Promise<Section[]> {
  const sections: Section[] = [];
  for (const dialect of dialects) {
    const stamp = stampNow();
    const run = await withService(dialect, (service) => soak(service, minutes));
    const markdown = markdownOf(context, run, stamp, dialect);
    for (const [message, count] of run.recorder.distinct)
      console.error(`soak ${dialect}: ${count} × ${message}`);
    for (const mismatch of run.checked.mismatches) console.error(`soak ${dialect}: ${mismatch}`);
    console.log(`\n${markdown}\n`);
    sections.push({ id: `soak-${dialect}`, markdown });
  }
  return sections;
}
