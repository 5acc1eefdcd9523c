import { BUSINESS_EVENT_ENTITY_NAME, LEDGER_NAMESPACE } from '../src/modules/configuration/model.js';
import {
  businessEventChunks,
  businessEventRecords,
  type ChunkBody,
  fullChunks,
  TRADE_ENTITY,
  TRADE_NAMESPACE,
  tradeRecord,
} from './data.js';
import {
  measureIngestionRounds,
  measureMemory,
  medianOf,
  mibPerSecond,
  recordsPerSecond,
  type Throughput,
} from './ingestion.js';
import { BUSY_IDLE_P99_RATIO_MAX, measureBusyIdle } from './ingestion-under-processing.js';
import { type LimitRound, measureLimitRound } from './processing-limit.js';
import {
  DIALECT_TITLE,
  formatNumber,
  type RunContext,
  type Section,
  sectionHead,
  stampNow,
  table,
} from './report.js';
import {
  awaitProcessed,
  type BenchService,
  closeSession,
  type Dialect,
  openSession,
  percentile,
  postChunks,
  uploadBenchConfiguration,
  withService,
} from './service.js';

/**
 * Processing as fast as storage allows, on both cores, without slowing ingestion: the five
 * figures of issue 11, each from rounds of one run per dialect, so that every ratio compares
 * measurements taken under the same load of the shared machine.
 *
 * 1. The processing limit (processing-limit.ts) and the engine's share of it.
 * 2. End to end: business events sent over HTTP from the first chunk until the session is
 *    `completed`, against the limit of the same dialect, in interleaved rounds.
 * 3. Ingestion not slowed: chunk answer p99 while a backlog is processed against idle
 *    (ingestion-under-processing.ts), and the ingestion rate of business events, which are
 *    processed while they arrive, against that of an entity nothing processes.
 * 4. Ingestion of the plain entity against the single-core limit of the same dialect (for
 *    PostgreSQL its fastest bulk path, COPY).
 * 5. Ingestion against the single-core SQLite limit (issue 4's figure), and the peak RSS of a
 *    200 MB session (ingestion.ts).
 */

const ROUNDS = 3;
/** End to end: the processing benchmark's 40,000 events in 20 chunks from 4 clients. */
const EVENTS = 40_000;
const EVENT_CHUNKS = 20;
const CLIENTS = 4;
/** Chunks processed before the first timed round, so the service runs warm, as the limit does. */
const WARMUP_CHUNKS = 2;
/** Business events against the plain entity: this many full (1 MiB) chunks of each. */
const MIX_CHUNKS = 16;
/** Ingestion against the limits: the ingestion benchmark's 32 full chunks. */
const INGESTION_CHUNKS = 32;
const POLL_INTERVAL_MS = 50;
const PROCESSING_DEADLINE_MS = 600_000;
const MS_PER_SECOND = 1000;
const MIB_BYTES = 1024 * 1024;
const PERCENT = 100;

/** The targets of issue 11. */
const ENGINE_SHARE_MAX = 0.25;
const END_TO_END_RATIO_MIN = 1.0;
const EVENTS_TO_PLAIN_RATIO_MIN = 0.7;
const POSTGRES_LIMIT_RATIO_MIN = 0.8;
/** Issue 4's ratio to the single-core SQLite limit when issue 11 was filed, to be kept. */
const SQLITE_LIMIT_RATIO_KEPT = 0.74;
const RSS_BYTES_MAX = 300 * MIB_BYTES;

const rate = (count: number, ms: number) => (count / ms) * MS_PER_SECOND;
const ratioText = (values: readonly number[]) => values.map((value) => formatNumber(value, 2)).join(', ');
const verdict = (met: boolean) => (met ? 'met' : '**not met**');

/** The middle round of an odd number of rounds. */
const median = (values: readonly number[]) => percentile(values, 0.5);

/** Waits until every record of a closed session is processed; the time it was seen so. */
async function processedAt(service: BenchService, ingestionId: string, sinceMs: number): Promise<number> {
  const processed = await awaitProcessed(service, ingestionId, sinceMs, {
    pollMs: POLL_INTERVAL_MS,
    deadlineMs: PROCESSING_DEADLINE_MS,
  });
  if (processed === undefined)
    throw new Error(`session ${ingestionId} not processed in ${PROCESSING_DEADLINE_MS} ms`);
  return processed.atMs;
}

