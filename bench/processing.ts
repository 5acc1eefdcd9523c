import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { BUSINESS_EVENT_ENTITY_NAME, LEDGER_NAMESPACE } from '../src/modules/configuration/model.js';
import { businessEventChunks, type ChunkBody } from './data.js';
import {
  ENGINE_PASSES,
  LIMIT_ROUNDS,
  LIMIT_WARMUP_CHUNKS,
  type LimitRound,
  measureLimitRound,
} from './processing-limit.js';
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
  type BenchService,
  closeSession,
  type Dialect,
  getSession,
  openSession,
  PROCESSED_STATUSES,
  percentile,
  postChunks,
  uploadBenchConfiguration,
  withService,
} from './service.js';

/** Issue 5: 40,000 business events ingested in 20 chunks. */
const EVENTS = 40_000;
const CHUNKS = 20;
const CLIENTS = 4;
/** How often the session is asked whether processing has finished; bounds the timing error. */
const POLL_INTERVAL_MS = 100;
/** Processing that takes longer than this is reported as unfinished. */
const PROCESSING_DEADLINE_MS = 120_000;
/** A closed session still `pending` (nothing processed) this long means there is no processor. */
const PROCESSING_STALL_MS = 15_000;
/** Issue 5: processing keeps up with at least half the ingestion rate; the goal is all of it. */
const INGESTION_RATIO_MIN = 0.5;
const INGESTION_RATIO_GOAL = 1.0;
/** The engine takes at most this share of the processing limit, so storage sets the pace. */
const ENGINE_SHARE_MAX = 0.25;
const MS_PER_SECOND = 1000;
const PERCENT = 100;

type Outcome =
  | { kind: 'finished'; status: string; endMs: number }
  | { kind: 'no-processor' }
  | { kind: 'deadline'; status: string };

/** Polls the session until processing has finished, never moved, or ran out of time. */
async function awaitProcessing(
  service: BenchService,
  ingestionId: string,
  startMs: number,
): Promise<Outcome> {
  const closedMs = performance.now();
  for (;;) {
    const session = await getSession(service, ingestionId);
    const nowMs = performance.now();
    if (PROCESSED_STATUSES.has(session.processingStatus)) {
      return { kind: 'finished', status: session.processingStatus, endMs: nowMs };
    }
    if (session.processingStatus === 'pending' && nowMs - closedMs > PROCESSING_STALL_MS) {
      return { kind: 'no-processor' };
    }
    if (nowMs - startMs > PROCESSING_DEADLINE_MS)
      return { kind: 'deadline', status: session.processingStatus };
    await sleep(POLL_INTERVAL_MS);
  }
}

interface JournalMetrics {
  postedJournals: number;
  unpostedJournals: number;
  totalJournalLines: number;
  errors: number;
}

async function journalMetrics(service: BenchService): Promise<JournalMetrics | undefined> {
  const answer = await service.request('GET', '/api/v1/statistics/operational-dashboard/journal-metrics');
  return answer.status === 200 ? (answer.body as JournalMetrics) : undefined;
}

interface ProcessingRun {
  storage: string;
  ingestMs: number;
  chunkLatenciesMs: number[];
  outcome: Outcome;
  startMs: number;
  metrics: JournalMetrics | undefined;
}

async function measureProcessing(
  service: BenchService,
  bodies: readonly ChunkBody[],
): Promise<ProcessingRun> {
  await uploadBenchConfiguration(service);
  const ingestionId = await openSession(service, LEDGER_NAMESPACE, BUSINESS_EVENT_ENTITY_NAME);
  const timing = await postChunks(service, ingestionId, bodies, CLIENTS);
  await closeSession(service, ingestionId);
  const session = await getSession(service, ingestionId);
  if (session.successRows !== EVENTS) throw new Error(`${session.successRows} of ${EVENTS} events accepted`);
  const outcome = await awaitProcessing(service, ingestionId, timing.startMs);
  return {
    storage: service.storage,
    ingestMs: timing.endMs - timing.startMs,
    chunkLatenciesMs: timing.latenciesMs,
    outcome,
    startMs: timing.startMs,
    metrics: await journalMetrics(service),
  };
}

