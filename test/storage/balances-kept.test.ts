import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices, type ServicesProcessingHere } from '../../src/composition/services.js';
import { createAccountingStore } from '../../src/storage/accounting/accounting-store.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ingestClosedSession, realisticConfiguration } from '../helpers/fixtures.js';
import { seededRandom } from '../helpers/random.js';
import { businessEvent } from '../helpers/records.js';
import { TEST_DATABASE_URL, TEST_DIALECT } from '../helpers/store.js';
import { expectBalancesKept } from './balances-oracle.js';

/** The dates the balances are compared as of: before, on and after the workloads' core dates. */
const AS_OF = [
  '2026-11-17',
  '2026-11-19',
  '2026-11-20',
  '2026-11-21',
  '2026-11-23',
  '2026-11-26',
  '2026-12-31',
];

/** Filters compared besides every balance and `AS_OF`. */
const FILTERS = [
  { accountingConfig: 'IFRS' },
  { accountingConfig: 'LOCAL_GAAP', account: '1300' },
  { currency: 'USD' },
  { account: '2100', currency: 'EUR' },
];

/** A random workload's records: business events and direct journals, some dated in the future. */
function workload(seed: number) {
  const next = seededRandom(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)] as T;
  const amount = () => {
    if (next() < 0.05) return '123456789012345.67';
    const scale = pick([0, 1, 2, 2, 3]);
    const units = String(Math.floor(next() * 10_000_000));
    if (scale === 0) return units;
    const padded = units.padStart(scale + 1, '0');
    return `${padded.slice(0, -scale)}.${padded.slice(-scale)}`;
  };
  const dates = [
    '2026-11-18',
    '2026-11-19',
    '2026-11-20',
    '2026-11-20',
    '2026-11-23',
    '2026-11-24',
    '2026-11-26',
  ];
  const nodes = [
    { legalEntity: 'LF_NL', branch: 'AMS' },
    { legalEntity: 'LF_NL', branch: 'AMS' },
    { legalEntity: 'LF_US', branch: 'NYC' },
    { legalEntity: 'LF_NL', branch: 'RTM' }, // no such node: a processing error
  ];
  const events = Array.from({ length: 4 }, () =>
    Array.from({ length: 30 }, () =>
      businessEvent({
        eventType: pick(['LOAN_DISBURSEMENT', 'INTEREST_ACCRUAL', 'FEE_CHARGED']),
        effectiveDate: pick(dates),
        amount: amount(),
        currency: pick(['EUR', 'EUR', 'USD']),
        ...pick(nodes),
      }),
    ),
  );
  const journals = Array.from({ length: 2 }, () =>
    Array.from({ length: 8 }, () => {
      const origin = `J-${Math.floor(next() * 1e12)}`;
      const accountingConfig = pick(['IFRS', 'LOCAL_GAAP']);
      const node = accountingConfig === 'IFRS' ? pick(nodes.slice(0, 3)) : nodes[0];
      const shared = {
        coreDate: pick(dates),
        journalType: pick(['PERM', 'PERM', 'REV']),
        accountingConfig,
        originJournalId: origin,
        transactionCurrency: pick(['EUR', 'USD']),
        ...node,
      };
      const a = amount();
      return [
        { ...shared, account: pick(['1300', '1350']), transactionAmount: a },
        { ...shared, account: pick(['2100', '8100']), transactionAmount: a === '0' ? '0' : `-${a}` },
      ];
    }).flat(),
  );
  return { events, journals };
}

/** Sends a workload through the API, one closed session per chunk. */
async function ingest(t: TestApp, seed: number): Promise<void> {
  const token = await t.tokenFor(['bulk-operator']);
  const { events, journals } = workload(seed);
  for (const data of events) await ingestClosedSession(t, token, 'businessEvent', data);
  for (const data of journals) await ingestClosedSession(t, token, 'journal', data);
}

/** Uploads the realistic configuration, which wipes every session and journal. */
async function uploadConfiguration(t: TestApp): Promise<void> {
  const token = await t.tokenFor(['bulk-operator']);
  const put = await t.call(token, {
    method: 'PUT',
    url: '/api/v1/configuration/bulk',
    payload: realisticConfiguration(),
  });
  expect(put.statusCode, put.body).toBe(200);
}