/** Sends bodies to a new session of business events and closes it; its id and the send timing. */
async function sendEvents(service: BenchService, bodies: readonly ChunkBody[]) {
  const ingestionId = await openSession(service, LEDGER_NAMESPACE, BUSINESS_EVENT_ENTITY_NAME);
  const timing = await postChunks(service, ingestionId, bodies, CLIENTS);
  await closeSession(service, ingestionId);
  return { ingestionId, timing };
}

/** Events per second from the first chunk sent until the session reported `completed`. */
async function endToEnd(service: BenchService, bodies: readonly ChunkBody[]): Promise<number> {
  const { ingestionId, timing } = await sendEvents(service, bodies);
  const endMs = await processedAt(service, ingestionId, timing.startMs);
  return rate(timing.records, endMs - timing.startMs);
}

interface LimitAndEndToEnd {
  limits: LimitRound[];
  /** Events per second, per round. */
  endToEnd: number[];
}

/**
 * Figures 1 and 2: `ROUNDS` rounds, each the processing limit (in this process, on a fresh
 * database) and right after it the same events end to end through one warm service.
 */
async function measureLimitAndEndToEnd(service: BenchService, bodies: readonly ChunkBody[]) {
  await uploadBenchConfiguration(service);
  const warmup = await sendEvents(service, bodies.slice(0, WARMUP_CHUNKS));
  await processedAt(service, warmup.ingestionId, warmup.timing.startMs);
  const result: LimitAndEndToEnd = { limits: [], endToEnd: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    const limit = await measureLimitRound(service.dialect, bodies);
    const served = await endToEnd(service, bodies);
    const limitRate = rate(limit.limit.events, limit.limit.totalMs);
    console.log(
      `processing-speed ${service.dialect} round ${round + 1}: limit ${formatNumber(limitRate)} events/s, end to end ${formatNumber(served)} events/s`,
    );
    result.limits.push(limit);
    result.endToEnd.push(served);
  }
  return result;
}

interface MixRound {
  plain: Throughput;
  events: Throughput;
}

/**
 * Figure 3, second half: in each round, full chunks of the plain entity from 4 clients, then as
 * many full chunks of business events, which the service processes while they arrive; the next
 * round starts once the events are processed. One warm service.
 */
async function measureEventsAgainstPlain(
  service: BenchService,
  plainBodies: readonly ChunkBody[],
  eventBodies: readonly ChunkBody[],
): Promise<MixRound[]> {
  await uploadBenchConfiguration(service);
  const warmPlain = await openSession(service, TRADE_NAMESPACE, TRADE_ENTITY);
  await postChunks(service, warmPlain, plainBodies.slice(0, WARMUP_CHUNKS), CLIENTS);
  const warmEvents = await sendEvents(service, eventBodies.slice(0, WARMUP_CHUNKS));
  await processedAt(service, warmEvents.ingestionId, warmEvents.timing.startMs);
  const rounds: MixRound[] = [];
  const throughput = (timing: Awaited<ReturnType<typeof postChunks>>): Throughput => ({
    records: timing.records,
    bytes: timing.bytes,
    ms: timing.endMs - timing.startMs,
  });
  for (let round = 0; round < ROUNDS; round += 1) {
    const plainSession = await openSession(service, TRADE_NAMESPACE, TRADE_ENTITY);
    const plain = throughput(await postChunks(service, plainSession, plainBodies, CLIENTS));
    const sent = await sendEvents(service, eventBodies);
    const events = throughput(sent.timing);
    console.log(
      `processing-speed ${service.dialect} mix round ${round + 1}: plain ${formatNumber(recordsPerSecond(plain))} records/s, business events ${formatNumber(recordsPerSecond(events))} records/s`,
    );
    rounds.push({ plain, events });
    await processedAt(service, sent.ingestionId, sent.timing.startMs);
  }
  return rounds;
}

/** Every figure of one dialect. */
interface SpeedRun {
  storage: string;
  limitAndEndToEnd: LimitAndEndToEnd;
  busyIdle: Awaited<ReturnType<typeof measureBusyIdle>>;
  mix: MixRound[];
  ownLimit: Awaited<ReturnType<typeof measureIngestionRounds>>;
  sqliteLimit: Awaited<ReturnType<typeof measureIngestionRounds>> | undefined;
  memory: Awaited<ReturnType<typeof measureMemory>>;
}

