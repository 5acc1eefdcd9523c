import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JournalFilter } from '../../src/modules/accounting/store.js';
import { StatisticsService, type TimeRange } from '../../src/modules/statistics/service.js';
import { createAccountingStore } from '../../src/storage/accounting/accounting-store.js';
import { countRows } from '../../src/storage/count.js';
import { up as statisticsCountersUp } from '../../src/storage/migrations/0014-statistics-counters.js';
import { up as countersByFilterUp } from '../../src/storage/migrations/0015-counters-by-filter.js';
import { up as counterStripesUp } from '../../src/storage/migrations/0020-counter-stripes.js';
import { createStatisticsStore, splitByDays } from '../../src/storage/statistics-store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { uploadRealisticConfiguration } from '../helpers/fixtures.js';
import { seededRandom } from '../helpers/random.js';
import { businessEvent, loanRecord } from '../helpers/records.js';
import { fullCountStatistics } from './statistics-oracle.js';

const at = (instant: string) => new Date(instant);

/** The ranges compared: open, whole days, and ranges that cut days at either end or within one. */
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
  { from: at('2026-11-18T00:00:00Z'), to: at('2026-12-01T00:00:00Z') },
  { from: at('2026-11-23T05:00:00Z'), to: at('2026-11-25T18:00:00Z') },
];

const byEntity = (a: { namespace: string; entity: string }, b: { namespace: string; entity: string }) =>
  `${a.namespace}/${a.entity}`.localeCompare(`${b.namespace}/${b.entity}`);

/** Every statistics answer from the counters equals the full count, for every range. */
async function expectCountersEqualFullCounts(t: TestApp): Promise<void> {
  const counted = new StatisticsService(createStatisticsStore(t.store), t.clock);
  const full = new StatisticsService(fullCountStatistics(t.store), t.clock);
  for (const range of RANGES) {
    const label = JSON.stringify(range);
    expect(await counted.ingestionMetrics(range), label).toEqual(await full.ingestionMetrics(range));
    expect(await counted.journalMetrics(range), label).toEqual(await full.journalMetrics(range));
    expect(await counted.journalMetricsByDay(range), label).toEqual(await full.journalMetricsByDay(range));
  }
  expect(await counted.processingMetrics()).toEqual((await full.processingMetrics()).sort(byEntity));
  await expectListTotalsEqualFullCounts(t);
}

/** The filters of the journals list whose totals come from the counters (all but a session's). */
const JOURNAL_FILTERS: JournalFilter[] = [
  {},
  { status: 'posted' },
  { status: 'unposted' },
  { accountingConfig: 'IFRS' },
  { accountingConfig: 'LOCAL_GAAP', status: 'posted' },
  { accountingConfig: 'nothing-like-it' },
  { from: '2026-11-20' },
  { to: '2026-11-21' },
  { from: '2026-11-20', to: '2026-11-24', status: 'unposted' },
  { from: '2026-11-21', to: '2026-11-21' },
];

/** The totals of the journals and processing errors lists equal a count of the rows they list. */
async function expectListTotalsEqualFullCounts(t: TestApp): Promise<void> {
  const accounting = createAccountingStore(t.store);
  const configs = await t.store.db.selectFrom('journals').select('accounting_config').distinct().execute();
  const filters: JournalFilter[] = [
    ...JOURNAL_FILTERS,
    ...configs.map((c) => ({ accountingConfig: c.accounting_config })),
  ];
  for (const filter of filters) {
    let rows = t.store.db.selectFrom('journals');
    if (filter.status !== undefined) rows = rows.where('posted', '=', filter.status === 'posted' ? 1 : 0);
    if (filter.accountingConfig !== undefined)
      rows = rows.where('accounting_config', '=', filter.accountingConfig);
    if (filter.from !== undefined) rows = rows.where('core_date', '>=', filter.from);
    if (filter.to !== undefined) rows = rows.where('core_date', '<', filter.to);
    expect(await accounting.countJournals(filter), JSON.stringify(filter)).toBe(await countRows(rows));
  }
  const codes = await t.store.db.selectFrom('processing_errors').select('code').distinct().execute();
  for (const code of [undefined, 'no-such-code', ...codes.map((c) => c.code)]) {
    let rows = t.store.db.selectFrom('processing_errors');
    if (code !== undefined) rows = rows.where('code', '=', code);
    expect(await accounting.countProcessingErrors({ code }), String(code)).toBe(await countRows(rows));
  }
}

