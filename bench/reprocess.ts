import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { BUSINESS_EVENT_ENTITY_NAME, LEDGER_NAMESPACE } from '../src/modules/configuration/model.js';
import { benchConfiguration, businessEventChunks } from './data.js';
import {
  DIALECT_TITLE,
  formatNumber,
  type RunContext,
  type Section,
  sectionHead,
  stampNow,
  table,
  verdictOf,
} from './report.js';
import {
  awaitProcessed,
  type BenchService,
  closeSession,
  type Dialect,
  expectStatus,
  getSession,
  openSession,
  postChunks,
  withService,
} from './service.js';

/** Issue 23: 100,000 failed business events reprocessed. */
export const REPROCESS_EVENTS_DEFAULT = 100_000;
/** Events per chunk sent, as `ledgerflow ingest` sends them (half of CHUNK_RECORDS_MAX). */
const EVENTS_PER_CHUNK = 5_000;
const CLIENTS = 4;
const POLL_INTERVAL_MS = 100;
/** A first processing or a run that takes longer is reported as unfinished. */
const DEADLINE_MS = 30 * 60_000;
/** Reprocessing runs at no less than half the rate of a first processing that posts. */
const RATE_RATIO_MIN = 0.5;
const RATE_RATIO_GOAL = 1.0;
const MS_PER_SECOND = 1000;

/** The benchmark configuration with no account for any posting code: every event fails `no-account`. */
function failingConfiguration() {
  const body = benchConfiguration();
  const lookups = body.configuration.accountLookups as { accountLookupPatterns: unknown[] }[];
  for (const lookup of lookups) lookup.accountLookupPatterns = [];
  return body;
}

/** Adds the lookups back by an upload that keeps the processing data. */
async function addLookupsKeepingData(service: BenchService): Promise<void> {
  const answer = await service.request(
    'PUT',
    '/api/v1/configuration/bulk?keep=processing-data',
    benchConfiguration(),
  );
  expectStatus(answer, 200, 'PUT /api/v1/configuration/bulk?keep=processing-data');
}

interface Run {
  id: number;
  state: string;
  queued: number;
  posted: number;
  stillFailing: number;
  stillFailingByCode: Record<string, number>;
}

interface Measured {
  storage: string;
  events: number;
  firstMs: number;
  reprocessMs: number;
  postingMs: number;
  run: Run;
}

/**
 * Sends `events` business events as one session (CLIENTS chunks at a time) and waits until they
 * are processed; returns the time from the first chunk sent to the session processed.
 */
async function ingestAndProcess(service: BenchService, events: number): Promise<number> {
  const ingestionId = await openSession(service, LEDGER_NAMESPACE, BUSINESS_EVENT_ENTITY_NAME);
  const timing = await postChunks(
    service,
    ingestionId,
    businessEventChunks(events, Math.max(1, Math.round(events / EVENTS_PER_CHUNK))),
    CLIENTS,
  );
  await closeSession(service, ingestionId);
  const processed = await awaitProcessed(service, ingestionId, timing.startMs, {
    pollMs: POLL_INTERVAL_MS,
    deadlineMs: DEADLINE_MS,
  });
  if (processed === undefined) throw new Error(`session ${ingestionId} was not processed in time`);
  const session = await getSession(service, ingestionId);
  if (session.successRows !== events) throw new Error(`${session.successRows} of ${events} events stored`);
  return processed.atMs - timing.startMs;
}

