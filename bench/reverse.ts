import { performance } from 'node:perf_hooks';
import { BUSINESS_EVENT_ENTITY_NAME, LEDGER_NAMESPACE } from '../src/modules/configuration/model.js';
import { businessEventChunks } from './data.js';
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
  uploadBenchConfiguration,
  withService,
} from './service.js';

/** Issue 24: a reversal of 100,000 journals. */
export const REVERSE_JOURNALS_DEFAULT = 100_000;
/**
 * Journals per business event of `businessEventRecords`: its three event types and two nodes in
 * turn make 12 journals per 6 events (the reversing accrual doubles its journals, the New York
 * node has one accounting configuration).
 */
const JOURNALS_PER_EVENT = 2;
/** Events per chunk sent, as `ledgerflow ingest` sends them (half of CHUNK_RECORDS_MAX). */
const EVENTS_PER_CHUNK = 5_000;
const CLIENTS = 4;
const POLL_INTERVAL_MS = 100;
/** A processing that takes longer is reported as unfinished. */
const DEADLINE_MS = 30 * 60_000;
/** A reversal runs at no less than half the rate of the processing that posted its journals. */
const RATE_RATIO_MIN = 0.5;
const RATE_RATIO_GOAL = 1.0;
const MS_PER_SECOND = 1000;

interface Measured {
  storage: string;
  journals: number;
  processingMs: number;
  reversalMs: number;
  reversed: number;
  lines: number;
}

/** The journals of a session, counted by the journals list. */
async function journalsOf(service: BenchService, ingestionId: string): Promise<number> {
  const answer = await service.request('GET', `/api/v1/journals?ingestionId=${ingestionId}&limit=1`);
  expectStatus(answer, 200, 'GET /api/v1/journals');
  return (answer.body as { totalSize: number }).totalSize;
}

async function measure(service: BenchService, journals: number): Promise<Measured> {
  await uploadBenchConfiguration(service);
  const events = Math.ceil(journals / JOURNALS_PER_EVENT);
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
  const posted = await journalsOf(service, ingestionId);
  const startMs = performance.now();
  const answer = await service.request('POST', '/api/v1/reversals', {
    selection: { ingestionId },
    reason: 'benchmark: the whole session withdrawn',
  });
  const reversalMs = performance.now() - startMs;
  expectStatus(answer, 201, 'POST /api/v1/reversals');
  const body = answer.body as { journals: number; lines: number };
  if (body.journals !== posted) throw new Error(`${body.journals} of ${posted} journals reversed`);
  return {
    storage: service.storage,
    journals: posted,
    processingMs: processed.atMs - timing.startMs,
    reversalMs,
    reversed: body.journals,
    lines: body.lines,
  };
}

/**
 * `npm run bench -- reverse`: business events that post about 100,000 journals are sent as one
 * session and processed (journals per second, from the first chunk sent to the session
 * processed, ingestion included), then one reversal request withdraws every journal of the
 * session (journals per second, request to answer: one transaction).
 */
export async function runReverse(context: RunContext, dialects: readonly Dialect[]): Promise<Section[]> {
  const sections: Section[] = [];
  for (const dialect of dialects) {
    const stamp = stampNow();
    const measured = await withService(dialect, (service) => measure(service, REVERSE_JOURNALS_DEFAULT));
    const processingRate = (measured.journals / measured.processingMs) * MS_PER_SECOND;
    const rate = (measured.reversed / measured.reversalMs) * MS_PER_SECOND;
    const ratio = rate / processingRate;
    const markdown = [
      ...sectionHead({
        title: `Reversal of posted journals (${DIALECT_TITLE[dialect]})`,
        machine: context.machine,
        storage: measured.storage,
        command: context.command,
        stamp,
      }),
      ...table(
        ['measure', 'value', 'target', 'verdict'],
        [
          [
            'processing that posted them (ingestion included)',
            `${formatNumber(measured.journals)} journals in ${formatNumber(measured.processingMs / MS_PER_SECOND, 1)} s: ${formatNumber(processingRate)} journals/s`,
            '',
            '',
          ],
          [
            'one reversal request by session (request to answer, one transaction)',
            `${formatNumber(measured.reversed)} reversal journals (${formatNumber(measured.lines)} lines) in ${formatNumber(measured.reversalMs / MS_PER_SECOND, 1)} s: ${formatNumber(rate)} journals/s`,
            '',
            '',
          ],
          [
            'reversal / processing (journals/s)',
            formatNumber(ratio, 2),
            `≥ ${formatNumber(RATE_RATIO_MIN, 1)}, goal ≥ ${formatNumber(RATE_RATIO_GOAL, 1)}`,
            verdictOf(ratio, RATE_RATIO_MIN, RATE_RATIO_GOAL),
          ],
        ],
      ),
    ].join('\n');
    console.log(`\n${markdown}\n`);
    sections.push({ id: `reverse-${dialect}`, markdown });
  }
  return sections;
}