/** A random workload through the API and the processor, the clock moving on between steps. */
async function runWorkload(t: TestApp, seed: number, steps: number): Promise<void> {
  const next = seededRandom(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)] as T;
  const credential = await t.credentialFor(['bulk-operator']);
  // A token per call: the clock moves on by hours, past a token's lifetime.
  const call = async (method: 'POST' | 'PATCH', url: string, payload: object) => {
    const { access_token: token } = await t.services.tokens.clientCredentialsGrant(credential);
    return t.call(token, { method, url, payload });
  };
  const open: { id: string; entity: string }[] = [];
  const dates = ['2026-11-19', '2026-11-20', '2026-11-21', '2026-11-23', '2026-11-24', '2026-11-26'];
  const event = () =>
    businessEvent({
      eventType: pick(['LOAN_DISBURSEMENT', 'INTEREST_ACCRUAL', 'FEE_CHARGED', 'FEE_CHARGED', 'NOPE']),
      effectiveDate: pick(dates),
      amount: pick(['10.00', '7', '1234.5', 'not a number']),
      ...pick([
        { legalEntity: 'LF_NL', branch: 'AMS' },
        { legalEntity: 'LF_US', branch: 'NYC' },
        { legalEntity: 'LF_NL', branch: 'RTM' },
      ]),
    });
  for (let step = 0; step < steps; step++) {
    t.clock.advance(Math.floor(next() * 5 * 3_600_000));
    const action = next();
    if (action < 0.22 || open.length === 0) {
      const entity = pick(['businessEvent', 'businessEvent', 'loanTransaction']);
      const namespace = entity === 'loanTransaction' ? 'loans' : 'ledger';
      const response = await call('POST', '/api/v1/ingestions', {
        namespace,
        entity,
        timeout: pick(['PT1S', 'PT2H', 'P1D', 'P3D']),
      });
      expect(response.statusCode, response.body).toBe(201);
      open.push({ id: response.json().ingestionId as string, entity });
    } else if (action < 0.55) {
      const session = pick(open);
      const data = Array.from({ length: 1 + Math.floor(next() * 6) }, (_, i) =>
        session.entity === 'loanTransaction' ? loanRecord(i, next() < 0.2 ? { amount: 'bad' } : {}) : event(),
      );
      const partial = next() < 0.6 ? '?partial=true' : '';
      // Stored, rejected (an atomic chunk with a failed record) or refused (an expired session).
      await call('POST', `/api/v1/ingestions/${session.id}${partial}`, { data });
    } else if (action < 0.68) {
      const session = pick(open);
      await call('PATCH', `/api/v1/ingestions/${session.id}`, { state: 'closed' });
      open.splice(open.indexOf(session), 1);
    } else if (action < 0.82) {
      await t.services.processor.drain();
    } else if (action < 0.9) {
      await t.services.processor.postDue();
    } else {
      const waiting = await t.store.db
        .selectFrom('records')
        .where('processing', '=', 1)
        .select(['ingestion_id', 'chunk_seq'])
        .limit(1)
        .executeTakeFirst();
      if (waiting !== undefined) {
        const failed = await createAccountingStore(t.store).failChunk(
          { ingestionId: waiting.ingestion_id, chunkSeq: Number(waiting.chunk_seq) },
          t.clock.now().toISOString(),
          { code: 'processing-failed', message: 'a fault of the test' },
        );
        expect(failed).toBeGreaterThan(0);
      }
    }
  }
}