function resultRows(run: ProcessingRun): string[][] {
  const ingestRate = (EVENTS / run.ingestMs) * MS_PER_SECOND;
  const rows = [
    [
      `ingestion: ${formatNumber(EVENTS)} business events in ${CHUNKS} chunks from ${CLIENTS} clients, first send to last 201`,
      `${formatNumber(ingestRate)} events/s (${formatNumber(run.ingestMs)} ms)`,
      '',
      '',
    ],
    [
      'chunk answer time while the processor runs (p50 / max of the 20 chunks)',
      `${formatNumber(percentile(run.chunkLatenciesMs, 0.5))} ms / ${formatNumber(Math.max(...run.chunkLatenciesMs))} ms`,
      '',
      '',
    ],
  ];
  const { outcome, metrics } = run;
  const journals = metrics === undefined ? undefined : metrics.postedJournals + metrics.unpostedJournals;
  if (outcome.kind !== 'finished') {
    const why =
      outcome.kind === 'no-processor'
        ? `not available yet: processingStatus stayed \`pending\` for ${PROCESSING_STALL_MS / MS_PER_SECOND} s after the session was closed`
        : `not finished within ${PROCESSING_DEADLINE_MS / MS_PER_SECOND} s (processingStatus \`${outcome.status}\`)`;
    rows.push(['processing: first chunk sent until every event is processed', why, '', '']);
    rows.push([
      'processing / ingestion (events/s)',
      'not available',
      `≥ ${formatNumber(INGESTION_RATIO_MIN, 1)}, goal ≥ ${formatNumber(INGESTION_RATIO_GOAL, 1)}`,
      'not measured',
    ]);
  } else {
    const processMs = outcome.endMs - run.startMs;
    const processRate = (EVENTS / processMs) * MS_PER_SECOND;
    const ratio = processRate / ingestRate;
    rows.push(
      [
        `processing: first chunk sent until the session reports \`${outcome.status}\``,
        `${formatNumber(processRate)} events/s (${formatNumber(processMs)} ms)`,
        '',
        '',
      ],
      [
        'processing / ingestion (events/s)',
        formatNumber(ratio, 2),
        `≥ ${formatNumber(INGESTION_RATIO_MIN, 1)}, goal ≥ ${formatNumber(INGESTION_RATIO_GOAL, 1)}`,
        verdictOf(ratio, INGESTION_RATIO_MIN, INGESTION_RATIO_GOAL),
      ],
    );
    if (journals !== undefined) {
      rows.push([
        'journals over the same interval',
        `${formatNumber((journals / processMs) * MS_PER_SECOND)} journals/s`,
        '',
        '',
      ]);
    }
  }
  rows.push([
    'journals written (journal-metrics: posted + unposted; lines; processing errors)',
    metrics === undefined || journals === undefined
      ? 'not available yet (journal-metrics did not answer 200)'
      : `${formatNumber(journals)} (${formatNumber(metrics.postedJournals)} posted, ${formatNumber(metrics.unpostedJournals)} unposted; ${formatNumber(metrics.totalJournalLines)} lines; ${formatNumber(metrics.errors)} errors)`,
    '',
    '',
  ]);
  return rows;
}

/** The round with the median value of `key`. */
function medianRound(rounds: readonly LimitRound[], key: (round: LimitRound) => number): LimitRound {
  const sorted = [...rounds].sort((a, b) => key(a) - key(b));
  const middle = sorted[Math.floor(sorted.length / 2)];
  if (middle === undefined) throw new Error('no rounds measured');
  return middle;
}

const engineShare = (round: LimitRound) => round.limit.engineMs / round.limit.totalMs;
const percent = (share: number) => `${formatNumber(share * PERCENT)} %`;

function limitRows(rounds: readonly LimitRound[]): string[][] {
  const { limit } = medianRound(rounds, (round) => round.limit.totalMs);
  const share = engineShare(medianRound(rounds, engineShare));
  const { engine } = medianRound(rounds, (round) => round.engine.ms);
  const rate = (count: number, ms: number) => formatNumber((count / ms) * MS_PER_SECOND);
  return [
    [
      `processing limit, in the benchmark process: ${formatNumber(limit.events)} stored business events in ${CHUNKS} chunks read, parsed, run through the engine and their journals and lines inserted, one transaction per chunk`,
      `${rate(limit.events, limit.totalMs)} events/s, ${rate(limit.journals, limit.totalMs)} journals/s (${formatNumber(limit.totalMs)} ms)`,
      '',
      '',
    ],
    [
      'of which: reading and parsing the records / the engine (`processChunk`) / journal and line rows and their inserts / commits and the rest of the transactions',
      `${formatNumber(limit.readMs)} ms / ${formatNumber(limit.engineMs)} ms / ${formatNumber(limit.insertMs)} ms / ${formatNumber(limit.commitMs)} ms`,
      '',
      '',
    ],
    [
      `the engine's share of the limit; per round: ${rounds.map((round) => percent(engineShare(round))).join(', ')}`,
      percent(share),
      `≤ ${percent(ENGINE_SHARE_MAX)}`,
      share <= ENGINE_SHARE_MAX ? 'met' : '**not met**',
    ],
    [
      `the engine alone: \`processChunk\` on the parsed events, ${ENGINE_PASSES} passes over the ${formatNumber(engine.events / ENGINE_PASSES)} events`,
      `${rate(engine.events, engine.ms)} events/s, ${rate(engine.journals, engine.ms)} journals/s (${formatNumber(engine.ms)} ms)`,
      '',
      '',
    ],
    [
      'written by every round, counted in the store afterwards',
      `${formatNumber(limit.journals)} journals, ${formatNumber(limit.lines)} lines, no processing error`,
      '',
      '',
    ],
  ];
}