async function unposted(store: Store): Promise<number> {
  const row = await store.db
    .selectFrom('journals')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('posted', '=', 0)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Balances are kept in the transactions that post lines (issue 22): after business events,
 * direct journals and their reversals, future journals posted as the business date comes, and a
 * wipe, they equal the sums of the posted lines exactly, as of every date.
 */
describe('balances kept as journals post', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    // Friday 2026-11-20 in Amsterdam and New York.
    t.clock.set('2026-11-20T15:00:00Z');
    await uploadConfiguration(t);
  });
  afterAll(async () => t?.close());

  it('equal the posted lines after random workloads, posting as dates come, and a wipe', async () => {
    await ingest(t, 1);
    await t.services.processor.drain();
    expect(await unposted(t.store)).toBeGreaterThan(0);
    expect(await expectBalancesKept(t.store, AS_OF, FILTERS)).toBeGreaterThan(4);

    // Monday: the journals of the weekend and Monday post.
    t.clock.set('2026-11-23T15:00:00Z');
    expect(await t.services.processor.postDue()).toBeGreaterThan(0);
    await expectBalancesKept(t.store, AS_OF, FILTERS);

    await ingest(t, 2);
    await t.services.processor.drain();
    await expectBalancesKept(t.store, AS_OF, FILTERS);
    t.clock.set('2026-11-27T15:00:00Z');
    expect(await t.services.processor.postDue()).toBeGreaterThan(0);
    expect(await unposted(t.store)).toBe(0);
    await expectBalancesKept(t.store, AS_OF, FILTERS);

    // The API answers what the store keeps.
    const answer = await t.call(await t.tokenFor(['bulk-operator']), {
      method: 'GET',
      url: '/api/v1/balances?asOf=2026-11-20',
    });
    expect(answer.statusCode).toBe(200);
    expect(answer.json().data).toEqual(await createAccountingStore(t.store).balances({ asOf: '2026-11-20' }));

    // An upload wipes the journals, and their balances with them.
    await uploadConfiguration(t);
    expect(await expectBalancesKept(t.store, AS_OF, FILTERS)).toBe(0);
    for (const table of ['balance_moves', 'balances'] as const) {
      const left = await t.store.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      expect(Number(left.n), table).toBe(0);
    }

    await ingest(t, 3);
    await t.services.processor.drain();
    expect(await expectBalancesKept(t.store, AS_OF, FILTERS)).toBeGreaterThan(4);
  });

  it('print a sum with the larger scale of its lines, and zero as zero at that scale', async () => {
    await uploadConfiguration(t);
    const token = await t.tokenFor(['bulk-operator']);
    const line = (origin: string, account: string, amount: string) => ({
      coreDate: '2026-11-27',
      journalType: 'PERM',
      accountingConfig: 'IFRS',
      account,
      transactionAmount: amount,
      transactionCurrency: 'EUR',
      originJournalId: origin,
      legalEntity: 'LF_NL',
      branch: 'AMS',
    });
    await ingestClosedSession(t, token, 'journal', [
      line('S-1', '1300', '100.50'),
      line('S-1', '2100', '-100.50'),
    ]);
    await ingestClosedSession(t, token, 'journal', [
      line('S-2', '1300', '-100.5'),
      line('S-2', '2100', '100.5'),
    ]);
    await ingestClosedSession(t, token, 'journal', [line('S-3', '1350', '7'), line('S-3', '8100', '-7')]);
    await t.services.processor.drain();
    const balances = await createAccountingStore(t.store).balances({});
    expect(balances.map((b) => [b.account, b.balance])).toEqual([
      ['1300', '0.00'],
      ['1350', '7'],
      ['2100', '0.00'],
      ['8100', '-7'],
    ]);
    await expectBalancesKept(t.store, AS_OF, FILTERS);
  });
});

/** The URL of the PostgreSQL database a test app's store is on, for a second store on it. */
async function urlOf(store: Store): Promise<string> {
  const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(store.db);
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${rows[0]?.name}`;
  return url.toString();
}

/**
 * Two processors, each with its own store (as two service instances), process one backlog and
 * post at once: writers add to the same balance rows concurrently, and the balances still equal
 * the lines: the row-lock order of `balances.ts` at work (a deadlock would fail a chunk as
 * `processing-failed` after its attempts, or throw). PostgreSQL only: SQLite has one writer.
 */
describe.runIf(TEST_DIALECT === 'postgres')('balances kept by two processors at once', () => {
  let t: TestApp;
  let second: { store: Store; services: ServicesProcessingHere } | undefined;
  beforeAll(async () => {
    t = await createTestApp();
    t.clock.set('2026-11-20T15:00:00Z');
    const store = openStore(await urlOf(t.store));
    second = {
      store,
      services: createServices(
        store,
        t.clock,
        { accessTokenTtlSeconds: 300, refreshTokenTtlSeconds: 1800, businessDate: undefined },
        { processing: 'here' },
      ),
    };
  });
  afterAll(async () => {
    await second?.store.close();
    await t?.close();
  });

  it('equal the posted lines after both processed one backlog and posted at once', async () => {
    await uploadConfiguration(t);
    for (const seed of [11, 12, 13]) await ingest(t, seed);
    const other = second?.services.processor;
    if (other === undefined) throw new Error('no second processor');
    const processed = await Promise.all([
      t.services.processor.drain(),
      other.drain(),
      t.services.processor.drain(),
      other.drain(),
    ]);
    // A drain that finds its next chunk taken by the other processor ends its round; what the
    // rounds left waiting is taken by the next one (as the poll does), and every record is
    // processed exactly once in all.
    processed.push(await t.services.processor.drain(), await other.drain());
    expect(processed.reduce((a, b) => a + b, 0)).toBe(3 * 4 * 30 + 3 * 2 * 16);
    const failed = await t.store.db
      .selectFrom('processing_errors')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('code', '=', 'processing-failed')
      .executeTakeFirstOrThrow();
    expect(Number(failed.n)).toBe(0);
    await expectBalancesKept(t.store, AS_OF, FILTERS);
    t.clock.set('2026-11-27T15:00:00Z');
    const posted = await Promise.all([t.services.processor.postDue(), other.postDue()]);
    expect(posted[0] + posted[1]).toBeGreaterThan(0);
    expect(await unposted(t.store)).toBe(0);
    expect(await expectBalancesKept(t.store, AS_OF, FILTERS)).toBeGreaterThan(4);
  });
});
