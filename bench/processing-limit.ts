import { performance } from 'node:perf_hooks';
import { validateConfiguration } from '../src/composition/configuration-checks.js';
import { newTimeOrderedUuid } from '../src/lib/ids.js';
import type { ProcessingContext } from '../src/modules/accounting/journal-draft.js';
import { type PreparedAccountingRevision, prepareAccounting } from '../src/modules/accounting/prepare.js';
import { processChunk } from '../src/modules/accounting/processor.js';
import type { ChunkOutcome, ClaimedChunk } from '../src/modules/accounting/store.js';
import { BUSINESS_EVENT_ENTITY_NAME, LEDGER_NAMESPACE } from '../src/modules/configuration/model.js';
import { entityKey, prepareEntities } from '../src/modules/entities/prepared-entity.js';
import type { RecordValidator } from '../src/modules/entities/record-validator.js';
import { type AcceptedRecords, acceptedJsonTexts } from '../src/modules/ingestion/store.js';
import { validateChunkBody } from '../src/modules/ingestion/validated-chunk.js';
import { balanceMovesOf, keepBalances } from '../src/storage/accounting/balances.js';
import {
  canonicalNodeJson,
  JOURNAL_COLUMNS,
  journalRow,
  LINE_COLUMNS,
  lineRows,
} from '../src/storage/accounting/rows.js';
import { createBulkInsert } from '../src/storage/bulk-insert.js';
import { logWrittenJournals } from '../src/storage/extract-journal-log.js';
import { createIngestionStore } from '../src/storage/ingestion-store.js';
import { migrateToLatest } from '../src/storage/migrations/index.js';
import { openStore, type Store } from '../src/storage/store.js';
import { insertOpenSession } from '../test/helpers/store.js';
import { benchConfiguration, type ChunkBody } from './data.js';
import { createDatabase, type Dialect } from './service.js';

/**
 * The processing limit: what one core of the benchmark process does with stored business events
 * when nothing but the work itself runs. Per chunk, one transaction reads the chunk's stored
 * records, parses them (`JSON.parse`), runs the project's engine on them (`processChunk`, the
 * function the processor hands to the store), inserts their journals and lines with the
 * project's bulk insert and row shapes and adds the posted lines to the kept balances
 * (`storage/accounting/balances.ts`), as the processing write path does (`storage/bulk-insert.ts`, `storage/accounting/rows.ts`:
 * a prepared single-row INSERT per row on SQLite, `COPY … FROM STDIN` per table on PostgreSQL).
 * The engine's share of that time says whether the engine or storage sets the pace.
 */

/** Interleaved rounds of the limit and the engine alone; the medians are reported. */
export const LIMIT_ROUNDS = 3;
/** Chunks processed untimed before each round, into another session, so the round runs warm. */
export const LIMIT_WARMUP_CHUNKS = 2;
/** Timed passes of the engine alone over the parsed events of all chunks, after one untimed. */
export const ENGINE_PASSES = 5;
const LIMIT_INGESTION_ID = 'in_limit';
const WARMUP_INGESTION_ID = 'in_limit_warmup';

/** Where the time of one limit run went. */
export interface LimitRun {
  events: number;
  journals: number;
  lines: number;
  /** First transaction begun to last committed. */
  totalMs: number;
  /** Selecting the chunk's records and `JSON.parse` of each. */
  readMs: number;
  /** `processChunk`: the engine and the line extras it hands to storage. */
  engineMs: number;
  /** Journal and line rows built (node JSON, extras JSON) and inserted. */
  insertMs: number;
  /** The commit, and what the transaction costs besides (begin, the driver's queue): the rest. */
  commitMs: number;
}

/** The engine alone on parsed events. */
export interface EngineRun {
  events: number;
  journals: number;
  ms: number;
}

/** One round: the limit, then the engine alone right after it, under the same machine load. */
export interface LimitRound {
  /** The storage, for the report. */
  storage: string;
  limit: LimitRun;
  engine: EngineRun;
}

/** What a round needs from the fixture: the prepared accounting and the event validator. */
interface Fixture {
  prepared: PreparedAccountingRevision;
  validator: RecordValidator;
}

/** Accepted records as the processor reads them back: index and parsed value. */
function recordsOf(accepted: AcceptedRecords): { index: number; data: Record<string, unknown> }[] {
  return acceptedJsonTexts(accepted).map((json, i) => ({
    index: accepted.indexes[i] ?? i,
    data: JSON.parse(json) as Record<string, unknown>,
  }));
}

