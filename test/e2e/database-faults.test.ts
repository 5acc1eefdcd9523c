import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, eventually, type ServerProcess, startE2eServer } from '../helpers/server.js';
import { createTestDatabaseUrl, dropTestDatabase, TEST_DIALECT } from '../helpers/store.js';

/** Timeouts the service under test runs with, short so that a frozen database is found quickly. */
const CONNECT_TIMEOUT_MS = 1_000;
const STATEMENT_TIMEOUT_MS = 1_000;
/** Longest an answer may take with the database frozen: a connection wait plus a query wait, and slack. */
const FROZEN_ANSWER_MS_MAX = CONNECT_TIMEOUT_MS + STATEMENT_TIMEOUT_MS + 3_000;

type ProxyMode = 'open' | 'cut' | 'frozen';

/**
 * A TCP proxy between the service and the shared PostgreSQL server, owned by the test, so that
 * faults are made here and never by stopping the server. `cut` resets every connection and
 * every new one; `freeze` stops forwarding without closing anything; `restore` forwards again,
 * held bytes first.
 */
class FaultyProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #held: { to: Socket; data: Buffer }[] = [];
  #mode: ProxyMode = 'open';

  constructor(target: { host: string; port: number }) {
    this.#server = createServer((client) => {
      if (this.#mode === 'cut') {
        client.resetAndDestroy();
        return;
      }
      const upstream = tcpConnect(target.port, target.host);
      for (const [from, to] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        this.#sockets.add(from);
        from.on('error', () => {});
        from.on('close', () => {
          this.#sockets.delete(from);
          to.destroy();
        });
        from.on('data', (data: Buffer) => {
          if (this.#mode === 'frozen') this.#held.push({ to, data });
          else to.write(data);
        });
      }
    });
  }

  /** Listens on a free port of 127.0.0.1 and returns it. */
  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    const address = this.#server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy has no port');
    return address.port;
  }

  /** Resets every open connection, and from now on every new one. */
  cut(): void {
    this.#mode = 'cut';
    this.#held.length = 0;
    for (const socket of this.#sockets) socket.resetAndDestroy();
  }

  /** Stops forwarding in both directions; connections stay open and new ones are accepted. */
  freeze(): void {
    this.#mode = 'frozen';
  }

  /** Forwards again, first what was held while frozen. */
  restore(): void {
    this.#mode = 'open';
    for (const { to, data } of this.#held.splice(0)) if (!to.destroyed) to.write(data);
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Issue 14: PostgreSQL connection resets and a frozen database, made with a proxy the test owns. */
describe.runIf(TEST_DIALECT === 'postgres')('database faults on PostgreSQL', () => {
  let databaseUrl: string;
  let proxy: FaultyProxy;
  let server: ServerProcess;
  let api: Awaited<ReturnType<typeof apiClient>>;

  const readyz = async () => {
    const response = await fetch(`${server.url}/readyz`);
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      body: await response.json(),
    };
  };
  /** Waits until /readyz and a data route answer 200 again, with nothing done but waiting. */
  const recovered = () =>
    eventually(async () => {
      if ((await readyz()).status !== 200) return undefined;
      return (await api('GET', '/api/v1/ingestions')).status === 200 ? true : undefined;
    });
  const expectAlive = () => {
    expect(server.child.exitCode).toBeNull();
    expect(server.output()).not.toMatch(/Unhandled 'error' event|uncaught/i);
  };
  const expectUnavailableProblem = (answer: { status: number; body: unknown }) => {
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ type: 'urn:ledgerflow:problem:unavailable', status: 503 });
  };

  beforeAll(async () => {
    databaseUrl = await createTestDatabaseUrl();
    const direct = new URL(databaseUrl);
    proxy = new FaultyProxy({ host: direct.hostname, port: Number(direct.port || '5432') });
    const viaProxy = new URL(databaseUrl);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(await proxy.listen());
    server = await startE2eServer(viaProxy.toString(), {
      DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
      DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
    });
    api = await apiClient(server.url);
    expect((await api('GET', '/api/v1/ingestions')).status).toBe(200);
  });
  afterEach(() => proxy.restore());
  afterAll(async () => {
    await server?.stop();
    await proxy?.close();
    await dropTestDatabase(databaseUrl);
  });

  it('issue 14.1: a connection reset while idle leaves the process alive, answers 503, and recovers', async () => {
    proxy.cut();
    // The processor polls every 250 ms and retries after 2 s: it meets the reset connections.
    await sleep(3_000);
    expectAlive();
    const data = await api('GET', '/api/v1/ingestions');
    expectAlive();
    expectUnavailableProblem(data);
    const ready = await readyz();
    expect(ready.status).toBe(503);
    expect(ready.type).toContain('application/problem+json');
    const token = await fetch(`${server.url}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=a&client_secret=b',
    });
    expect(token.status).toBe(503);
    expect(token.headers.get('cache-control')).toBe('no-store');
    expect(await token.json()).toMatchObject({ error: 'temporarily_unavailable' });
    proxy.restore();
    await recovered();
    expectAlive();
  });

  it('issue 14.1: a connection reset while a request runs answers it 503 and recovers', async () => {
    // A pooled connection serves the request; held in the frozen proxy, the request is
    // certainly mid-query on it when the connection resets.
    expect((await api('GET', '/api/v1/ingestions')).status).toBe(200);
    proxy.freeze();
    const during = api('GET', '/api/v1/ingestions');
    await sleep(200);
    proxy.cut();
    const answer = await during;
    await sleep(500);
    expectAlive();
    expectUnavailableProblem(answer);
    proxy.restore();
    await recovered();
    expectAlive();
  });

  it('issue 14.2: with the database frozen, /readyz and data routes answer 503 within the timeouts, then recover', async () => {
    proxy.freeze();
    let started = Date.now();
    const ready = await readyz();
    expect(Date.now() - started).toBeLessThan(FROZEN_ANSWER_MS_MAX);
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ type: 'urn:ledgerflow:problem:unavailable' });
    started = Date.now();
    const answers = await Promise.all(Array.from({ length: 12 }, () => api('GET', '/api/v1/ingestions')));
    expect(Date.now() - started).toBeLessThan(FROZEN_ANSWER_MS_MAX);
    for (const answer of answers) expectUnavailableProblem(answer);
    expectAlive();
    proxy.restore();
    await recovered();
    expectAlive();
  });
});
