/**
 * What both claim protocols share (`claim-sqlite.ts`, `claim-postgres.ts`): the scan for waiting
 * chunks, the records one claim takes, and the reading of a claimed chunk with what processing
 * journal lines needs from earlier chunks. The protocols differ in how they hold the chunk
 * while it is worked on; `ClaimProtocol` is what each gives the accounting store.
 */
import type { Kysely, Transaction } from 'kysely';
import {
  type AccountingStore,
  BUSINESS_EVENT_ROLLBACK_ENTITY_NAME,
  type ChunkProcessing,
  type ChunkRef,
  type ClaimedChunk,
  JOURNAL_ENTITY_NAME,
  type LegacyEventForm,
} from '../../modules/accounting/store.js';
import type { Database } from '../schema.js';
import type { DialectAdapter } from '../store.js';

/** The work a claim hands its chunk to (the processor's engine run). */
export type ClaimedChunkHandler = Parameters<AccountingStore['processNextChunk']>[2];

/** Where a claim is: the chunk it holds, once it has taken one, so a failure can be put on it. */
export interface ClaimHold {
  chunk: ChunkRef | undefined;
}

/** A waiting record as a claim reads it. */
export interface WaitingRecord {
  record_id: number;
  record_index: number;
  namespace: string;
  entity: string;
  data: string;
  reprocess_run: number | null;
}

/**
 * How a dialect claims a chunk, processes it and writes the outcome (`processNext`: the
 * discriminated `ChunkProcessing`, or a throw with `hold.chunk` naming the chunk it held), and
 * which records a failure put on a chunk covers (`recordsToFail`: inside `trx`, the waiting
 * records one claim takes; none when another transaction holds the chunk).
 */
export interface ClaimProtocol {
  processNext(
    revision: number,
    at: string,
    work: ClaimedChunkHandler,
    hold: ClaimHold,
    periodsVersion: number | undefined,
  ): Promise<ChunkProcessing>;
  recordsToFail(trx: Transaction<Database>, chunk: ChunkRef): Promise<WaitingRecord[]>;
}

export const IDLE: ChunkProcessing = { kind: 'idle' };
export const STALE: ChunkProcessing = { kind: 'retry', reason: 'stale-configuration' };
export const STALE_PERIODS: ChunkProcessing = { kind: 'retry', reason: 'stale-periods' };

export function refOf(chunk: ChunkRef): ChunkRef {
  return { ingestionId: chunk.ingestionId, chunkSeq: chunk.chunkSeq };
}

/** Candidate chunks looked at per claim; others' locked chunks are skipped. */
const CLAIM_CANDIDATES_MAX = 16;

/**
 * The chunks with records waiting, oldest first, at most CLAIM_CANDIDATES_MAX: a loose scan of
 * the index of waiting records (`records_to_process`). Each step reads the next waiting record
 * after the last chunk found, then that chunk's last waiting record, so a claim costs a few
 * index lookups per candidate however long the backlog (a GROUP BY over every waiting record
 * cost 15 ms per claim at 200,000 waiting). On PostgreSQL, whose concurrent inserts interleave
 * record ids, a chunk whose waiting records all lie between another's may be passed over by one
 * claim and found by the next.
 */
export async function* waitingChunks(
  trx: Kysely<Database>,
): AsyncGenerator<{ ingestion_id: string; chunk_seq: number }> {
  let after = 0;
  for (let n = 0; n < CLAIM_CANDIDATES_MAX; n += 1) {
    const next = await trx
      .selectFrom('records')
      .select(['record_id', 'ingestion_id', 'chunk_seq'])
      .where('processing', '=', 1)
      .where('record_id', '>', after)
      .orderBy('record_id')
      .limit(1)
      .executeTakeFirst();
    if (next === undefined) return;
    yield next;
    const last = await trx
      .selectFrom('records')
      .select((eb) => eb.fn.max('record_id').as('record_id'))
      .where('ingestion_id', '=', next.ingestion_id)
      .where('chunk_seq', '=', next.chunk_seq)
      .where('processing', '=', 1)
      .executeTakeFirst();
    // Null when processed meanwhile by another instance: go on after the record just read.
    after = Number(last?.record_id ?? next.record_id);
  }
}

/**
 * The waiting records of a chunk that one claim takes, in order: at most `recordsMax` when
 * given (SQLite), except that journal lines are never split: a direct journal's lines must be
 * processed together.
 */
