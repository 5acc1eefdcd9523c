import { BUSINESS_EVENT_ENTITY_NAME, LEDGER_NAMESPACE } from '../src/modules/configuration/model.js';
import {
  businessEventChunks,
  type ChunkBody,
  chunkOf,
  TRADE_ENTITY,
  TRADE_NAMESPACE,
  tradeRecord,
} from './data.js';
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
  getSession,
  openSession,
  percentile,
  postChunks,
  uploadBenchConfiguration,
  withService,
} from './service.js';

/** Trade chunks whose answer times are measured, once with the processor idle, once busy. */
const MEASURED_CHUNKS = 40;
const TRADES_PER_CHUNK = 500;
const MEASURING_CLIENTS = 2;
/** The backlog of business events the processor works on while the busy series is sent. */
const BACKLOG_CHUNKS = 10;
const EVENTS_PER_CHUNK = 2_000;
const BACKLOG_CLIENTS = 4;
/** Target: chunk answer p99 while a backlog is processed at most this many times the idle p99. */
export const BUSY_IDLE_P99_RATIO_MAX = 1.5;
const POLL_INTERVAL_MS = 100;
const PROCESSING_DEADLINE_MS = 300_000;
const MS_PER_SECOND = 1000;

/** The two ways the service runs its processor (PROCESSING_THREAD). */
const MODES = [
  { name: 'processing thread (PROCESSING_THREAD=true)', env: { PROCESSING_THREAD: 'true' } },
  { name: 'event loop (PROCESSING_THREAD=false)', env: { PROCESSING_THREAD: 'false' } },
] as const;

function tradeChunks(series: string): ChunkBody[] {
  return Array.from({ length: MEASURED_CHUNKS }, (_, chunk) =>
    chunkOf(
      `${series}-${chunk}`,
      Array.from({ length: TRADES_PER_CHUNK }, (_, offset) => tradeRecord(chunk * TRADES_PER_CHUNK + offset)),
    ),
  );
}

export interface BusyIdleRun {
  mode: string;
  storage: string;
  idleMs: number[];
  busyMs: number[];
  /** The backlog session's processingStatus when the last busy chunk was answered. */
  backlogStatus: string;
  /** From the first backlog chunk sent until the backlog session is processed; undefined: not in time. */
  processingMs: number | undefined;
}

/**
 * Chunk answer times of a plain entity with the processor idle, then right after a backlog of
 * business events was sent, while it is processed; then waits for the backlog to be processed.
 */
export async function measureBusyIdle(service: BenchService, mode: string): Promise<BusyIdleRun> {
  await uploadBenchConfiguration(service);
  const idleSession = await openSession(service, TRADE_NAMESPACE, TRADE_ENTITY);
  const idle = await postChunks(service, idleSession, tradeChunks('idle'), MEASURING_CLIENTS);
  await closeSession(service, idleSession);

  const backlogSession = await openSession(service, LEDGER_NAMESPACE, BUSINESS_EVENT_ENTITY_NAME);
  const backlog = await postChunks(
    service,
    backlogSession,
    businessEventChunks(BACKLOG_CHUNKS * EVENTS_PER_CHUNK, BACKLOG_CHUNKS),
    BACKLOG_CLIENTS,
  );
  await closeSession(service, backlogSession);
  const busySession = await openSession(service, TRADE_NAMESPACE, TRADE_ENTITY);
  const busy = await postChunks(service, busySession, tradeChunks('busy'), MEASURING_CLIENTS);
  const backlogStatus = (await getSession(service, backlogSession)).processingStatus;

  const processed = await awaitProcessed(service, backlogSession, backlog.startMs, {
    pollMs: POLL_INTERVAL_MS,
    deadlineMs: PROCESSING_DEADLINE_MS,
  });
  const processingMs = processed === undefined ? undefined : processed.atMs - backlog.startMs;
  return {
    mode,
    storage: service.storage,
    idleMs: idle.latenciesMs,
    busyMs: busy.latenciesMs,
    backlogStatus,
    processingMs,
  };
}

function rowOf(run: BusyIdleRun): string[] {
  const idleP99 = percentile(run.idleMs, 0.99);
  const busyP99 = percentile(run.busyMs, 0.99);
  const ratio = busyP99 / idleP99;
  const events = BACKLOG_CHUNKS * EVENTS_PER_CHUNK;
  return [
    run.mode,
    `${formatNumber(percentile(run.idleMs, 0.5))} / ${formatNumber(idleP99)} ms`,
    `${formatNumber(percentile(run.busyMs, 0.5))} / ${formatNumber(busyP99)} ms`,
    `${formatNumber(ratio, 2)} (${ratio <= BUSY_IDLE_P99_RATIO_MAX ? 'met' : 'not met'})`,
    `\`${run.backlogStatus}\``,
    run.processingMs === undefined
      ? `not finished within ${PROCESSING_DEADLINE_MS / MS_PER_SECOND} s`
      : `${formatNumber((events / run.processingMs) * MS_PER_SECOND)} events/s (${formatNumber(run.processingMs)} ms)`,
  ];
}

/**
 * Chunk answer times of a plain entity with the processor idle, then while it works through a
 * backlog of business events, with processing on its own thread and on the event loop.
 */
export async function runIngestionUnderProcessing(
  context: RunContext,
  dialects: readonly Dialect[],
): Promise<Section[]> {
  const sections: Section[] = [];
  for (const dialect of dialects) {
    const stamp = stampNow();
    const runs: BusyIdleRun[] = [];
    for (const mode of MODES) {
      runs.push(
        await withService(dialect, (service) => measureBusyIdle(service, mode.name), { ...mode.env }),
      );
      console.log(`ingestion-under-processing ${dialect}: ${mode.name} done`);
    }
    const markdown = [
      ...sectionHead({
        title: `Ingestion while a backlog is processed, ${DIALECT_TITLE[dialect]}`,
        machine: context.machine,
        storage: runs[0]?.storage ?? '',
        command: context.command,
        stamp,
      }),
      ...table(
        [
          'processor runs on',
          'chunk answer, processor idle (p50 / p99)',
          'chunk answer, backlog processed (p50 / p99)',
          `busy p99 / idle p99 (target ≤ ${formatNumber(BUSY_IDLE_P99_RATIO_MAX, 1)})`,
          'backlog status after the busy series',
          'backlog processing (first backlog chunk sent until processed)',
        ],
        runs.map(rowOf),
      ),
      '',
      `Method. A fresh service per row. ${MEASURED_CHUNKS} chunks of ${TRADES_PER_CHUNK} \`${TRADE_NAMESPACE}/${TRADE_ENTITY}\` records (an entity nothing processes) are sent from ${MEASURING_CLIENTS} clients with the processor idle; then ${formatNumber(BACKLOG_CHUNKS * EVENTS_PER_CHUNK)} business events in ${BACKLOG_CHUNKS} chunks from ${BACKLOG_CLIENTS} clients, and at once the same ${MEASURED_CHUNKS} trade chunks again while the processor works on the events. A backlog status other than \`completed\` after the busy series shows it was answered while events were processed.`,
    ].join('\n');
    console.log(`\n${markdown}\n`);
    sections.push({ id: `ingestion-under-processing-${dialect}`, markdown });
  }
  return sections;
}