function rowsOf(dialect: Dialect, run: SpeedRun): string[][] {
  const { limits, endToEnd: served } = run.limitAndEndToEnd;
  const limitRates = limits.map((round) => rate(round.limit.events, round.limit.totalMs));
  const shares = limits.map((round) => round.limit.engineMs / round.limit.totalMs);
  const endToEndRatios = served.map((value, i) => value / (limitRates[i] ?? Number.NaN));
  const share = median(shares);
  const endToEndRatio = median(endToEndRatios);

  const idleP99 = percentile(run.busyIdle.idleMs, 0.99);
  const busyP99 = percentile(run.busyIdle.busyMs, 0.99);
  const busyRatio = busyP99 / idleP99;
  const mixRatios = run.mix.map((round) => recordsPerSecond(round.events) / recordsPerSecond(round.plain));
  const mixRatio = median(mixRatios);
  const mixPlain = median(run.mix.map((round) => recordsPerSecond(round.plain)));
  const mixEvents = median(run.mix.map((round) => recordsPerSecond(round.events)));
  const mixBytes = median(run.mix.map((round) => mibPerSecond(round.events) / mibPerSecond(round.plain)));

  const limitRatios = (rounds: SpeedRun['ownLimit']) =>
    rounds.map((round) => recordsPerSecond(round.service) / recordsPerSecond(round.limit));
  const ownRatios = limitRatios(run.ownLimit);
  const ownRatio = median(ownRatios);
  const ownLimit = medianOf(run.ownLimit, 'limit');
  const ownServed = medianOf(run.ownLimit, 'service');
  const peakMib = run.memory.peakBytes / MIB_BYTES;

  const rows: string[][] = [
    [
      `1. processing limit: ${formatNumber(EVENTS)} stored business events read, parsed, through the engine, journals and lines inserted, one transaction per chunk, in this process; the engine's share of it (per round: ${shares.map((s) => `${formatNumber(s * PERCENT)} %`).join(', ')})`,
      `${formatNumber(median(limitRates))} events/s; engine ${formatNumber(share * PERCENT)} %`,
      `engine ≤ ${formatNumber(ENGINE_SHARE_MAX * PERCENT)} %`,
      verdict(share <= ENGINE_SHARE_MAX),
    ],
    [
      `2. end to end: the same events over HTTP in ${EVENT_CHUNKS} chunks from ${CLIENTS} clients, first chunk sent until \`completed\`, against the limit of the same round (per round: ${ratioText(endToEndRatios)})`,
      `${formatNumber(median(served))} events/s; ${formatNumber(endToEndRatio, 2)} × the limit`,
      `≥ ${formatNumber(END_TO_END_RATIO_MIN, 1)} ×`,
      verdict(endToEndRatio >= END_TO_END_RATIO_MIN),
    ],
    [
      '3a. chunk answer p99 (500-record chunks of the plain entity) while a backlog of 20,000 events is processed, against the processor idle',
      `${formatNumber(busyP99)} ms against ${formatNumber(idleP99)} ms: ${formatNumber(busyRatio, 2)} ×`,
      `≤ ${formatNumber(BUSY_IDLE_P99_RATIO_MAX, 1)} ×`,
      verdict(busyRatio <= BUSY_IDLE_P99_RATIO_MAX),
    ],
    [
      `3b. ingestion of business events (processed as they arrive) against the plain entity, ${MIX_CHUNKS} full chunks each from ${CLIENTS} clients (per round: ${ratioText(mixRatios)}; in MiB/s ${formatNumber(mixBytes, 2)})`,
      `${formatNumber(mixEvents)} against ${formatNumber(mixPlain)} records/s: ${formatNumber(mixRatio, 2)}`,
      `≥ ${formatNumber(EVENTS_TO_PLAIN_RATIO_MIN, 1)}`,
      verdict(mixRatio >= EVENTS_TO_PLAIN_RATIO_MIN),
    ],
  ];
  const ownTarget = dialect === 'postgres' ? POSTGRES_LIMIT_RATIO_MIN : SQLITE_LIMIT_RATIO_KEPT;
  rows.push([
    `${dialect === 'postgres' ? '4' : '4, 5'}. ingestion of ${INGESTION_CHUNKS} full chunks of the plain entity from ${CLIENTS} clients against the single-core ${DIALECT_TITLE[dialect]} limit (parse, check, ${dialect === 'postgres' ? 'COPY' : 'prepared INSERT'}, one transaction per chunk; per round: ${ratioText(ownRatios)})`,
    `${formatNumber(recordsPerSecond(ownServed))} against ${formatNumber(recordsPerSecond(ownLimit))} records/s: ${formatNumber(ownRatio, 2)}`,
    `≥ ${formatNumber(ownTarget, 2)}`,
    verdict(ownRatio >= ownTarget),
  ]);
  if (run.sqliteLimit !== undefined) {
    const ratios = limitRatios(run.sqliteLimit);
    rows.push([
      `5. the same against the single-core SQLite limit (the ingestion target's figure; per round: ${ratioText(ratios)})`,
      `${formatNumber(recordsPerSecond(medianOf(run.sqliteLimit, 'service')))} against ${formatNumber(recordsPerSecond(medianOf(run.sqliteLimit, 'limit')))} records/s: ${formatNumber(median(ratios), 2)}`,
      'information',
      '',
    ]);
  }
  rows.push([
    `5. peak RSS of the service, one session of ${run.memory.chunks} full chunks (${formatNumber(run.memory.sent.bytes / MIB_BYTES, 1)} MiB), sampled every 100 ms`,
    `${formatNumber(peakMib, 1)} MiB (${formatNumber(run.memory.baselineBytes / MIB_BYTES, 1)} MiB before the first chunk)`,
    `< ${formatNumber(RSS_BYTES_MAX / MIB_BYTES)} MiB`,
    verdict(run.memory.peakBytes < RSS_BYTES_MAX),
  ]);
  return rows;
}

