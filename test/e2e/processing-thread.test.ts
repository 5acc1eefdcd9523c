import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { apiClient, eventually, startE2eServer, storedBookings } from '../helpers/server.js';
import { createTestDatabaseUrl, dropTestDatabase } from '../helpers/store.js';

type Session = { ingestionId: string; processingStatus: string; successRows: number };
type Api = Awaited<ReturnType<typeof apiClient>>;

const BUSINESS_DATE_ENV = { BUSINESS_DATE: '2026-11-20' };
const PER_CHUNK = 1_000;

/** Sends `events` business events in chunks of PER_CHUNK to a new session and closes it. */
async function ingestEvents(api: Api, events: number): Promise<string> {
  expect((await api('PUT', '/api/v1/configuration/bulk', realisticConfiguration())).status).toBe(200);
  const session = (await api('POST', '/api/v1/ingestions', { namespace: 'ledger', entity: 'businessEvent' }))
    .body as Session;
  for (let c = 0; c < events / PER_CHUNK; c += 1) {
    const data = Array.from({ length: PER_CHUNK }, (_, i) =>
      businessEvent({ amount: `${c * PER_CHUNK + i + 1}.01` }),
    );
    expect((await api('POST', `/api/v1/ingestions/${session.ingestionId}`, { data })).status).toBe(201);
  }
  await api('PATCH', `/api/v1/ingestions/${session.ingestionId}`, { state: 'closed' });
  return session.ingestionId;
}

async function journalCount(api: Api): Promise<number> {
  const metrics = (await api('GET', '/api/v1/statistics/operational-dashboard/journal-metrics')).body as {
    postedJournals: number;
    unpostedJournals: number;
  };
  return metrics.postedJournals + metrics.unpostedJournals;
}

async function awaitCompleted(api: Api, ingestionId: string): Promise<void> {
  await eventually(async () => {
    const view = (await api('GET', `/api/v1/ingestions/${ingestionId}`)).body as Session;
    return view.processingStatus === 'completed' ? true : undefined;
  }, 150_000);
}

/** The nice value of each thread of a process (Linux), from /proc: field 19 of its stat line. */
function threadNiceValues(pid: number): { main: number; all: number[] } {
  const niceOf = (task: string) => {
    const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
    // The fields after the command name, whose parentheses may hold spaces: state is field 3.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19 - 3]);
  };
  return { main: niceOf(String(pid)), all: readdirSync(`/proc/${pid}/task`).map(niceOf) };
}

/** The processor on its own thread (docs/adr/0013-processing-thread.md), and on the event loop. */
describe('processing thread', () => {
  const urls: string[] = [];
  afterAll(async () => {
    for (const url of urls) await dropTestDatabase(url);
  });

  it('processes on its own thread and on SIGTERM mid-backlog stops gracefully, exits 0, and loses or doubles nothing', async () => {
    const databaseUrl = await createTestDatabaseUrl({ file: true });
    urls.push(databaseUrl);
    let server = await startE2eServer(databaseUrl, BUSINESS_DATE_ENV);
    let api = await apiClient(server.url);
    await eventually(async () =>
      server.output().includes('processing runs on its own thread') ? true : undefined,
    );
    expect((await api('PUT', '/api/v1/configuration/bulk', realisticConfiguration())).status).toBe(200);
    const session = (
      await api('POST', '/api/v1/ingestions', { namespace: 'ledger', entity: 'businessEvent' })
    ).body as Session;
    // Four clients send chunks while the thread processes them; SIGTERM comes as soon as the
    // first journals are there, so chunks wait and a chunk is being processed when it comes.
    const CHUNKS = 40;
    let stopping = false;
    const sender = async (lane: number) => {
      for (let c = lane; c < CHUNKS && !stopping; c += 4) {
        const data = Array.from({ length: PER_CHUNK }, (_, i) =>
          businessEvent({ amount: `${c * PER_CHUNK + i + 1}.01` }),
        );
        try {
          await api('POST', `/api/v1/ingestions/${session.ingestionId}`, { data });
        } catch {
          // The service stopped taking connections.
        }
      }
    };
    const senders = [0, 1, 2, 3].map(sender);
    await eventually(async () => ((await journalCount(api)) > 0 ? true : undefined), 150_000, 5);
    stopping = true;
    expect(await server.stop()).toBe(0);
    await Promise.all(senders);
    expect(server.output()).toContain('"msg":"stopped"');
    expect(server.output()).not.toContain('ended unexpectedly');
    expect((await storedBookings(databaseUrl)).doubled).toBe(0);

    server = await startE2eServer(databaseUrl, BUSINESS_DATE_ENV);
    api = await apiClient(server.url);
    try {
      await api('PATCH', `/api/v1/ingestions/${session.ingestionId}`, { state: 'closed' });
      await awaitCompleted(api, session.ingestionId);
      const accepted = ((await api('GET', `/api/v1/ingestions/${session.ingestionId}`)).body as Session)
        .successRows;
      expect(accepted).toBeGreaterThan(0);
      // LF_NL/AMS has both bases: two journals per accepted event, no more and no fewer.
      expect(await storedBookings(databaseUrl)).toMatchObject({ journals: 2 * accepted, doubled: 0 });
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it.runIf(process.platform === 'linux')(
    'runs the processing thread, and only it, at a lower priority than the event loop',
    async () => {
      const databaseUrl = await createTestDatabaseUrl({ file: true });
      urls.push(databaseUrl);
      const server = await startE2eServer(databaseUrl, BUSINESS_DATE_ENV);
      try {
        await eventually(async () =>
          server.output().includes('processing runs on its own thread') ? true : undefined,
        );
        const { main, all } = threadNiceValues(server.child.pid ?? 0);
        // A service started at nice 10 or more already runs everything at that priority.
        if (main < 10) {
          expect(all.filter((value) => value === 10)).toHaveLength(1);
          expect(all.filter((value) => value !== 10).every((value) => value === main)).toBe(true);
        }
      } finally {
        expect(await server.stop()).toBe(0);
      }
    },
  );

  it('processes on the event loop with PROCESSING_THREAD=false', async () => {
    const databaseUrl = await createTestDatabaseUrl({ file: true });
    urls.push(databaseUrl);
    const EVENTS = 2_000;
    const server = await startE2eServer(databaseUrl, { ...BUSINESS_DATE_ENV, PROCESSING_THREAD: 'false' });
    try {
      await eventually(async () =>
        server.output().includes('processing runs on the main thread') ? true : undefined,
      );
      const api = await apiClient(server.url);
      const ingestionId = await ingestEvents(api, EVENTS);
      await awaitCompleted(api, ingestionId);
      expect(await journalCount(api)).toBe(2 * EVENTS);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    expect(server.output()).not.toContain('processing runs on its own thread');
  });
});