export async function claimedRecords(
  trx: Kysely<Database>,
  chunk: ChunkRef,
  recordsMax: number | undefined,
): Promise<WaitingRecord[]> {
  const waiting = trx
    .selectFrom('records')
    .select(['record_id', 'record_index', 'namespace', 'entity', 'data', 'reprocess_run'])
    .where('ingestion_id', '=', chunk.ingestionId)
    .where('chunk_seq', '=', chunk.chunkSeq)
    .where('processing', '=', 1)
    .orderBy('record_id');
  if (recordsMax === undefined) return waiting.execute();
  const records = await waiting.limit(recordsMax).execute();
  return records[0]?.entity === JOURNAL_ENTITY_NAME ? waiting.execute() : records;
}

/** A journal that holds an origin journal id for its accounting configuration. */
interface BookedOriginJournal {
  journal_id: string;
  accounting_config: string;
  origin_journal_id: string;
}

/**
 * The journals, of any session, that hold an origin journal id the chunk's records may carry.
 * Which field carries it is named by the configuration, which the store does not read, so every
 * text value of the records is a candidate: only values that are some journal's origin journal id
 * match, through the unique index of migration 0007. Reversals carry their journal's origin id
 * and are left out, as are the repeats marked by that migration.
 */
async function bookedOriginJournals(
  trx: Kysely<Database>,
  adapter: DialectAdapter,
  records: readonly Record<string, unknown>[],
): Promise<BookedOriginJournal[]> {
  const candidates = new Set<string>();
  for (const record of records) {
    for (const value of Object.values(record)) if (typeof value === 'string') candidates.add(value);
  }
  if (candidates.size === 0) return [];
  const among = adapter.textIn('origin_journal_id', [...candidates]);
  const rows = await trx
    .selectFrom('journals')
    .select(['journal_id', 'accounting_config', 'origin_journal_id'])
    .where('origin_journal_id', 'is not', null)
    .where('reverses', 'is', null)
    .where('duplicate_of', 'is', null)
    .where(among)
    .execute();
  return rows.flatMap((row) =>
    row.origin_journal_id === null ? [] : [{ ...row, origin_journal_id: row.origin_journal_id }],
  );
}

/**
 * The claimed chunk as processing sees it, from its claimed `records` (at least one). Only
 * journal lines need the origin journal ids of the session's earlier chunks and the journals
 * already booked under the origin journal ids they carry; the caller has made sure, for journal
 * lines, that no other transaction processes journal lines meanwhile (`claim-postgres.ts`).
 */
export async function claimedChunk(
  trx: Kysely<Database>,
  adapter: DialectAdapter,
  chunk: ChunkRef,
  records: readonly WaitingRecord[],
): Promise<ClaimedChunk | undefined> {
  const first = records[0];
  if (first === undefined) return undefined;
  const data = records.map((r) => JSON.parse(r.data) as Record<string, unknown>);
  let origins: { origin_journal_id: string | null }[] = [];
  let booked: BookedOriginJournal[] = [];
  if (first.entity === JOURNAL_ENTITY_NAME) {
    origins = await trx
      .selectFrom('journals')
      .select('origin_journal_id')
      .distinct()
      .where('ingestion_id', '=', chunk.ingestionId)
      .where('origin_journal_id', 'is not', null)
      .execute();
    booked = await bookedOriginJournals(trx, adapter, data);
  }
  const legacyEventForms =
    first.entity === BUSINESS_EVENT_ROLLBACK_ENTITY_NAME ? await legacyEventFormsOf(trx) : undefined;
  const bookedByConfig = new Map<string, Map<string, string>>();
  for (const journal of booked) {
    const byOrigin = bookedByConfig.get(journal.accounting_config) ?? new Map<string, string>();
    byOrigin.set(journal.origin_journal_id, journal.journal_id);
    bookedByConfig.set(journal.accounting_config, byOrigin);
  }
  return {
    ...chunk,
    namespace: first.namespace,
    entity: first.entity,
    records: records.map((r, i) => ({
      recordId: Number(r.record_id),
      index: r.record_index,
      data: data[i] ?? {},
      ...(r.reprocess_run === null ? {} : { reprocessRun: Number(r.reprocess_run) }),
    })),
    seenOriginJournalIds: new Set(
      origins.map((o) => o.origin_journal_id).filter((o): o is string => o !== null),
    ),
    bookedOriginJournals: bookedByConfig,
    ...(legacyEventForms === undefined ? {} : { legacyEventForms }),
  };
}

/**
 * The attribute plans of the first fingerprint form (migration 0032): a handful of rows at most,
 * none in a store made after it, read for chunks of rollback records only.
 */
export async function legacyEventFormsOf(db: Kysely<Database>): Promise<LegacyEventForm[]> {
  const rows = await db.selectFrom('event_fingerprint_forms').select('plan').orderBy('plan').execute();
  return rows.map((row) => JSON.parse(row.plan) as LegacyEventForm);
}