/** Runs the figures of issue 11 on each dialect. */
export async function runProcessingSpeed(
  context: RunContext,
  dialects: readonly Dialect[],
): Promise<Section[]> {
  const eventBodies = businessEventChunks(EVENTS, EVENT_CHUNKS);
  const plainBodies = fullChunks(INGESTION_CHUNKS, tradeRecord);
  const fullEventBodies = fullChunks(MIX_CHUNKS, businessEventRecords());
  const sections: Section[] = [];
  for (const dialect of dialects) {
    const stamp = stampNow();
    const limitAndEndToEnd = await withService(dialect, (service) =>
      measureLimitAndEndToEnd(service, eventBodies),
    );
    const busyIdle = await withService(dialect, (service) => measureBusyIdle(service, 'processing thread'));
    const mix = await withService(dialect, (service) =>
      measureEventsAgainstPlain(service, plainBodies.slice(0, MIX_CHUNKS), fullEventBodies),
    );
    const { storage, ownLimit, sqliteLimit } = await withService(dialect, async (service) => ({
      storage: service.storage,
      ownLimit: await measureIngestionRounds(service, plainBodies, dialect),
      sqliteLimit:
        dialect === 'sqlite' ? undefined : await measureIngestionRounds(service, plainBodies, 'sqlite'),
    }));
    const memory = await withService(dialect, (service) => measureMemory(service, plainBodies));
    const run: SpeedRun = { storage, limitAndEndToEnd, busyIdle, mix, ownLimit, sqliteLimit, memory };
    const markdown = [
      ...sectionHead({
        title: `Processing as fast as storage allows, ingestion not slowed, ${DIALECT_TITLE[dialect]}`,
        machine: context.machine,
        storage,
        command: context.command,
        stamp,
      }),
      ...table(['figure', 'result (median of rounds)', 'target', 'verdict'], rowsOf(dialect, run)),
      '',
      `Method. One run per dialect, ${ROUNDS} rounds of each figure, each service freshly started as \`npm start\` runs it (one processing thread). Figures 1 and 2 alternate: a round measures the processing limit on a fresh database in this process (\`bench/processing-limit.ts\`), then sends the same ${formatNumber(EVENTS)} events to a new session of one service that processed ${WARMUP_CHUNKS} chunks first, so that both run warm; the session is polled every ${POLL_INTERVAL_MS} ms. Figure 3a is the ingestion-under-processing measure with the processing thread. Figure 3b sends, per round, ${MIX_CHUNKS} chunks of \`${TRADE_NAMESPACE}/${TRADE_ENTITY}\` filled to 1 MiB, then ${MIX_CHUNKS} chunks of business events filled to 1 MiB (about twice as many records, each half the size), to one warm service, and waits for the events to be processed before the next round. Figures 4 and 5 are the ingestion benchmark's measures (\`bench/ingestion.ts\`): limit and service in alternating rounds on one warm service, the limit in this process on a fresh database, and a fresh service for the memory session.`,
    ].join('\n');
    console.log(`\n${markdown}\n`);
    sections.push({ id: `processing-speed-${dialect}`, markdown });
  }
  return sections;
}
