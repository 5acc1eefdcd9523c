import {
  BUSINESS_EVENT_ENTITY_NAME,
  BUSINESS_EVENT_ROLLBACK_ENTITY_NAME,
  LEDGER_NAMESPACE,
} from '../src/modules/configuration/model.js';
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

/** Business events posted, then rolled back; small enough that a dialect's run stays short. */
const ROLLBACK_EVENTS = 20_000;
/** Events per chunk sent, as `ledgerflow ingest` sends them (half of CHUNK_RECORDS_MAX). */
const EVENTS_PER_CHUNK = 5_000;
const CLIENTS = 4;
const POLL_INTERVAL_MS = 100;
const DEADLINE_MS = 10 * 60_000;
/** Rollbacks at no less than half the rate of the processing that posted the events. */
const RATE_RATIO_MIN = 0.5;
const RATE_RATIO_GOAL = 1.0;
const MS_PER_SECOND = 1000;

/**
 * Sends the benchmark's first `events` business events as one session of `entity` and waits
 * until they are processed; returns the time from the first chunk sent to the session processed,
 * and how many records failed processing.
 */
async function sendAndProcess(
  service: BenchService,
  entity: string,
  events: number,
): Promise<{ ms: number; failed: number }> {
  const ingestionId = await openSession(service, LEDGER_NAMESPACE, entity);
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
  if (session.successRows !== events) throw new Error(`${session.successRows} of ${events} records stored`);
  const errors = await service.request('GET', `/api/v1/processing-errors?ingestionId=${ingestionId}&limit=1`);
  expectStatus(errors, 200, 'GET /api/v1/processing-errors');
  return { ms: processed.atMs - timing.startMs, failed: (errors.body as { totalSize: number }).totalSize };
}

/**
 * `npm run bench -- rollback`: ROLLBACK_EVENTS business events are posted (events per second,
 * from the first chunk sent to the session processed), then the same events are sent as
 * `ledger/businessEventRollback` records, each finding its twin by fingerprint and withdrawing
 * its journals with reversal journals (records per second, measured alike). The rollback rate is
 * compared with the processing rate.
 */
export async function runRollback(context: RunContext, dialects: readonly Dialect[]): Promise<Section[]> {
  const sections: Section[] = [];
  for (const dialect of dialects) {
    const stamp = stampNow();
    const measured = await withService(dialect, async (service) => {
      expectStatus(
        await service.request('PUT', '/api/v1/configuration/bulk', benchConfiguration()),
        200,
        'PUT /api/v1/configuration/bulk',
      );
      const posting = await sendAndProcess(service, BUSINESS_EVENT_ENTITY_NAME, ROLLBACK_EVENTS);
      const rollback = await sendAndProcess(service, BUSINESS_EVENT_ROLLBACK_ENTITY_NAME, ROLLBACK_EVENTS);
      return { storage: service.storage, posting, rollback };
    });
    if (measured.posting.failed > 0 || measured.rollback.failed > 0) {
      throw new Error(
        `${measured.posting.failed} events failed processing and ${measured.rollback.failed} rollbacks failed`,
      );
    }
    const postingRate = (ROLLBACK_EVENTS / measured.posting.ms) * MS_PER_SECOND;
    const rollbackRate = (ROLLBACK_EVENTS / measured.rollback.ms) * MS_PER_SECOND;
    const ratio = rollbackRate / postingRate;
    const markdown = [
      ...sectionHead({
        title: `Rollback of business events (${DIALECT_TITLE[dialect]})`,
        machine: context.machine,
        storage: measured.storage,
        command: context.command,
        stamp,
      }),
      ...table(
        ['measure', 'value', 'target', 'verdict'],
        [
          [
            'processing that posts (ingestion included)',
            `${formatNumber(ROLLBACK_EVENTS)} events in ${formatNumber(measured.posting.ms / MS_PER_SECOND, 1)} s: ${formatNumber(postingRate)} events/s`,
            '',
            '',
          ],
          [
            'rollback of the same events (ingestion included; each withdraws its twin’s journals)',
            `${formatNumber(ROLLBACK_EVENTS)} records in ${formatNumber(measured.rollback.ms / MS_PER_SECOND, 1)} s: ${formatNumber(rollbackRate)} records/s`,
            '',
            '',
          ],
          [
            'rollback / processing (records/s)',
            formatNumber(ratio, 2),
            `≥ ${formatNumber(RATE_RATIO_MIN, 1)}, goal ≥ ${formatNumber(RATE_RATIO_GOAL, 1)}`,
            verdictOf(ratio, RATE_RATIO_MIN, RATE_RATIO_GOAL),
          ],
        ],
      ),
    ].join('\n');
    console.log(`\n${markdown}\n`);
    sections.push({ id: `rollback-${dialect}`, markdown });
  }
  return sections;
}
