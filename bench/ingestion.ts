import { performance } from 'node:perf_hooks';
import { validateConfiguration } from '../src/composition/configuration-checks.js';
import type { EntityDefinition } from '../src/modules/entities/entity.js';
import { entitiesOf } from '../src/modules/entities/from-configuration.js';
import { compileRecordValidator, type RecordValidator } from '../src/modules/entities/record-validator.js';
import { createBulkInsert } from '../src/storage/bulk-insert.js';
import { RECORD_COLUMNS } from '../src/storage/chunk-commit.js';
import { migrateToLatest } from '../src/storage/migrations/index.js';
import { openStore, type Store } from '../src/storage/store.js';
import { insertOpenSession } from '../test/helpers/store.js';
import {
  benchConfiguration,
  type ChunkBody,
  fullChunks,
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
  verdictOf,
} from './report.js';
import {
  type BenchService,
  createDatabase,
  type Dialect,
  getSession,
  openSession,
  postChunks,
  residentBytes,
  type SendTiming,
  sampleResidentBytes,
  uploadBenchConfiguration,
  withService,
} from './service.js';

/** Issue 4: 32 chunks of about 1 MB, sent by 4 concurrent clients. */
const THROUGHPUT_CHUNKS = 32;
const CLIENTS = 4;
/** Interleaved limit/service rounds; the medians are compared, so one noisy round does not decide. */
const ROUNDS = 3;
/** Chunks sent before timing, to the service and to the in-process limit alike, so both run warm. */
const WARMUP_CHUNKS = 4;
/** Issue 4: one session of 200 MB sent as chunks keeps the service under 300 MB RSS. */
const MEMORY_CHUNKS = 200;
const RSS_SAMPLE_INTERVAL_MS = 100;
const RSS_BYTES_MAX = 300 * 1024 * 1024;
/** Issue 4: the service reaches at least half of the single-core limit; the goal is all of it. */
const LIMIT_RATIO_MIN = 0.5;
const LIMIT_RATIO_GOAL = 1.0;
const MIB_BYTES = 1024 * 1024;
const MS_PER_SECOND = 1000;

export interface Throughput {
  records: number;
  bytes: number;
  ms: number;
}

export const recordsPerSecond = (t: Throughput) => (t.records / t.ms) * MS_PER_SECOND;
export const mibPerSecond = (t: Throughput) => (t.bytes / MIB_BYTES / t.ms) * MS_PER_SECOND;
const describeThroughput = (t: Throughput) =>
  `${formatNumber(recordsPerSecond(t))} records/s, ${formatNumber(mibPerSecond(t), 1)} MiB/s`;
const mib = (bytes: number) => `${formatNumber(bytes / MIB_BYTES, 1)} MiB`;

/** The trade entity exactly as the service derives it from the uploaded configuration. */
function tradeEntityDefinition(): EntityDefinition {
  const validation = validateConfiguration(benchConfiguration());
  if (!validation.ok) throw new Error(`bench configuration refused: ${JSON.stringify(validation.errors)}`);
  const entity = entitiesOf(validation.document.configuration).find(
    (e) => e.namespace === TRADE_NAMESPACE && e.name === TRADE_ENTITY,
  );
  if (entity === undefined) throw new Error('the bench configuration has no trade entity');
  return entity;
}

/** `JSON.parse` of a chunk body and the compiled validator on every record: the rows to store. */
function checkedRows(
  validator: RecordValidator,
  ingestionId: string,
  chunkSeq: number,
  raw: Buffer,
): unknown[][] {
  const { data } = JSON.parse(raw.toString('utf8')) as { data: unknown[] };
  const at = new Date().toISOString();
  return data.map((record, index) => {
    const result = validator.validate(record);
    if (!result.ok) throw new Error(`record ${index} refused: ${JSON.stringify(result.errors)}`);
    return [ingestionId, chunkSeq, index, TRADE_NAMESPACE, TRADE_ENTITY, JSON.stringify(result.value), 0, at];
  });
}

