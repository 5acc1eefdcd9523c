import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProcessing, createSnapshots } from '../../src/composition/processing.js';
import { ManualClock } from '../../src/lib/clock.js';
import type { SessionFilter } from '../../src/modules/ingestion/store.js';
import { StatisticsService, type TimeRange } from '../../src/modules/statistics/service.js';
import { createIngestionStore } from '../../src/storage/ingestion-store.js';
import { up as sessionCountersUp } from '../../src/storage/migrations/0016-session-counters.js';
import { up as counterStripesUp } from '../../src/storage/migrations/0020-counter-stripes.js';
import { sweepEndedSessions } from '../../src/storage/session-counters.js';
import { sessionStateIs } from '../../src/storage/session-state.js';
import { createStatisticsStore } from '../../src/storage/statistics-store.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { uploadRealisticConfiguration } from '../helpers/fixtures.js';
import { seededRandom } from '../helpers/random.js';
import { businessEvent, loanRecord } from '../helpers/records.js';
import { createTestStore, TEST_DIALECT } from '../helpers/store.js';
import { fullCountStatistics } from './statistics-oracle.js';

const at = (instant: string) => new Date(instant);

/** Open ranges, whole days, and ranges that cut days at either end or within one. */
const RANGES: TimeRange[] = [
  {},
  { from: at('2026-11-20T00:00:00Z') },
  { to: at('2026-11-21T00:00:00Z') },
  { from: at('2026-11-20T00:00:00Z'), to: at('2026-11-22T00:00:00Z') },
  { from: at('2026-11-20T07:30:00Z'), to: at('2026-11-22T11:00:00Z') },
  { from: at('2026-11-20T12:00:00Z') },
  { to: at('2026-11-21T13:30:00.001Z') },
  { from: at('2026-11-21T03:00:00Z'), to: at('2026-11-21T20:00:00Z') },
  { from: at('2026-11-20T23:59:59.999Z'), to: at('2026-11-21T00:00:00.001Z') },
  { from: at('2026-11-22T00:00:00Z'), to: at('2026-11-21T00:00:00Z') },
  { from: at('2026-11-23T05:00:00Z'), to: at('2026-11-26T18:00:00Z') },
];

const FILTERS: SessionFilter[] = [];
for (const state of [undefined, 'pending', 'closed', 'expired'] as const)
  for (const where of [
    {},
    { namespace: 'ledger' },
    { namespace: 'loans', entity: 'loanTransaction' },
    { entity: 'businessEvent' },
  ])
    FILTERS.push({ ...where, ...(state === undefined ? {} : { state }) });

