import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/storage/store.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent, loanRecords } from '../helpers/records.js';
import { apiClient, eventually, startE2eServer, storedBookings } from '../helpers/server.js';
import { createTestDatabaseUrl, dropTestDatabase } from '../helpers/store.js';

type Session = { ingestionId: string; processingStatus: string; successRows: number };

/** Crashes (SIGKILL) while chunks arrive, and while events and flow records are processed. */
describe('durability across a killed process', () => {
  const urls: string[] = [];
  afterAll(async () => {
    for (const url of urls) await dropTestDatabase(url);
  });

  it('keeps every chunk that got a 201 in full, and never part of a chunk', async () => {
    const databaseUrl = await createTestDatabaseUrl({ file: true });
    urls.push(databaseUrl);
    let server = await startE2eServer(databaseUrl);
    let api = await apiClient(server.url);
    expect((await api('PUT', '/api/v1/configuration/bulk', realisticConfiguration())).status).toBe(200);
    const session = (
      await api('POST', '/api/v1/ingestions', { namespace: 'loans', entity: 'loanTransaction' })
    ).body as Session;

    const CHUNKS = 60;
    const RECORDS_PER_CHUNK = 400; // about 120 KB: large enough for the worker threads
    const sent = new Map<number, string[]>();
    const acknowledged = new Set<number>();
    let killed = false;
    const sender = async (lane: number) => {
      for (let c = lane; c < CHUNKS && !killed; c += 4) {
        const data = loanRecords(RECORDS_PER_CHUNK, c * RECORDS_PER_CHUNK);
        sent.set(
          c,
          data.map((r) => String(r.transactionId)),
        );
        try {
          const answer = await api(
            'POST',
            `/api/v1/ingestions/${session.ingestionId}`,
            { chunkName: `c${c}`, data },
            { 'idempotency-key': `c${c}` },
          );
          if (answer.status === 201) acknowledged.add(c);
        } catch {
          // The connection died with the process: this chunk is in flight, not acknowledged.
        }
      }
    };
    const senders = [0, 1, 2, 3].map(sender);
    await eventually(async () => (acknowledged.size >= 10 ? true : undefined), 30_000, 5);
    await server.kill();
    killed = true;
    await Promise.all(senders);

    server = await startE2eServer(databaseUrl);
    api = await apiClient(server.url);
    try {
      const stored = new Map<string, number>();
      for (let page = 0; ; page += 1) {
        const answer = (
          await api(
            'GET',
            `/api/v1/namespaces/loans/entities/loanTransaction/records?ingestionId=${session.ingestionId}&limit=1000&page=${page}`,
          )
        ).body as {
          data: { chunkSeq: number; record: { transactionId: string } }[];
          totalPages: number;
        };
        for (const row of answer.data) stored.set(row.record.transactionId, row.chunkSeq);
        if (page + 1 >= answer.totalPages) break;
      }
      const storedChunks = [...sent.entries()].filter(([, ids]) => ids.some((id) => stored.has(id)));
      // Every acknowledged chunk is there in full ...
      for (const chunk of acknowledged)
        expect(
          sent.get(chunk)?.every((id) => stored.has(id)),
          `chunk ${chunk}`,
        ).toBe(true);
      // ... every stored chunk is whole (all or nothing), and nothing else was stored.
      for (const [, ids] of storedChunks) expect(ids.every((id) => stored.has(id))).toBe(true);
      expect(stored.size).toBe(storedChunks.length * RECORDS_PER_CHUNK);
      // At most the chunks in flight at the kill (one per sender) were stored without their 201.
      expect(storedChunks.length - acknowledged.size).toBeLessThanOrEqual(4);
      expect(
        ((await api('GET', `/api/v1/ingestions/${session.ingestionId}`)).body as Session).successRows,
      ).toBe(stored.size);
    } finally {
      await server.stop();
    }
  });

  it('processes every stored event exactly once when the service is killed in the middle of a backlog', async () => {
    const databaseUrl = await createTestDatabaseUrl({ file: true });
    urls.push(databaseUrl);
    const env = { BUSINESS_DATE: '2026-11-20' };
    let server = await startE2eServer(databaseUrl, env);
    let api = await apiClient(server.url);
    expect((await api('PUT', '/api/v1/configuration/bulk', realisticConfiguration())).status).toBe(200);
    const session = (
      await api('POST', '/api/v1/ingestions', { namespace: 'ledger', entity: 'businessEvent' })
    ).body as Session;
    const CHUNKS = 20;
    const PER_CHUNK = 1_000;
    const LANES = 4;
    // Four clients send while the processor works. (Chunks sent one at a time and a kill after
    // the close found the SQLite processor already done: it keeps up with a single sender.)
    let acknowledged = 0;
    let killed = false;
    const sender = async (lane: number) => {
      for (let c = lane; c < CHUNKS && !killed; c += LANES) {
        const data = Array.from({ length: PER_CHUNK }, (_, i) =>
          businessEvent({ amount: `${c * PER_CHUNK + i + 1}.01` }),
        );
        try {
          const answer = await api('POST', `/api/v1/ingestions/${session.ingestionId}`, { data });
          if (answer.status === 201) acknowledged += 1;
        } catch {
          // The connection died with the process: this chunk was in flight.
        }
      }
    };
    const senders = Array.from({ length: LANES }, (_, lane) => sender(lane));

    // Watched from outside, in the store: kill once some events are processed and at least a
    // chunk's worth wait, so the kill lands in the middle of a backlog while the processor is
    // busy. On SQLite the processor stays within a chunk or two of the senders (one connection
    // serves both), so the backlog at the kill is small there; on PostgreSQL it is larger.
    const store = openStore(databaseUrl);
    const progress = async () => {
      const row = await store.db
        .selectNoFrom((eb) => [
          eb.selectFrom('records').where('processing', '=', 1).select(eb.fn.countAll().as('n')).as('waiting'),
          eb.selectFrom('journals').select(eb.fn.countAll().as('n')).as('journals'),
        ])
        .executeTakeFirstOrThrow();
      return { waiting: Number(row.waiting), journals: Number(row.journals) };
    };
    try {
      await eventually(
        async () => {
          const now = await progress();
          return now.journals > 0 && now.waiting >= PER_CHUNK ? true : undefined;
        },
        150_000,
        5,
      );
      await server.kill();
      killed = true;
      await Promise.all(senders);
      const atKill = await progress();
      expect(atKill.journals).toBeGreaterThan(0);
      expect(atKill.waiting).toBeGreaterThanOrEqual(PER_CHUNK);
    } finally {
      await store.close();
    }

    server = await startE2eServer(databaseUrl, env);
    api = await apiClient(server.url);
    let stored: number;
    try {
      const closed = await api('PATCH', `/api/v1/ingestions/${session.ingestionId}`, { state: 'closed' });
      expect(closed.status).toBe(200);
      const view = await eventually(async () => {
        const answer = (await api('GET', `/api/v1/ingestions/${session.ingestionId}`)).body as Session;
        return answer.processingStatus === 'completed' ? answer : undefined;
      }, 150_000);
      stored = view.successRows;
      // Every acknowledged chunk is stored; at most the chunks in flight at the kill came in too.
      expect(stored % PER_CHUNK).toBe(0);
      expect(stored).toBeGreaterThanOrEqual(acknowledged * PER_CHUNK);
      expect(stored).toBeLessThanOrEqual((acknowledged + LANES) * PER_CHUNK);
      // LF_NL/AMS has both bases: two journals per event, no more and no fewer.
      const metrics = (await api('GET', '/api/v1/statistics/operational-dashboard/journal-metrics')).body as {
        postedJournals: number;
      };
      expect(metrics.postedJournals).toBe(2 * stored);
    } finally {
      await server.stop();
    }
    expect(await storedBookings(databaseUrl)).toMatchObject({ doubled: 0, records: stored });
  });

  it('runs the flow over every record exactly once when the service is killed while a flow backlog is processed', async () => {
    const databaseUrl = await createTestDatabaseUrl({ file: true });
    urls.push(databaseUrl);
    const env = { BUSINESS_DATE: '2026-11-20' };
    let server = await startE2eServer(databaseUrl, env);
    let api = await apiClient(server.url);
    expect((await api('PUT', '/api/v1/configuration/bulk', realisticConfiguration())).status).toBe(200);
    const session = (
      await api('POST', '/api/v1/ingestions', { namespace: 'loans', entity: 'loanTransaction' })
    ).body as Session;
    const RECORDS = 6_000;
    const PER_CHUNK = 500;
    for (let c = 0; c < RECORDS / PER_CHUNK; c += 1) {
      const data = loanRecords(PER_CHUNK, c * PER_CHUNK);
      expect((await api('POST', `/api/v1/ingestions/${session.ingestionId}`, { data })).status).toBe(201);
    }
    await api('PATCH', `/api/v1/ingestions/${session.ingestionId}`, { state: 'closed' });
    const metrics = async () =>
      (await api('GET', '/api/v1/statistics/operational-dashboard/journal-metrics')).body as {
        postedJournals: number;
        errors: number;
      };
    await eventually(async () => ((await metrics()).postedJournals > 0 ? true : undefined), 30_000, 5);
    await server.kill();

    server = await startE2eServer(databaseUrl, env);
    api = await apiClient(server.url);
    try {
      await eventually(async () => {
        const view = (await api('GET', `/api/v1/ingestions/${session.ingestionId}`)).body as Session;
        return view.processingStatus === 'completed' ? view : undefined;
      }, 150_000);
      // Every loan record's event posts to both bases: two journals per record, no error.
      expect(await metrics()).toMatchObject({ postedJournals: 2 * RECORDS, errors: 0 });
    } finally {
      await server.stop();
    }
    expect(await storedBookings(databaseUrl)).toMatchObject({ doubled: 0, records: RECORDS });
  });
});