/** Records stored in a session of a limit's store, to check that the limit wrote them all. */
async function countStored(store: Store, ingestionId: string): Promise<number> {
  const row = await store.db
    .selectFrom('records')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('ingestion_id', '=', ingestionId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * A single-core ingestion limit, in this process, on a fresh database of `dialect` made by the
 * service's own `openStore` and migrations: for each body, `JSON.parse`, the project's compiled
 * validator on every record (type check and conversion of every field), and the converted records
 * as JSON text inserted into the service's `records` table by the dialect's fastest path, one
 * transaction per chunk. SQLite (issue 4): a prepared single-row INSERT per record (WAL,
 * synchronous=FULL). PostgreSQL: `COPY … FROM STDIN`, the project's bulk insert, measured faster
 * than one `unnest` INSERT and than multi-row VALUES (docs/adr/0014-storage-fast-paths.md); the
 * server works in its own processes.
 */
export async function measureIngestionLimit(
  dialect: Dialect,
  bodies: readonly ChunkBody[],
): Promise<Throughput> {
  const database = await createDatabase(dialect);
  const store = openStore(database.url);
  try {
    await migrateToLatest(store);
    for (const ingestionId of ['in_warmup', 'in_limit']) {
      await insertOpenSession(store, ingestionId, TRADE_NAMESPACE, TRADE_ENTITY);
    }
    const validator = compileRecordValidator(tradeEntityDefinition());
    const storeChunk = limitWriter(store, validator);
    for (const [seq, chunk] of bodies.slice(0, WARMUP_CHUNKS).entries())
      await storeChunk('in_warmup', seq, chunk.body);
    const startMs = performance.now();
    for (const [seq, chunk] of bodies.entries()) await storeChunk('in_limit', seq, chunk.body);
    const ms = performance.now() - startMs;
    const records = bodies.reduce((sum, chunk) => sum + chunk.records, 0);
    const stored = await countStored(store, 'in_limit');
    if (stored !== records) throw new Error(`the limit stored ${stored} of ${records} records`);
    return { records, bytes: bodies.reduce((sum, chunk) => sum + chunk.body.length, 0), ms };
  } finally {
    await store.close();
    await database.drop();
  }
}

/** How a limit stores one chunk on its dialect, in one transaction. */
function limitWriter(
  store: Store,
  validator: RecordValidator,
): (ingestionId: string, chunkSeq: number, raw: Buffer) => Promise<void> {
  const { sqlite } = store;
  if (sqlite !== undefined) {
    // Issue 4's limit as first measured: each record's values go to the statement as they are
    // checked, with no row array between (`checkedRows` makes them for the bulk insert).
    const insert = sqlite.prepare(
      `insert into records (ingestion_id, chunk_seq, record_index, namespace, entity, data, processing, created_at)
       values (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const storeChunk = sqlite.transaction((ingestionId: string, chunkSeq: number, raw: Buffer) => {
      const { data } = JSON.parse(raw.toString('utf8')) as { data: unknown[] };
      const at = new Date().toISOString();
      for (let index = 0; index < data.length; index += 1) {
        const result = validator.validate(data[index]);
        if (!result.ok) throw new Error(`record ${index} refused: ${JSON.stringify(result.errors)}`);
        const json = JSON.stringify(result.value);
        insert.run(ingestionId, chunkSeq, index, TRADE_NAMESPACE, TRADE_ENTITY, json, 0, at);
      }
    });
    return async (ingestionId, chunkSeq, raw) => storeChunk(ingestionId, chunkSeq, raw);
  }
  const bulkInsert = createBulkInsert(store);
  return (ingestionId, chunkSeq, raw) =>
    store.db
      .transaction()
      .execute((trx) =>
        bulkInsert(trx, 'records', RECORD_COLUMNS, checkedRows(validator, ingestionId, chunkSeq, raw)),
      );
}

/** Checks that the service counted every record sent, and returns the count. */
async function verifySession(service: BenchService, ingestionId: string, records: number, chunks: number) {
  const session = await getSession(service, ingestionId);
  if (session.successRows !== records || session.chunks !== chunks || session.failedRows !== 0) {
    throw new Error(
      `session ${ingestionId}: successRows ${session.successRows}, chunks ${session.chunks}, failedRows ${session.failedRows}; sent ${records} records in ${chunks} chunks`,
    );
  }
}

/** One round of the comparison: the limit, then the service, right after each other. */
export interface Round {
  limit: Throughput;
  service: Throughput;
}

/**
 * Issue 4 throughput, in `ROUNDS` interleaved rounds so that both sides see the same machine
 * load: each round measures the single-core limit of `limitDialect` (issue 4: always SQLite),
 * then sends the bodies to a new session of the (warmed-up) service, first send to last 201.
 */
export async function measureIngestionRounds(
  service: BenchService,
  bodies: readonly ChunkBody[],
  limitDialect: Dialect,
): Promise<Round[]> {
  await uploadBenchConfiguration(service);
  const warmup = await openSession(service, TRADE_NAMESPACE, TRADE_ENTITY);
  await postChunks(service, warmup, bodies.slice(0, WARMUP_CHUNKS), CLIENTS);
  const rounds: Round[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const limit = await measureIngestionLimit(limitDialect, bodies);
    const ingestionId = await openSession(service, TRADE_NAMESPACE, TRADE_ENTITY);
    const timing = await postChunks(service, ingestionId, bodies, CLIENTS);
    await verifySession(service, ingestionId, timing.records, timing.chunks);
    const sent = { records: timing.records, bytes: timing.bytes, ms: timing.endMs - timing.startMs };
    console.log(
      `ingestion ${service.dialect} round ${round + 1}: ${limitDialect} limit ${describeThroughput(limit)}; service ${describeThroughput(sent)}`,
    );
    rounds.push({ limit, service: sent });
  }
  return rounds;
}

/** The round with the median time of one side. */
export function medianOf(rounds: readonly Round[], side: keyof Round): Throughput {
  const sorted = rounds.map((round) => round[side]).sort((a, b) => a.ms - b.ms);
  const middle = sorted[Math.floor(sorted.length / 2)];
  if (middle === undefined) throw new Error('no rounds measured');
  return middle;
}

export interface MemoryResult {
  baselineBytes: number;
  peakBytes: number;
  sent: Throughput;
  chunks: number;
}

/** Issue 4 memory: a fresh service, one session of 200 chunks, RSS sampled every 100 ms. */
export async function measureMemory(
  service: BenchService,
  bodies: readonly ChunkBody[],
): Promise<MemoryResult> {
  await uploadBenchConfiguration(service);
  const ingestionId = await openSession(service, TRADE_NAMESPACE, TRADE_ENTITY);
  const baselineBytes = residentBytes(service.pid);
  const sampler = sampleResidentBytes(service.pid, RSS_SAMPLE_INTERVAL_MS);
  let timing: SendTiming;
  let peakBytes: number;
  try {
    timing = await postChunks(service, ingestionId, bodies, CLIENTS, MEMORY_CHUNKS);
  } finally {
    peakBytes = sampler.stop();
  }
  await verifySession(service, ingestionId, timing.records, timing.chunks);
  return {
    baselineBytes,
    peakBytes,
    chunks: timing.chunks,
    sent: { records: timing.records, bytes: timing.bytes, ms: timing.endMs - timing.startMs },
  };
}

/** Runs the ingestion benchmark on each dialect; the single-core limit is measured once. */
export async function runIngestion(context: RunContext, dialects: readonly Dialect[]): Promise<Section[]> {
  const bodies = fullChunks(THROUGHPUT_CHUNKS, tradeRecord);
  const totalBytes = bodies.reduce((sum, chunk) => sum + chunk.body.length, 0);
  const totalRecords = bodies.reduce((sum, chunk) => sum + chunk.records, 0);
  const largestBytes = Math.max(...bodies.map((b) => b.body.length));
  console.log(
    `ingestion: ${bodies.length} bodies, ${formatNumber(totalRecords)} records, ${mib(totalBytes)} (largest ${formatNumber(largestBytes)} bytes)`,
  );
  const sections: Section[] = [];
  for (const dialect of dialects) {
    const stamp = stampNow();
    const { storage, rounds } = await withService(dialect, async (service) => ({
      storage: service.storage,
      rounds: await measureIngestionRounds(service, bodies, 'sqlite'),
    }));
    const memory = await withService(dialect, (service) => measureMemory(service, bodies));
    console.log(`ingestion ${dialect}: peak RSS ${mib(memory.peakBytes)}`);
    const limit = medianOf(rounds, 'limit');
    const served = medianOf(rounds, 'service');
    const ratio = recordsPerSecond(served) / recordsPerSecond(limit);
    const roundRatios = rounds
      .map((round) => formatNumber(recordsPerSecond(round.service) / recordsPerSecond(round.limit), 2))
      .join(', ');
    const markdown = [
      ...sectionHead({
        title: `Ingestion against the single-core SQLite limit, ${DIALECT_TITLE[dialect]}`,
        machine: context.machine,
        storage,
        command: context.command,
        stamp,
      }),
      ...table(
        ['measure', 'result (median of rounds)', 'target', 'verdict'],
        [
          [
            `service: ${THROUGHPUT_CHUNKS} chunks (${formatNumber(served.records)} records, ${mib(served.bytes)}, largest ${formatNumber(largestBytes)} bytes) from ${CLIENTS} clients over HTTP, first send to last 201`,
            `${describeThroughput(served)} (${formatNumber(served.ms)} ms)`,
            '',
            '',
          ],
          [
            'single-core limit, in the benchmark process: JSON.parse, compiled validator, SQLite insert, one transaction per chunk',
            `${describeThroughput(limit)} (${formatNumber(limit.ms)} ms)`,
            '',
            '',
          ],
          [
            `service / limit (records/s; the same bytes, so also MiB/s); per round: ${roundRatios}`,
            formatNumber(ratio, 2),
            `≥ ${formatNumber(LIMIT_RATIO_MIN, 1)}, goal ≥ ${formatNumber(LIMIT_RATIO_GOAL, 1)}`,
            verdictOf(ratio, LIMIT_RATIO_MIN, LIMIT_RATIO_GOAL),
          ],
          [
            `peak RSS of the service, one session of ${memory.chunks} chunks (${mib(memory.sent.bytes)}, ${formatNumber(memory.sent.records)} records) from ${CLIENTS} clients, sampled every ${RSS_SAMPLE_INTERVAL_MS} ms`,
            `${mib(memory.peakBytes)} (${mib(memory.baselineBytes)} before the first chunk; ${describeThroughput(memory.sent)})`,
            `< ${mib(RSS_BYTES_MAX)}`,
            memory.peakBytes < RSS_BYTES_MAX ? 'met' : '**not met**',
          ],
          [
            'every record counted: successRows equals records sent and failedRows is 0, in every session',
            'yes',
            'yes',
            'met',
          ],
        ],
      ),
      '',
      `Method. Bodies are ${THROUGHPUT_CHUNKS} deterministic chunks of the ten-field entity \`${TRADE_NAMESPACE}/${TRADE_ENTITY}\` (UUID, TEXT, DATE, DECIMAL string, INTEGER, BOOLEAN, four more TEXT, one of them optional), each filled until one more record would reach 1,048,576 bytes. ${ROUNDS} rounds, each measuring the limit and then the service right after it, so that both see the same load of a shared machine; the table compares the medians. The service runs warm: ${WARMUP_CHUNKS} chunks go to another session first, untimed; every limit round gets the same ${WARMUP_CHUNKS}-chunk warm-up. The limit's type check is the project's own \`compileRecordValidator\` (\`src/modules/entities/record-validator.ts\`) on the entity that \`entitiesOf\` derives from the same uploaded configuration; it stores \`JSON.stringify\` of the converted record, as the service does, with one prepared single-row INSERT of the columns of \`records\` into a fresh database made by the service's own \`openStore\` and migration (WAL, synchronous=FULL, foreign keys on, same indexes). The limit is always SQLite's, as the ingestion target defines it, so the PostgreSQL section compares to it too. The memory session cycles through the same ${THROUGHPUT_CHUNKS} bodies on a freshly started service.`,
    ].join('\n');
    console.log(`\n${markdown}\n`);
    sections.push({ id: `ingestion-${dialect}`, markdown });
  }
  return sections;
}