async function measure(service: BenchService, events: number): Promise<Measured> {
  expectStatus(
    await service.request('PUT', '/api/v1/configuration/bulk', failingConfiguration()),
    200,
    'PUT /api/v1/configuration/bulk',
  );
  const firstMs = await ingestAndProcess(service, events);
  await addLookupsKeepingData(service);
  const startMs = performance.now();
  const started = await service.request('POST', '/api/v1/processing-errors/reprocess', { all: true });
  expectStatus(started, 202, 'POST /api/v1/processing-errors/reprocess');
  let run = started.body as Run;
  while (run.state !== 'finished') {
    if (performance.now() - startMs > DEADLINE_MS) throw new Error(`run ${run.id} did not finish in time`);
    await sleep(POLL_INTERVAL_MS);
    const answer = await service.request('GET', `/api/v1/processing-errors/reprocess-runs/${run.id}`);
    expectStatus(answer, 200, 'GET a reprocessing run');
    run = answer.body as Run;
  }
  const reprocessMs = performance.now() - startMs;
  // The same events once more, now that they post: the rate of a first processing that posts.
  const postingMs = await ingestAndProcess(service, events);
  return { storage: service.storage, events, firstMs, reprocessMs, postingMs, run };
}

/**
 * `npm run bench -- reprocess [--reprocess-events N]`: `N` business events (100,000 by default)
 * fail processing for want of account lookups, the lookups are added without wiping, and one run
 * reprocesses them all (records per second, from the request to the run finished). The run is
 * compared with a first processing of the same events that posts, sent again once the lookups are
 * in place (events per second, from the first chunk sent to the session processed): a first
 * processing that fails writes one error row per event and no journal, so it says how fast
 * failing is, not what reprocessing costs beside processing; it is shown too.
 */
export async function runReprocess(
  context: RunContext,
  dialects: readonly Dialect[],
  events: number,
): Promise<Section[]> {
  const sections: Section[] = [];
  for (const dialect of dialects) {
    const stamp = stampNow();
    const measured = await withService(dialect, (service) => measure(service, events));
    const firstRate = (measured.events / measured.firstMs) * MS_PER_SECOND;
    const postingRate = (measured.events / measured.postingMs) * MS_PER_SECOND;
    const reprocessed = measured.run.posted + measured.run.stillFailing;
    const rate = (reprocessed / measured.reprocessMs) * MS_PER_SECOND;
    const ratio = rate / postingRate;
    const markdown = [
      ...sectionHead({
        title: `Reprocessing of failed records (${DIALECT_TITLE[dialect]})`,
        machine: context.machine,
        storage: measured.storage,
        command: context.command,
        stamp,
      }),
      ...table(
        ['measure', 'value', 'target', 'verdict'],
        [
          [
            'first processing (ingestion included; every event fails no-account)',
            `${formatNumber(measured.events)} events in ${formatNumber(measured.firstMs / MS_PER_SECOND, 1)} s: ${formatNumber(firstRate)} events/s`,
            '',
            '',
          ],
          [
            'reprocessing run (request to run finished)',
            `${formatNumber(reprocessed)} records in ${formatNumber(measured.reprocessMs / MS_PER_SECOND, 1)} s: ${formatNumber(rate)} records/s; ${formatNumber(measured.run.posted)} posted, ${formatNumber(measured.run.stillFailing)} still failing`,
            '',
            '',
          ],
          [
            'first processing that posts (the same events again, lookups in place, ingestion included)',
            `${formatNumber(measured.events)} events in ${formatNumber(measured.postingMs / MS_PER_SECOND, 1)} s: ${formatNumber(postingRate)} events/s`,
            '',
            '',
          ],
          [
            'reprocessing / first processing that fails (records/s)',
            formatNumber(rate / firstRate, 2),
            '',
            '',
          ],
          [
            'reprocessing / first processing that posts (records/s)',
            formatNumber(ratio, 2),
            `≥ ${formatNumber(RATE_RATIO_MIN, 1)}, goal ≥ ${formatNumber(RATE_RATIO_GOAL, 1)}`,
            verdictOf(ratio, RATE_RATIO_MIN, RATE_RATIO_GOAL),
          ],
        ],
      ),
    ].join('\n');
    console.log(`\n${markdown}\n`);
    sections.push({ id: `reprocess-${dialect}`, markdown });
  }
  return sections;
}