/** The sessions `filter` selects at `nowMs`, counted row by row. */
async function fullCountSessions(store: Store, filter: SessionFilter, nowMs: number): Promise<number> {
  let query = store.db.selectFrom('ingestions');
  if (filter.namespace !== undefined) query = query.where('namespace', '=', filter.namespace);
  if (filter.entity !== undefined) query = query.where('entity', '=', filter.entity);
  const { state } = filter;
  if (state !== undefined) query = query.where((eb) => sessionStateIs(eb, state, nowMs));
  const row = await query.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The records of an entity (of one session), counted row by row. */
async function fullCountRecords(store: Store, namespace: string, entity: string, ingestionId?: string) {
  let query = store.db.selectFrom('records').where('namespace', '=', namespace).where('entity', '=', entity);
  if (ingestionId !== undefined) query = query.where('ingestion_id', '=', ingestionId);
  const row = await query.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * The ingestion metrics, the sessions list's totals and the records' totals read with the
 * counters equal the full counts of the rows at `nowMs`.
 */
async function expectCountersEqualFullCounts(store: Store, clock: ManualClock): Promise<void> {
  const counted = new StatisticsService(createStatisticsStore(store), clock);
  const full = new StatisticsService(fullCountStatistics(store), clock);
  for (const range of RANGES)
    expect(await counted.ingestionMetrics(range), JSON.stringify(range)).toEqual(
      await full.ingestionMetrics(range),
    );
  const sessions = createIngestionStore(store);
  const nowMs = clock.now().getTime();
  for (const filter of FILTERS)
    expect(await sessions.countSessions(filter, nowMs), JSON.stringify(filter)).toBe(
      await fullCountSessions(store, filter, nowMs),
    );
  const entities = [
    ['ledger', 'businessEvent'],
    ['loans', 'loanTransaction'],
  ] as const;
  const ids = await store.db.selectFrom('ingestions').select('ingestion_id').limit(8).execute();
  for (const [namespace, entity] of entities) {
    expect(await sessions.countRecords(namespace, entity, undefined)).toBe(
      await fullCountRecords(store, namespace, entity),
    );
    for (const { ingestion_id: id } of ids)
      expect(await sessions.countRecords(namespace, entity, id)).toBe(
        await fullCountRecords(store, namespace, entity, id),
      );
  }
}

/**
 * A random workload on the services: sessions opened with short and long timeouts, chunks
 * stored, rejected, refused and late (arrived before the close or expiry, written after it),
 * sessions closed by hand and expired by the clock, sweeps.
 */
async function runWorkload(t: TestApp, seed: number, steps: number): Promise<void> {
  const next = seededRandom(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)] as T;
  const { ingestion } = t.services;
  const sessions: { id: string; entity: string; openedAt: Date }[] = [];
  const body = (entity: string) =>
    Buffer.from(
      JSON.stringify({
        data: Array.from({ length: 1 + Math.floor(next() * 5) }, (_, i) =>
          entity === 'loanTransaction'
            ? loanRecord(i, next() < 0.2 ? { amount: 'bad' } : {})
            : businessEvent({ amount: pick(['10.00', '7', 'not a number']) }),
        ),
      }),
    );
  for (let step = 0; step < steps; step++) {
    t.clock.advance(Math.floor(next() * 4 * 3_600_000));
    const action = next();
    if (action < 0.25 || sessions.length === 0) {
      const entity = pick(['businessEvent', 'loanTransaction']);
      const namespace = entity === 'loanTransaction' ? 'loans' : 'ledger';
      const view = await ingestion.createSession(
        { namespace, entity, timeout: pick(['PT1S', 'PT2H', 'P1D']) },
        'tester@example.test',
      );
      sessions.push({ id: view.ingestionId, entity, openedAt: t.clock.now() });
    } else if (action < 0.65) {
      const session = pick(sessions);
      // Mostly now; sometimes a request that arrived long ago, just after the session opened.
      const arrivedAt = next() < 0.3 ? new Date(session.openedAt.getTime() + 500) : t.clock.now();
      await ingestion
        .submitChunk({
          ingestionId: session.id,
          raw: body(session.entity),
          partial: next() < 0.6,
          idempotencyKey: undefined,
          reference: `step-${step}`,
          arrivedAt,
        })
        .catch(() => undefined);
    } else if (action < 0.8) {
      await ingestion.closeSession(pick(sessions).id, { user: 'tester@example.test' }).catch(() => undefined);
    } else {
      await sweepEndedSessions(t.store.db, t.clock.now().getTime());
    }
  }
}

/** Some of every kind of session were made: closed, expired, counted and not. */
async function expectVariety(store: Store, nowMs: number): Promise<void> {
  for (const state of ['pending', 'closed', 'expired'] as const)
    expect(await fullCountSessions(store, { state }, nowMs), state).toBeGreaterThan(0);
  const counted = await store.db
    .selectFrom('ingestions')
    .select((eb) => ['counted', eb.fn.countAll().as('n')])
    .groupBy('counted')
    .execute();
  expect(counted.length).toBe(2);
}

describe('session counters', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    t.clock.set('2026-11-19T21:00:00Z');
    await uploadRealisticConfiguration(t);
  });
  afterAll(async () => t?.close());

  it('equal the full counts after random workloads, sweeps and a wipe', async () => {
    await expectCountersEqualFullCounts(t.store, t.clock);
    await runWorkload(t, 11, 60);
    await expectVariety(t.store, t.clock.now().getTime());
    await expectCountersEqualFullCounts(t.store, t.clock);
    await sweepEndedSessions(t.store.db, t.clock.now().getTime());
    await expectCountersEqualFullCounts(t.store, t.clock);
    await runWorkload(t, 12, 60);
    await expectCountersEqualFullCounts(t.store, t.clock);
    await uploadRealisticConfiguration(t);
    for (const table of ['session_day_counts', 'session_entity_counts'] as const) {
      const rows = await t.store.db.selectFrom(table).selectAll().execute();
      expect(rows, table).toEqual([]);
    }
    await expectCountersEqualFullCounts(t.store, t.clock);
    t.clock.set('2026-11-20T05:00:00Z');
    await runWorkload(t, 13, 50);
    await expectCountersEqualFullCounts(t.store, t.clock);
  });

  it('count the work of a request that arrived before the close, written after it', async () => {
    const { ingestion } = t.services;
    const view = await ingestion.createSession(
      { namespace: 'loans', entity: 'loanTransaction', timeout: 'PT1H' },
      'tester@example.test',
    );
    const arrivedAt = t.clock.now();
    t.clock.advance(1_000);
    await ingestion.closeSession(view.ingestionId, { user: 'tester@example.test' });
    const counted = await t.store.db
      .selectFrom('ingestions')
      .where('ingestion_id', '=', view.ingestionId)
      .select('counted')
      .executeTakeFirstOrThrow();
    expect(counted.counted).toBe(1);
    const result = await ingestion.submitChunk({
      ingestionId: view.ingestionId,
      raw: Buffer.from(JSON.stringify({ data: [loanRecord(1), loanRecord(2)] })),
      partial: false,
      idempotencyKey: undefined,
      reference: 'late',
      arrivedAt,
    });
    expect(result.outcome.kind).toBe('stored');
    const session = await ingestion.getSession(view.ingestionId);
    expect(session).toMatchObject({ state: 'closed', chunks: 1, successRows: 2 });
    await expectCountersEqualFullCounts(t.store, t.clock);
  });

  it('are filled by their migration from the rows already stored', async () => {
    await runWorkload(t, 14, 50);
    await sweepEndedSessions(t.store.db, t.clock.now().getTime());
    // Expired sessions the migration leaves to the sweep.
    await runWorkload(t, 15, 20);
    await expectCountersEqualFullCounts(t.store, t.clock);
    // The state before migration 0016 on the same rows.
    await t.store.db.schema.dropIndex('ingestions_uncounted').execute();
    await t.store.db.schema.alterTable('ingestions').dropColumn('counted').execute();
    for (const table of ['session_day_counts', 'session_entity_counts'])
      await t.store.db.schema.dropTable(table).execute();
    await sessionCountersUp(t.store.db as unknown as Kysely<unknown>, t.store.dialect);
    // Then the striping of the counters (0020), which sums them into their first stripe; the
    // records per entity are striped already, and their key's name is taken on PostgreSQL.
    if (t.store.dialect === 'postgres')
      await sql`alter table entity_record_counts drop constraint entity_record_counts_stripe_key`.execute(
        t.store.db,
      );
    await counterStripesUp(t.store.db as unknown as Kysely<unknown>, t.store.dialect);
    await expectCountersEqualFullCounts(t.store, t.clock);
    await sweepEndedSessions(t.store.db, t.clock.now().getTime());
    await expectCountersEqualFullCounts(t.store, t.clock);
  });
});