/**
 * The processing limit of each dialect (bench/processing-limit.ts): `LIMIT_ROUNDS` rounds, each
 * the limit and then the engine alone, reported as medians with the engine's share of the limit.
 */
export async function runProcessingLimit(
  context: RunContext,
  dialects: readonly Dialect[],
): Promise<Section[]> {
  const bodies = businessEventChunks(EVENTS, CHUNKS);
  const sections: Section[] = [];
  for (const dialect of dialects) {
    const stamp = stampNow();
    const rounds: LimitRound[] = [];
    for (let round = 0; round < LIMIT_ROUNDS; round += 1) {
      const measured = await measureLimitRound(dialect, bodies);
      const { limit, engine } = measured;
      console.log(
        `processing limit ${dialect} round ${round + 1}: ${formatNumber(limit.totalMs)} ms (read ${formatNumber(limit.readMs)}, engine ${formatNumber(limit.engineMs)}, inserts ${formatNumber(limit.insertMs)}, commits ${formatNumber(limit.commitMs)}), engine share ${percent(engineShare(measured))}; engine alone ${formatNumber((engine.events / engine.ms) * MS_PER_SECOND)} events/s`,
      );
      rounds.push(measured);
    }
    const markdown = [
      ...sectionHead({
        title: `Processing limit and the accounting engine, ${DIALECT_TITLE[dialect]}`,
        machine: context.machine,
        storage: rounds[0]?.storage ?? dialect,
        command: context.command,
        stamp,
      }),
      ...table(
        ['measure', `result (median of ${LIMIT_ROUNDS} rounds)`, 'target', 'verdict'],
        limitRows(rounds),
      ),
      '',
      `Method. The same ${formatNumber(EVENTS)} business events as the processing benchmark, validated and stored by the project's own chunk validation and \`commitChunk\` into a fresh database (made by \`openStore\` and the migrations, as the service makes its own), untimed. Then, in the benchmark process and on its one thread, each chunk is one transaction: select its records, \`JSON.parse\` each, \`processChunk\` (the engine and the line extras, exactly what the processor hands to the store; the clock read once per chunk, time-ordered ids from \`newTimeOrderedUuid\`), and insert the journals and lines with the project's bulk insert and row shapes (\`storage/bulk-insert.ts\`, \`storage/accounting/rows.ts\`: a prepared single-row INSERT per row on SQLite, \`COPY … FROM STDIN\` per table on PostgreSQL, whose server works in its own process), and add the posted lines to the kept balances (\`storage/accounting/balances.ts\`). Claiming, processed marks and session counters are left out: the limit is the work every processed event needs. Before the timed chunks, ${LIMIT_WARMUP_CHUNKS} chunks of another session go the same way, untimed, so the limit runs warm. The engine's share is its time over the limit's, per round; the engine alone runs right after the limit in the same round, one untimed pass first. ${LIMIT_ROUNDS} rounds, each on a fresh database; the table shows the medians.`,
    ].join('\n');
    console.log(`\n${markdown}\n`);
    sections.push({ id: `processing-limit-${dialect}`, markdown });
  }
  return sections;
}

/** Runs the processing benchmark on each dialect. */
export async function runProcessing(context: RunContext, dialects: readonly Dialect[]): Promise<Section[]> {
  const bodies = businessEventChunks(EVENTS, CHUNKS);
  const sections: Section[] = [];
  for (const dialect of dialects) {
    const stamp = stampNow();
    const run = await withService(dialect, (service) => measureProcessing(service, bodies));
    console.log(`processing ${dialect}: ${run.outcome.kind}`);
    const markdown = [
      ...sectionHead({
        title: `Processing of business events against their ingestion, ${DIALECT_TITLE[dialect]}`,
        machine: context.machine,
        storage: run.storage,
        command: context.command,
        stamp,
      }),
      ...table(['measure', 'result', 'target', 'verdict'], resultRows(run)),
      '',
      `Method. \`${LEDGER_NAMESPACE}/${BUSINESS_EVENT_ENTITY_NAME}\` records valid for the realistic fixture (its event types and nodes in turn, effective date today, decimal-string amounts in EUR), ${EVENTS / CHUNKS} per chunk, sent to one session of a freshly started service; the session is closed after the last 201, then polled every ${POLL_INTERVAL_MS} ms until its processingStatus is \`completed\` or \`completed_with_errors\` (so the end time is late by at most one poll). Processing time counts from the first chunk sent.`,
    ].join('\n');
    console.log(`\n${markdown}\n`);
    sections.push({ id: `processing-${dialect}`, markdown });
  }
  return sections;
}