describe('splitByDays', () => {
  it('splits a range into whole days and the parts of days at its ends', () => {
    expect(splitByDays({})).toEqual({ wholeDays: {}, partial: [] });
    expect(splitByDays({ from: '2026-11-20T00:00:00.000Z', to: '2026-11-22T00:00:00.000Z' })).toEqual({
      wholeDays: { from: '2026-11-20', to: '2026-11-22' },
      partial: [],
    });
    expect(splitByDays({ from: '2026-11-20T07:00:00.000Z', to: '2026-11-22T01:00:00.000Z' })).toEqual({
      wholeDays: { from: '2026-11-21', to: '2026-11-22' },
      partial: [
        { from: '2026-11-20T07:00:00.000Z', to: '2026-11-21T00:00:00.000Z' },
        { from: '2026-11-22T00:00:00.000Z', to: '2026-11-22T01:00:00.000Z' },
      ],
    });
    expect(splitByDays({ from: '2026-11-20T07:00:00.000Z', to: '2026-11-21T01:00:00.000Z' })).toEqual({
      wholeDays: undefined,
      partial: [{ from: '2026-11-20T07:00:00.000Z', to: '2026-11-21T01:00:00.000Z' }],
    });
    expect(splitByDays({ from: '2026-11-21T07:00:00.000Z', to: '2026-11-20T01:00:00.000Z' })).toEqual({
      wholeDays: undefined,
      partial: [],
    });
  });
});

/**
 * The statistics are read from counters kept with the writes (issue 22): after random workloads
 * (sessions opened, closed and expired by the manual clock, chunks stored and rejected, events
 * processed with and without errors, chunks failed, future journals posted as their dates come,
 * a wipe) every answer equals the full count of the stored rows, for ranges that cut days too.
 */
describe('statistics counters', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    t.clock.set('2026-11-19T21:00:00Z');
    await uploadRealisticConfiguration(t);
  });
  afterAll(async () => t?.close());

  it('equal the full counts after random workloads and a wipe', async () => {
    await expectCountersEqualFullCounts(t);
    await runWorkload(t, 1, 40);
    await expectCountersEqualFullCounts(t);
    await runWorkload(t, 2, 40);
    await t.services.processor.drain();
    await expectCountersEqualFullCounts(t);
    t.clock.advance(3 * 86_400_000);
    expect(await t.services.processor.postDue()).toBeGreaterThanOrEqual(0);
    await expectCountersEqualFullCounts(t);
    const journals = await t.store.db
      .selectFrom('journals')
      .where('posted', '=', 1)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(journals.n)).toBeGreaterThan(0);
    const errors = await t.store.db
      .selectFrom('processing_errors')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(errors.n)).toBeGreaterThan(0);

    // The workloads did what the comparison is about: chunks rejected, chunks failed, journals posted.
    const rejected = await t.store.db
      .selectFrom('chunks')
      .where('rejected', '=', 1)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(rejected.n)).toBeGreaterThan(0);
    const failed = await t.store.db
      .selectFrom('processing_errors')
      .where('code', '=', 'processing-failed')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(failed.n)).toBeGreaterThan(0);
    await uploadRealisticConfiguration(t);
    await expectCountersEqualFullCounts(t);
    t.clock.set('2026-11-20T06:00:00Z');
    await runWorkload(t, 3, 30);
    await t.services.processor.drain();
    await expectCountersEqualFullCounts(t);
  });

  it('are filled by their migration from the rows already stored', async () => {
    await runWorkload(t, 4, 40);
    await expectCountersEqualFullCounts(t);
    // The state before migration 0014 on the same rows: no counter tables, no index.
    await t.store.db.schema.dropIndex('processing_errors_created_at').execute();
    for (const table of ['journal_day_counts', 'processing_error_days', 'entity_record_counts'])
      await t.store.db.schema.dropTable(table).execute();
    await statisticsCountersUp(t.store.db as unknown as Kysely<unknown>);
    await countersByFilterUp(t.store.db as unknown as Kysely<unknown>);
    await expectCountersEqualFullCounts(t);
    // Then the striping of the counters (0020), which sums them into their first stripe; the
    // session counters are striped already, and their keys' names are taken on PostgreSQL.
    if (t.store.dialect === 'postgres')
      for (const table of ['session_day_counts', 'session_entity_counts'])
        await sql`alter table ${sql.table(table)} drop constraint ${sql.ref(`${table}_stripe_key`)}`.execute(
          t.store.db,
        );
    await counterStripesUp(t.store.db as unknown as Kysely<unknown>, t.store.dialect);
    await expectCountersEqualFullCounts(t);
    await runWorkload(t, 5, 20);
    await t.services.processor.drain();
    await expectCountersEqualFullCounts(t);
  });
});
