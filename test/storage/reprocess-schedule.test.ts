import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServices, type ServicesProcessingHere } from '../../src/composition/services.js';
import { ManualClock } from '../../src/lib/clock.js';
import { nextDueAfter } from '../../src/modules/accounting/reprocessing.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { createTestStore, TEST_DIALECT } from '../helpers/store.js';

const SETTINGS = { accessTokenTtlSeconds: 300, refreshTokenTtlSeconds: 1800, businessDate: undefined };

/**
 * Two instances on one store, each with its own services, sharing one manual clock: on
 * PostgreSQL each with its own pool, as two processes would be; SQLite serves one process, whose
 * two instances share its connection.
 */
let first: { store: Store; url: string; dispose(): Promise<void> };
let second: Store;
let clock: ManualClock;
let a: ServicesProcessingHere;
let b: ServicesProcessingHere;

beforeEach(async () => {
  first = await createTestStore();
  second = TEST_DIALECT === 'postgres' ? openStore(first.url) : first.store;
  clock = new ManualClock('2026-11-20T07:00:00Z');
  a = createServices(first.store, clock, SETTINGS, { processing: 'here' });
  b = createServices(second, clock, SETTINGS, { processing: 'here' });
});
afterEach(async () => {
  await a.close();
  await b.close();
  if (second !== first.store) await second.close();
  await first.dispose();
});

/** Both instances look at the schedule at once; returns the runs they started. */
async function tickBoth() {
  const runs = await Promise.all([a.reprocessing.tick(), b.reprocessing.tick()]);
  return runs.filter((run) => run !== undefined);
}

describe('the reprocessing schedule', () => {
  it('runs once per day at the configured time across two instances', async () => {
    // The default: daily at 08:00 UTC, 5 attempts.
    expect(await a.reprocessing.schedule()).toMatchObject({
      mode: 'daily',
      dailyAt: '08:00',
      maxAttempts: 5,
    });
    expect(await tickBoth()).toEqual([]);
    expect((await a.reprocessing.schedule()).nextDueAt).toBe('2026-11-20T08:00:00.000Z');
    clock.set('2026-11-20T07:59:59Z');
    expect(await tickBoth()).toEqual([]);
    clock.set('2026-11-20T08:00:30Z');
    const started = await tickBoth();
    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({ trigger: 'scheduled', actor: 'system', selection: { all: true } });
    // The trail says the service started it by itself, and why.
    const entry = await first.store.db
      .selectFrom('audit_log')
      .select(['actor', 'client_id', 'details'])
      .where('action', '=', 'processing.reprocess')
      .executeTakeFirstOrThrow();
    expect(entry).toMatchObject({ actor: 'system', client_id: null });
    expect(JSON.parse(entry.details ?? '{}')).toMatchObject({ cause: 'the reprocessing schedule was due' });
    expect((await a.reprocessing.schedule()).nextDueAt).toBe('2026-11-21T08:00:00.000Z');
    for (const at of ['2026-11-20T09:00:00Z', '2026-11-20T23:59:00Z', '2026-11-21T07:59:00Z']) {
      clock.set(at);
      expect(await tickBoth()).toEqual([]);
    }
    clock.set('2026-11-21T08:01:00Z');
    expect(await tickBoth()).toHaveLength(1);
    expect((await a.reprocessing.runs(0, 10)).total).toBe(2);
  });

  it('runs every N minutes, and not at all when disabled', async () => {
    await a.reprocessing.setSchedule(
      { mode: 'interval', dailyAt: '08:00', intervalMinutes: 180, maxAttempts: 5 },
      { actor: { user: 'x@example.test' } },
    );
    expect((await b.reprocessing.schedule()).nextDueAt).toBe('2026-11-20T10:00:00.000Z');
    clock.set('2026-11-20T10:00:00Z');
    expect(await tickBoth()).toHaveLength(1);
    clock.set('2026-11-20T12:59:00Z');
    expect(await tickBoth()).toHaveLength(0);
    clock.set('2026-11-20T13:00:00Z');
    expect(await tickBoth()).toHaveLength(1);
    await b.reprocessing.setSchedule(
      { mode: 'disabled', dailyAt: '08:00', intervalMinutes: 180, maxAttempts: 5 },
      { actor: { user: 'x@example.test' } },
    );
    clock.set('2026-11-25T13:00:00Z');
    expect(await tickBoth()).toHaveLength(0);
    expect((await a.reprocessing.schedule()).nextDueAt).toBeNull();
  });

  it('works out the next due instant in UTC', () => {
    const daily = { mode: 'daily', dailyAt: '08:00', intervalMinutes: 1440 } as const;
    expect(nextDueAfter(daily, new Date('2026-11-20T07:59:59Z'))).toBe('2026-11-20T08:00:00.000Z');
    expect(nextDueAfter(daily, new Date('2026-11-20T08:00:00Z'))).toBe('2026-11-21T08:00:00.000Z');
    expect(nextDueAfter({ ...daily, dailyAt: '23:30' }, new Date('2026-12-31T23:45:00Z'))).toBe(
      '2027-01-01T23:30:00.000Z',
    );
    expect(nextDueAfter({ ...daily, mode: 'disabled' }, new Date())).toBeNull();
  });
});
