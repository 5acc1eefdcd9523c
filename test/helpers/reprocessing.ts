import { expect } from 'vitest';
import type { ManualClock } from '../../src/lib/clock.js';
import { StatisticsService } from '../../src/modules/statistics/service.js';
import { createAccountingStore } from '../../src/storage/accounting/accounting-store.js';
import { createReprocessStore } from '../../src/storage/accounting/reprocess-store.js';
import { createStatisticsStore } from '../../src/storage/statistics-store.js';
import type { Store } from '../../src/storage/store.js';
import { fullCountStatistics } from '../storage/statistics-oracle.js';
import type { TestApp } from './app.js';
import { ingestClosedSession, realisticConfiguration } from './fixtures.js';
import { businessEvent } from './records.js';

/** The posting code whose account lookup the failing configuration leaves out. */
export const MISSING_POSTING_CODE = 'LOAN_PRINCIPAL';

/** The realistic configuration with no account for MISSING_POSTING_CODE (an empty lookup). */
export function configurationWithoutLookup(): ReturnType<typeof realisticConfiguration> {
  const document = realisticConfiguration();
  const lookups = document.configuration.accountLookups as {
    postingCode: string;
    accountLookupPatterns: unknown[];
  }[];
  for (const lookup of lookups)
    if (lookup.postingCode === MISSING_POSTING_CODE) lookup.accountLookupPatterns = [];
  return document;
}

/**
 * Uploads the configuration without the lookup, sends `count` loan disbursements as one closed
 * session and processes them: each fails with `no-account`. Returns the session id.
 */
export async function failForMissingLookup(t: TestApp, token: string, count: number): Promise<string> {
  const put = await t.call(token, {
    method: 'PUT',
    url: '/api/v1/configuration/bulk',
    payload: configurationWithoutLookup(),
  });
  expect(put.statusCode, put.body).toBe(200);
  const events = Array.from({ length: count }, (_, i) => businessEvent({ amount: `${1000 + i}.00` }));
  const ingestionId = await ingestClosedSession(t, token, 'businessEvent', events);
  await t.services.processor.drain();
  return ingestionId;
}

/** Adds the missing lookup by an upload that keeps every session, record, journal and error. */
export async function addLookupKeepingData(t: TestApp, token: string): Promise<void> {
  const put = await t.call(token, {
    method: 'PUT',
    url: '/api/v1/configuration/bulk?keep=processing-data',
    payload: realisticConfiguration(),
  });
  expect(put.statusCode, put.body).toBe(200);
}

/** The open processing errors, counted row by row. */
export async function openErrorRows(store: Store): Promise<number> {
  const row = await store.db
    .selectFrom('processing_errors')
    .where('state', '=', 'open')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Journals per record of `ingestionId`: a record posted twice would show 2 × its journals. */
export async function journalsPerRecord(store: Store, ingestionId: string): Promise<Map<number, number>> {
  const rows = await store.db
    .selectFrom('journals')
    .where('ingestion_id', '=', ingestionId)
    .select((eb) => ['record_id', eb.fn.countAll().as('n')])
    .groupBy('record_id')
    .execute();
  return new Map(rows.map((r) => [Number(r.record_id), Number(r.n)]));
}

/**
 * The statistics read from counters equal full counts of the rows (open processing errors
 * only), the processing errors list's totals equal the open rows, and the errors by state equal
 * a count of each state.
 */
export async function expectCountersEqualCounts(store: Store, clock: ManualClock): Promise<void> {
  const counted = new StatisticsService(createStatisticsStore(store), clock);
  const full = new StatisticsService(fullCountStatistics(store), clock);
  const byEntity = (a: { entity: string }, b: { entity: string }) => a.entity.localeCompare(b.entity);
  expect((await counted.processingMetrics()).sort(byEntity)).toEqual(
    (await full.processingMetrics()).sort(byEntity),
  );
  expect(await counted.journalMetrics({})).toEqual(await full.journalMetrics({}));
  expect(await counted.journalMetricsByDay({})).toEqual(await full.journalMetricsByDay({}));
  const accounting = createAccountingStore(store);
  expect(await accounting.countProcessingErrors({})).toBe(await openErrorRows(store));
  // The errors by state (`/metrics`, the reprocessing statistics) from their counters.
  const byState = await store.db
    .selectFrom('processing_errors')
    .select((eb) => ['state', eb.fn.countAll().as('n')])
    .groupBy('state')
    .execute();
  const rowsIn = (state: string) => Number(byState.find((r) => r.state === state)?.n ?? 0);
  expect(await createReprocessStore(store).countByState()).toEqual({
    open: rowsIn('open'),
    queued: rowsIn('queued'),
    closed: rowsIn('closed'),
  });
  const sessions = await store.db
    .selectFrom('ingestions')
    .select(['ingestion_id', 'processed_rows', 'processing_failed_rows'])
    .execute();
  for (const s of sessions) {
    const failed = await store.db
      .selectFrom('processing_errors')
      .where('ingestion_id', '=', s.ingestion_id)
      .where('state', '=', 'open')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(s.processing_failed_rows)).toBe(Number(failed.n));
  }
}