function fixture(): Fixture {
  const validation = validateConfiguration(benchConfiguration());
  if (!validation.ok) throw new Error(`bench configuration refused: ${JSON.stringify(validation.errors)}`);
  const { configuration } = validation.document;
  const entity = prepareEntities(configuration).get(entityKey(LEDGER_NAMESPACE, BUSINESS_EVENT_ENTITY_NAME));
  if (entity === undefined) throw new Error('the bench configuration has no business event entity');
  return {
    prepared: { revision: 1, accounting: prepareAccounting(configuration) },
    validator: entity.validator,
  };
}

/** The processor's context: the clock read once per chunk, time-ordered UUIDs as in the service. */
function contextFor(ingestionId: string): ProcessingContext {
  return { ingestionId, now: new Date(), newId: newTimeOrderedUuid };
}

/**
 * Stores the bodies as the service would (validated and converted by the project's chunk work,
 * written by its `commitChunk`), waiting for the engine, in a new session.
 */
async function storeEvents(
  store: Store,
  ingestionId: string,
  bodies: readonly ChunkBody[],
  validator: RecordValidator,
): Promise<void> {
  const sessions = createIngestionStore(store);
  const now = new Date();
  const at = now.toISOString();
  await insertOpenSession(store, ingestionId, LEDGER_NAMESPACE, BUSINESS_EVENT_ENTITY_NAME);
  for (const body of bodies) {
    const work = validateChunkBody(body.body, validator);
    if (work.failedCount > 0)
      throw new Error(`${work.failedCount} events refused: ${JSON.stringify(work.failed)}`);
    const stored = await sessions.commitChunk({
      ingestionId,
      namespace: LEDGER_NAMESPACE,
      entity: BUSINESS_EVENT_ENTITY_NAME,
      chunkName: work.chunkName,
      idempotencyKey: null,
      bodySha256: null,
      accepted: work.accepted,
      failed: [],
      failedKept: [],
      failedOmitted: 0,
      totalRows: work.totalRows,
      rejected: false,
      awaitsProcessing: true,
      reference: 'bench',
      at,
      nowMs: now.getTime(),
      // No configuration is stored by this bench (it prepares its own): the stored revision is 0.
      revision: 0,
    });
    if (stored.kind !== 'stored') throw new Error(`chunk of ${ingestionId} not stored: ${stored.kind}`);
  }
}

/** Reads, processes and writes every chunk of a session, one transaction per chunk. */
async function processSession(
  store: Store,
  prepared: PreparedAccountingRevision,
  ingestionId: string,
  chunks: number,
): Promise<LimitRun> {
  const bulkInsert = createBulkInsert(store);
  const run: LimitRun = {
    events: 0,
    journals: 0,
    lines: 0,
    totalMs: 0,
    readMs: 0,
    engineMs: 0,
    insertMs: 0,
    commitMs: 0,
  };
  const startMs = performance.now();
  for (let chunkSeq = 1; chunkSeq <= chunks; chunkSeq += 1) {
    await store.db.transaction().execute(async (trx) => {
      const readStartMs = performance.now();
      const rows = await trx
        .selectFrom('records')
        .select(['record_id', 'record_index', 'data'])
        .where('ingestion_id', '=', ingestionId)
        .where('chunk_seq', '=', chunkSeq)
        .orderBy('record_id')
        .execute();
      const chunk: ClaimedChunk = {
        ingestionId,
        chunkSeq,
        namespace: LEDGER_NAMESPACE,
        entity: BUSINESS_EVENT_ENTITY_NAME,
        records: rows.map((row) => ({
          recordId: Number(row.record_id),
          index: row.record_index,
          data: JSON.parse(row.data) as Record<string, unknown>,
        })),
        seenOriginJournalIds: new Set(),
        bookedOriginJournals: new Map(),
      };
      const engineStartMs = performance.now();
      const outcome = processChunk(prepared, chunk, contextFor(ingestionId));
      const engineEndMs = performance.now();
      run.readMs += engineStartMs - readStartMs;
      run.engineMs += engineEndMs - engineStartMs;
      checkOutcome(outcome);
      const at = new Date().toISOString();
      await bulkInsert(
        trx,
        'journals',
        JOURNAL_COLUMNS,
        outcome.journals.map(({ recordId, draft }) => journalRow(recordId, draft, at, prepared.revision)),
      );
      await logWrittenJournals(
        trx,
        store.adapter,
        outcome.journals.map(({ draft }) => [draft.journalId, draft.status === 'posted' ? 1 : 0]),
      );
      await bulkInsert(trx, 'journal_lines', LINE_COLUMNS, lineRows(outcome.journals));
      await keepBalances(trx, store.adapter, balanceMovesOf(outcome.journals, canonicalNodeJson));
      run.insertMs += performance.now() - engineEndMs;
      run.events += chunk.records.length;
      run.journals += outcome.journals.length;
      run.lines += outcome.journals.reduce((sum, journal) => sum + journal.draft.lines.length, 0);
    });
  }
  run.totalMs = performance.now() - startMs;
  run.commitMs = run.totalMs - run.readMs - run.engineMs - run.insertMs;
  return run;
}