describe('session counters with several instances', () => {
  /** Sessions straight in a store, half expired at `nowMs`, half still open. */
  async function insertSessions(store: Store, count: number, nowMs: number): Promise<string[]> {
    const sessions = createIngestionStore(store);
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const openedOn = new Date(nowMs - (i % 5) * 13 * 3_600_000 - 60_000).toISOString();
      const id = `in_race_${String(i).padStart(4, '0')}`;
      await sessions.insertSession({
        ingestionId: id,
        ingestionName: null,
        namespace: 'ledger',
        entity: i % 3 === 0 ? 'businessEvent' : 'other',
        state: 'pending',
        timeout: 'PT1M',
        timeoutMs: 60_000,
        openedBy: 'tester',
        openedOn,
        closedBy: null,
        closedOn: null,
        closeReason: null,
        lastActivityOn: openedOn,
        expiresAtMs: i % 2 === 0 ? nowMs - 1 : nowMs + 60_000,
        chunks: i,
        apiCalls: i + 1,
        totalRows: 3 * i,
        // No records are stored: the records' totals of these sessions are nought.
        successRows: 0,
        failedRows: i,
        processedRows: 0,
        processingFailedRows: 0,
      });
      ids.push(id);
    }
    return ids;
  }

  it('count every session exactly once when two instances sweep and close at once', async () => {
    const { store, url, dispose } = await createTestStore();
    // SQLite serves one process: there the sweeps and closes run at once on one store.
    const other = TEST_DIALECT === 'postgres' ? openStore(url) : store;
    try {
      const clock = new ManualClock(at('2026-11-21T12:00:00Z'));
      const nowMs = clock.now().getTime();
      const ids = await insertSessions(store, 40, nowMs);
      const closes = ids
        .filter((_, i) => i % 2 === 1)
        .map((id, i) =>
          createIngestionStore(i % 2 === 0 ? store : other).closeOpenSession(
            id,
            { user: 'tester' },
            nowMs,
            clock.now().toISOString(),
          ),
        );
      const swept = await Promise.all([
        sweepEndedSessions(store.db, nowMs),
        sweepEndedSessions(other.db, nowMs),
        sweepEndedSessions(other.db, nowMs),
        ...closes.map((close) => close.then(() => 0)),
      ]);
      // Every expired session counted by one sweep, every open one closed and counted by its close.
      expect(swept.reduce((sum, n) => sum + n, 0)).toBe(20);
      expect(await sweepEndedSessions(store.db, nowMs)).toBe(0);
      await expectCountersEqualFullCounts(store, clock);
      const uncounted = await store.db
        .selectFrom('ingestions')
        .where('counted', '=', 0)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      expect(Number(uncounted.n)).toBe(0);
    } finally {
      if (other !== store) await other.close();
      await dispose();
    }
  });

  it('are swept beside the processor', async () => {
    const { store, dispose } = await createTestStore();
    const clock = new ManualClock(at('2026-11-21T12:00:00Z'));
    const processing = createProcessing(
      store,
      createSnapshots(store),
      clock,
      { businessDate: undefined, sessionSweepIntervalMs: 20 },
      (error) => {
        throw error;
      },
    );
    try {
      await insertSessions(store, 6, clock.now().getTime());
      processing.start();
      const deadline = Date.now() + 10_000;
      let counted = 0;
      while (counted < 3 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        const row = await store.db
          .selectFrom('session_entity_counts')
          .select((eb) => eb.fn.sum<number>('expired').as('n'))
          .executeTakeFirstOrThrow();
        counted = Number(row.n ?? 0);
      }
      expect(counted).toBe(3);
      await expectCountersEqualFullCounts(store, clock);
    } finally {
      await processing.close();
      await dispose();
    }
  });
});