function checkOutcome(outcome: ChunkOutcome): void {
  const error = outcome.errors[0];
  if (error !== undefined) throw new Error(`the engine refused an event: ${error.code}: ${error.message}`);
}

/** Checks that the store holds exactly the journals and lines the run counted. */
async function verifyStored(store: Store, run: LimitRun): Promise<void> {
  const journals = await store.db
    .selectFrom('journals')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('ingestion_id', '=', LIMIT_INGESTION_ID)
    .executeTakeFirstOrThrow();
  const lines = await store.db
    .selectFrom('journal_lines')
    .innerJoin('journals', 'journals.journal_id', 'journal_lines.journal_id')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('journals.ingestion_id', '=', LIMIT_INGESTION_ID)
    .executeTakeFirstOrThrow();
  if (Number(journals.n) !== run.journals || Number(lines.n) !== run.lines) {
    throw new Error(
      `the limit stored ${journals.n} journals and ${lines.n} lines; it made ${run.journals} and ${run.lines}`,
    );
  }
}

/** `processChunk` over the parsed events of every body, `ENGINE_PASSES` times after one warm-up. */
function measureEngine(
  prepared: PreparedAccountingRevision,
  validator: RecordValidator,
  bodies: readonly ChunkBody[],
): EngineRun {
  const chunks: ClaimedChunk[] = bodies.map((body, index) => ({
    ingestionId: LIMIT_INGESTION_ID,
    chunkSeq: index + 1,
    namespace: LEDGER_NAMESPACE,
    entity: BUSINESS_EVENT_ENTITY_NAME,
    records: recordsOf(validateChunkBody(body.body, validator).accepted).map((record, position) => ({
      recordId: index * body.records + position + 1,
      ...record,
    })),
    seenOriginJournalIds: new Set(),
    bookedOriginJournals: new Map(),
  }));
  const pass = () => {
    let journals = 0;
    for (const chunk of chunks) {
      const outcome = processChunk(prepared, chunk, contextFor(LIMIT_INGESTION_ID));
      checkOutcome(outcome);
      journals += outcome.journals.length;
    }
    return journals;
  };
  pass();
  let journals = 0;
  const startMs = performance.now();
  for (let n = 0; n < ENGINE_PASSES; n += 1) journals += pass();
  const ms = performance.now() - startMs;
  const events = ENGINE_PASSES * bodies.reduce((sum, body) => sum + body.records, 0);
  return { events, journals, ms };
}

/**
 * One round on a fresh database of `dialect` (made as the service makes its own: `openStore`
 * and the migrations): the events are stored untimed, a warm-up session is processed untimed,
 * then the limit is timed, and the engine alone right after it.
 */
export async function measureLimitRound(dialect: Dialect, bodies: readonly ChunkBody[]): Promise<LimitRound> {
  const { prepared, validator } = fixture();
  const database = await createDatabase(dialect);
  try {
    const store = openStore(database.url);
    try {
      await migrateToLatest(store);
      const warmup = bodies.slice(0, LIMIT_WARMUP_CHUNKS);
      await storeEvents(store, WARMUP_INGESTION_ID, warmup, validator);
      await storeEvents(store, LIMIT_INGESTION_ID, bodies, validator);
      await processSession(store, prepared, WARMUP_INGESTION_ID, warmup.length);
      const limit = await processSession(store, prepared, LIMIT_INGESTION_ID, bodies.length);
      await verifyStored(store, limit);
      return { storage: database.storage, limit, engine: measureEngine(prepared, validator, bodies) };
    } finally {
      await store.close();
    }
  } finally {
    await database.drop();
  }
}
