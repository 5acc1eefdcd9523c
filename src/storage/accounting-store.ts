// Over 500 lines on purpose for now: both dialects' claim protocols, the write of a processed
// chunk and the record of a failed one share the row builders and the column lists below.
// Splitting it by protocol and dialect belongs with the split of storage/ by concern.
import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import {
  type AccountingStore,
  type ChunkOutcome,
  type ChunkProcessing,
  type ChunkRef,
  type ClaimedChunk,
  JOURNAL_ENTITY_NAME,
  type JournalDraft,
  type StoredJournal,
} from '../modules/accounting/store.js';
import { createBulkInsert } from './bulk-insert.js';
import { storedRevision } from './configuration-store.js';
import { countRows } from './count.js';
import { type Dialect, isRetryableStoreError, type Store } from './database.js';
import type { Database, JournalsTable, ProcessingErrorsTable } from './schema.js';

/** Rolls a write back when the chunk's records were processed by someone else meanwhile. */
class ChunkTaken extends Error {
  constructor() {
    super('the chunk was processed while it was being worked on');
  }
}

/** What a chunk's processing did when it threw: nothing was written, the caller decides. */
function failed(chunk: ChunkRef, error: unknown): ChunkProcessing {
  return { kind: 'failed', chunk, error, transient: isRetryableStoreError(error) };
}

function refOf(chunk: ChunkRef): ChunkRef {
  return { ingestionId: chunk.ingestionId, chunkSeq: chunk.chunkSeq };
}

/** Where a claim is: the chunk it holds, once it has taken one, so a failure can be put on it. */
interface ClaimHold {
  chunk: ChunkRef | undefined;
}

/** Candidate chunks looked at per claim; others' locked chunks are skipped. */
const CLAIM_CANDIDATES_MAX = 16;
/**
 * SQLite: records of a chunk worked on and written in one go at most. With the processing thread
 * the service has two SQLite connections and one writer at a time: while the thread writes,
 * ingestion's chunk writes wait for the lock, and better-sqlite3 waits on the event loop. A
 * 2,000-event write held the lock for hundreds of milliseconds; 500 records bound the wait
 * (docs/adr/0013-processing-thread.md). Journal lines are never split: a direct journal's lines
 * must be processed together.
 */
const SQLITE_PROCESSING_RECORDS_PER_WRITE_MAX = 500;
/** A node's field values as JSON with sorted keys: equal nodes, equal text (for grouping). */
function canonicalNodeJson(node: Readonly<Record<string, string>>): string {
  return JSON.stringify(
    Object.fromEntries(Object.entries(node).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
  );
}

/**
 * The canonical JSON of the nodes of written journals, by node object: the engine hands every
 * journal of a node the configuration's one frozen object, so a chunk's journals share a handful.
 */
const nodeJsonMemo = new WeakMap<Readonly<Record<string, string>>, string>();

function nodeJsonOf(node: Readonly<Record<string, string>>): string {
  let json = nodeJsonMemo.get(node);
  if (json === undefined) {
    json = canonicalNodeJson(node);
    if (Object.isFrozen(node)) nodeJsonMemo.set(node, json);
  }
  return json;
}

/** The columns of a journal row; the processing benchmark writes with them too (bench/processing-limit.ts). */
export const JOURNAL_COLUMNS: readonly string[] = [
  'journal_id',
  'ingestion_id',
  'record_id',
  'core_date',
  'original_core_date',
  'journal_type',
  'accounting_config',
  'node',
  'posted',
  'reverses',
  'reversed_by',
  'origin_journal_id',
  'line_count',
  'created_at',
];

/** The columns of a journal line row. */
export const LINE_COLUMNS: readonly string[] = [
  'line_id',
  'journal_id',
  'line_no',
  'account',
  'amount',
  'currency',
  'extras',
];

const ERROR_COLUMNS: readonly (keyof ProcessingErrorsTable & string)[] = [
  'ingestion_id',
  'record_id',
  'namespace',
  'entity',
  'code',
  'message',
  'record',
  'created_at',
];

/** A journal row in the order of JOURNAL_COLUMNS. */
export function journalRow(recordId: number, draft: JournalDraft, at: string): unknown[] {
  return [
    draft.journalId,
    draft.ingestionId,
    recordId,
    draft.coreDate,
    draft.originalCoreDate ?? null,
    draft.journalType,
    draft.accountingConfig,
    nodeJsonOf(draft.node),
    draft.status === 'posted' ? 1 : 0,
    draft.reverses ?? null,
    draft.reversedBy ?? null,
    draft.originJournalId ?? null,
    draft.lines.length,
    at,
  ];
}

/** The line rows of a chunk's journals, in the order of LINE_COLUMNS; a line stores its extras only. */
export function lineRows(journals: ChunkOutcome['journals']): unknown[][] {
  return journals.flatMap(({ draft }) =>
    draft.lines.map((line) => [
      line.lineId,
      draft.journalId,
      line.lineNo,
      line.account,
      line.amount,
      line.currency,
      JSON.stringify(line.extras),
    ]),
  );
}

/** The rows a chunk's processing writes; on SQLite built before the write transaction begins. */
interface OutcomeRows {
  journals: unknown[][];
  lines: unknown[][];
  errors: unknown[][];
  /** Records with a processing error (each counted once, however many errors it has). */
  failedRecords: number;
}

function outcomeRows(chunk: ClaimedChunk, outcome: ChunkOutcome, at: string): OutcomeRows {
  return {
    journals: outcome.journals.map(({ recordId, draft }) => journalRow(recordId, draft, at)),
    lines: lineRows(outcome.journals),
    errors: outcome.errors.map((e) => [
      chunk.ingestionId,
      e.recordId,
      chunk.namespace,
      chunk.entity,
      e.code,
      e.message,
      JSON.stringify(e.record),
      at,
    ]),
    failedRecords: new Set(outcome.errors.map((e) => e.recordId)).size,
  };
}

function toJournal(row: Selectable<JournalsTable>, lines: StoredJournal['lines']): StoredJournal {
  return {
    journalId: row.journal_id,
    status: Number(row.posted) === 1 ? 'posted' : 'unposted',
    coreDate: row.core_date,
    originalCoreDate: row.original_core_date,
    journalType: row.journal_type,
    accountingConfig: row.accounting_config,
    ingestionId: row.ingestion_id,
    reverses: row.reverses,
    reversedBy: row.reversed_by,
    originJournalId: row.origin_journal_id,
    node: JSON.parse(row.node) as Record<string, string>,
    lines,
  };
}

/** A journal that holds an origin journal id for its accounting configuration. */
interface BookedOriginJournal {
  journal_id: string;
  accounting_config: string;
  origin_journal_id: string;
}

/** The key of the PostgreSQL advisory lock that lets one transaction at a time process direct journals. */
const DIRECT_JOURNAL_LOCK_NAME = 'ledgerflow: direct journals';

/**
 * Takes the turn of processing direct journals for the rest of the transaction (PostgreSQL);
 * false when another transaction holds it.
 */
async function takeDirectJournalTurn(trx: Kysely<Database>): Promise<boolean> {
  const { rows } = await sql<{ taken: boolean }>`
    select pg_try_advisory_xact_lock(hashtext(${DIRECT_JOURNAL_LOCK_NAME})) as taken
  `.execute(trx);
  return rows[0]?.taken === true;
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
  dialect: Dialect,
  records: readonly Record<string, unknown>[],
): Promise<BookedOriginJournal[]> {
  const candidates = new Set<string>();
  for (const record of records) {
    for (const value of Object.values(record)) if (typeof value === 'string') candidates.add(value);
  }
  if (candidates.size === 0) return [];
  // One parameter however many candidates: an array on PostgreSQL, a JSON array on SQLite.
  const among =
    dialect === 'postgres'
      ? sql<boolean>`origin_journal_id = any(${[...candidates]}::text[])`
      : sql<boolean>`origin_journal_id in (select value from json_each(${JSON.stringify([...candidates])}))`;
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
 * The accounting port over Kysely. The unit of work is one chunk: its unprocessed records are
 * claimed, processed by the pure engine, and their results written with the processed marks in
 * one transaction. On PostgreSQL the chunk row is locked with `FOR UPDATE SKIP LOCKED`, so
 * several instances work on different chunks at once and never on the same one.
 */
export function createAccountingStore(store: Store): AccountingStore {
  const { db, dialect } = store;
  const bulkInsert = createBulkInsert(store);

  /**
   * The chunks with records waiting, oldest first, at most CLAIM_CANDIDATES_MAX: a loose scan of
   * the index of waiting records (`records_to_process`). Each step reads the next waiting record
   * after the last chunk found, then that chunk's last waiting record, so a claim costs a few
   * index lookups per candidate however long the backlog (a GROUP BY over every waiting record
   * cost 15 ms per claim at 200,000 waiting). On PostgreSQL, whose concurrent inserts interleave
   * record ids, a chunk whose waiting records all lie between another's may be passed over by one
   * claim and found by the next.
   */
  async function* waitingChunks(
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

  /** The waiting records of a chunk that one claim takes, in order (SQLite: a bounded part). */
  async function claimedRecords(trx: Kysely<Database>, chunk: ChunkRef) {
    const waiting = trx
      .selectFrom('records')
      .select(['record_id', 'record_index', 'namespace', 'entity', 'data'])
      .where('ingestion_id', '=', chunk.ingestionId)
      .where('chunk_seq', '=', chunk.chunkSeq)
      .where('processing', '=', 1)
      .orderBy('record_id');
    const records = await (dialect === 'sqlite'
      ? waiting.limit(SQLITE_PROCESSING_RECORDS_PER_WRITE_MAX)
      : waiting
    ).execute();
    return dialect === 'sqlite' && records[0]?.entity === JOURNAL_ENTITY_NAME ? waiting.execute() : records;
  }

  /**
   * Reads the next waiting chunk; on PostgreSQL, inside `trx`, it also locks the chunk. `hold`
   * names the chunk from the moment it is taken, so that a failure while reading it is its own.
   */
  async function claim(trx: Kysely<Database>, hold: ClaimHold): Promise<ClaimedChunk | undefined> {
    for await (const candidate of waitingChunks(trx)) {
      hold.chunk = undefined;
      const lockQuery = trx
        .selectFrom('chunks')
        .select('chunk_seq')
        .where('ingestion_id', '=', candidate.ingestion_id)
        .where('chunk_seq', '=', candidate.chunk_seq);
      const locked = await (dialect === 'postgres'
        ? lockQuery.forUpdate().skipLocked()
        : lockQuery
      ).executeTakeFirst();
      if (locked === undefined) continue;
      const chunk: ChunkRef = { ingestionId: candidate.ingestion_id, chunkSeq: Number(candidate.chunk_seq) };
      hold.chunk = chunk;
      const records = await claimedRecords(trx, chunk);
      const first = records[0];
      if (first === undefined) continue;
      const data = records.map((r) => JSON.parse(r.data) as Record<string, unknown>);
      // Only journal lines need the origin journal ids of the session's earlier chunks and the
      // journals already booked under the origin journal ids they carry.
      let origins: { origin_journal_id: string | null }[] = [];
      let booked: BookedOriginJournal[] = [];
      if (first.entity === JOURNAL_ENTITY_NAME) {
        // Direct journals are processed one chunk at a time across every instance: the journals
        // already booked are read below, and a chunk processed meanwhile elsewhere could book the
        // same origin journal id after that read. Another round takes other work instead of
        // waiting; the unique index of migration 0007 backs the rule up.
        if (dialect === 'postgres' && !(await takeDirectJournalTurn(trx))) {
          hold.chunk = undefined;
          continue;
        }
        if (dialect === 'postgres') {
          // Journal lines of one session are processed one chunk at a time, so each chunk sees the
          // origin journal ids of the chunks before it: a direct journal may not be split across
          // chunks (docs/domain/accounting.md, Direct journals).
          await trx
            .selectFrom('ingestions')
            .select('ingestion_id')
            .where('ingestion_id', '=', candidate.ingestion_id)
            .forUpdate()
            .execute();
        }
        origins = await trx
          .selectFrom('journals')
          .select('origin_journal_id')
          .distinct()
          .where('ingestion_id', '=', candidate.ingestion_id)
          .where('origin_journal_id', 'is not', null)
          .execute();
        booked = await bookedOriginJournals(trx, dialect, data);
      }
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
        })),
        seenOriginJournalIds: new Set(
          origins.map((o) => o.origin_journal_id).filter((o): o is string => o !== null),
        ),
        bookedOriginJournals: bookedByConfig,
      };
    }
    hold.chunk = undefined;
    return undefined;
  }

  /**
   * Marks the chunk's records processed and writes the rows of what processing them produced.
   * Returns false, having written nothing, when the records were no longer all waiting (SQLite
   * works on a chunk outside the transaction; someone else processed it meanwhile, or an upload
   * wiped it): the caller then rolls back.
   */
  async function write(trx: Transaction<Database>, chunk: ClaimedChunk, rows: OutcomeRows): Promise<boolean> {
    const marked = await trx
      .updateTable('records')
      .set({ processing: 0 })
      .where('ingestion_id', '=', chunk.ingestionId)
      .where('chunk_seq', '=', chunk.chunkSeq)
      .where('processing', '=', 1)
      // The claim holds the chunk's first waiting records by id, maybe not all of them (SQLite).
      .where('record_id', '>=', chunk.records[0]?.recordId ?? 0)
      .where('record_id', '<=', chunk.records.at(-1)?.recordId ?? 0)
      .executeTakeFirst();
    if (Number(marked.numUpdatedRows) !== chunk.records.length) return false;
    await bulkInsert(trx, 'journals', JOURNAL_COLUMNS, rows.journals);
    await bulkInsert(trx, 'journal_lines', LINE_COLUMNS, rows.lines);
    await bulkInsert(trx, 'processing_errors', ERROR_COLUMNS, rows.errors);
    await trx
      .updateTable('ingestions')
      .set((eb) => ({
        processed_rows: eb('processed_rows', '+', chunk.records.length),
        processing_failed_rows: eb('processing_failed_rows', '+', rows.failedRecords),
      }))
      .where('ingestion_id', '=', chunk.ingestionId)
      .execute();
    return true;
  }

  async function journalsWithLines(rows: Selectable<JournalsTable>[]): Promise<StoredJournal[]> {
    if (rows.length === 0) return [];
    const lines = await db
      .selectFrom('journal_lines')
      .select(['journal_id', 'line_id', 'line_no', 'account', 'amount', 'currency', 'extras'])
      .where(
        'journal_id',
        'in',
        rows.map((r) => r.journal_id),
      )
      .orderBy('journal_id')
      .orderBy('line_no')
      .execute();
    const byJournal = new Map<string, StoredJournal['lines']>();
    for (const line of lines) {
      const list = byJournal.get(line.journal_id) ?? [];
      list.push({
        lineId: line.line_id,
        lineNo: line.line_no,
        account: line.account,
        amount: String(line.amount),
        currency: line.currency,
        extras: JSON.parse(line.extras) as Record<string, unknown>,
      });
      byJournal.set(line.journal_id, list);
    }
    return rows.map((row) => toJournal(row, byJournal.get(row.journal_id) ?? []));
  }

  const IDLE: ChunkProcessing = { kind: 'idle' };
  const STALE: ChunkProcessing = { kind: 'retry', reason: 'stale-configuration' };

  /**
   * PostgreSQL: one transaction. The chunk row stays locked while it is worked on: other
   * instances skip it, and ingestion, which never locks chunk rows of earlier chunks, goes on.
   */
  async function processNextPostgres(
    revision: number,
    at: string,
    work: Parameters<AccountingStore['processNextChunk']>[2],
    hold: ClaimHold,
  ): Promise<ChunkProcessing> {
    return db.transaction().execute(async (trx) => {
      const chunk = await claim(trx, hold);
      if (chunk === undefined) return IDLE;
      // The chunk belongs to the configuration stored now (an upload wipes older sessions);
      // if the caller prepared another revision, it must not process this chunk with it.
      if ((await storedRevision(trx)) !== revision) return STALE;
      const rows = outcomeRows(chunk, await work(chunk), at);
      if (!(await write(trx, chunk, rows))) throw new Error('a locked chunk changed');
      return { kind: 'processed', chunk: refOf(chunk), records: chunk.records.length };
    });
  }

  /**
   * SQLite has one writer: a transaction held open while the chunk is worked on (flow scripts
   * included) would stall every other write. So the chunk is read, worked on and its rows built
   * first; the write transaction then checks the revision and that the records still wait, and
   * holds the lock only for the inserts.
   */
  async function processNextSqlite(
    revision: number,
    at: string,
    work: Parameters<AccountingStore['processNextChunk']>[2],
    hold: ClaimHold,
  ): Promise<ChunkProcessing> {
    const chunk = await claim(db, hold);
    if (chunk === undefined) return IDLE;
    if ((await storedRevision(db)) !== revision) return STALE;
    const rows = outcomeRows(chunk, await work(chunk), at);
    return db.transaction().execute(async (trx) => {
      if ((await storedRevision(trx)) !== revision) return STALE;
      if (!(await write(trx, chunk, rows))) throw new ChunkTaken();
      return { kind: 'processed', chunk: refOf(chunk), records: chunk.records.length };
    });
  }

  return {
    async processNextChunk(revision, at, work) {
      const hold: ClaimHold = { chunk: undefined };
      try {
        return await (dialect === 'postgres' ? processNextPostgres : processNextSqlite)(
          revision,
          at,
          work,
          hold,
        );
      } catch (error) {
        if (error instanceof ChunkTaken) return { kind: 'retry', reason: 'chunk-taken' };
        // Before a chunk was taken the fault is the store's, not a chunk's: the caller's round fails.
        if (hold.chunk === undefined) throw error;
        return failed(hold.chunk, error);
      }
    },

    async failChunk(chunk, at, failure) {
      return db.transaction().execute(async (trx) => {
        if (dialect === 'postgres') {
          const locked = await trx
            .selectFrom('chunks')
            .select('chunk_seq')
            .where('ingestion_id', '=', chunk.ingestionId)
            .where('chunk_seq', '=', chunk.chunkSeq)
            .forUpdate()
            .skipLocked()
            .executeTakeFirst();
          if (locked === undefined) return 0;
        }
        const records = await claimedRecords(trx, chunk);
        const first = records[0]?.record_id;
        const last = records.at(-1)?.record_id;
        if (first === undefined || last === undefined) return 0;
        const claimed = trx
          .selectFrom('records')
          .where('ingestion_id', '=', chunk.ingestionId)
          .where('chunk_seq', '=', chunk.chunkSeq)
          .where('processing', '=', 1)
          .where('record_id', '>=', first)
          .where('record_id', '<=', last);
        // The record is copied as stored: its JSON text never holds what a store refuses.
        await trx
          .insertInto('processing_errors')
          .columns(ERROR_COLUMNS)
          .expression(
            claimed.select([
              'ingestion_id',
              'record_id',
              'namespace',
              'entity',
              sql<string>`cast(${failure.code} as text)`.as('code'),
              sql<string>`cast(${failure.message} as text)`.as('message'),
              'data',
              sql<string>`cast(${at} as text)`.as('created_at'),
            ]),
          )
          .execute();
        const marked = await trx
          .updateTable('records')
          .set({ processing: 0 })
          .where('ingestion_id', '=', chunk.ingestionId)
          .where('chunk_seq', '=', chunk.chunkSeq)
          .where('processing', '=', 1)
          .where('record_id', '>=', first)
          .where('record_id', '<=', last)
          .executeTakeFirst();
        const count = Number(marked.numUpdatedRows);
        await trx
          .updateTable('ingestions')
          .set((eb) => ({
            processed_rows: eb('processed_rows', '+', count),
            processing_failed_rows: eb('processing_failed_rows', '+', count),
          }))
          .where('ingestion_id', '=', chunk.ingestionId)
          .execute();
        return count;
      });
    },

    async postDue(node, businessDate) {
      const result = await db
        .updateTable('journals')
        .set({ posted: 1 })
        .where('posted', '=', 0)
        .where('node', '=', canonicalNodeJson(node))
        .where('core_date', '<=', businessDate)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async unpostedNodes() {
      const rows = await db
        .selectFrom('journals')
        .select('node')
        .distinct()
        .where('posted', '=', 0)
        .execute();
      return rows.map((r) => JSON.parse(r.node) as Record<string, string>);
    },

    async listJournals(filter, page, limit) {
      let query = db.selectFrom('journals');
      if (filter.status !== undefined) query = query.where('posted', '=', filter.status === 'posted' ? 1 : 0);
      if (filter.ingestionId !== undefined) query = query.where('ingestion_id', '=', filter.ingestionId);
      if (filter.accountingConfig !== undefined)
        query = query.where('accounting_config', '=', filter.accountingConfig);
      if (filter.from !== undefined) query = query.where('core_date', '>=', filter.from);
      if (filter.to !== undefined) query = query.where('core_date', '<', filter.to);
      const rows = await query
        .selectAll()
        .orderBy('core_date')
        .orderBy('created_at')
        .orderBy('journal_id')
        .limit(limit)
        .offset(page * limit)
        .execute();
      const total = await countRows(query);
      return { rows: await journalsWithLines(rows), total };
    },

    async findJournal(journalId) {
      const row = await db
        .selectFrom('journals')
        .selectAll()
        .where('journal_id', '=', journalId)
        .executeTakeFirst();
      return row === undefined ? undefined : (await journalsWithLines([row]))[0];
    },

    async balances(filter) {
      const total =
        dialect === 'postgres' ? sql<string>`sum(l.amount)::text` : sql<string>`decimal_sum(l.amount)`;
      let query = db
        .selectFrom('journal_lines as l')
        .innerJoin('journals as j', 'j.journal_id', 'l.journal_id')
        .where('j.posted', '=', 1);
      if (filter.accountingConfig !== undefined)
        query = query.where('j.accounting_config', '=', filter.accountingConfig);
      if (filter.asOf !== undefined) query = query.where('j.core_date', '<=', filter.asOf);
      if (filter.account !== undefined) query = query.where('l.account', '=', filter.account);
      if (filter.currency !== undefined) query = query.where('l.currency', '=', filter.currency);
      const rows = await query
        .select(['j.accounting_config', 'j.node', 'l.account', 'l.currency', total.as('balance')])
        .groupBy(['j.accounting_config', 'j.node', 'l.account', 'l.currency'])
        .orderBy('j.accounting_config')
        .orderBy('j.node')
        .orderBy('l.account')
        .orderBy('l.currency')
        .execute();
      return rows.map((r) => ({
        accountingConfig: r.accounting_config,
        node: JSON.parse(r.node) as Record<string, string>,
        account: r.account,
        currency: r.currency,
        balance: String(r.balance),
      }));
    },

    async listProcessingErrors(filter, page, limit) {
      let query = db.selectFrom('processing_errors');
      if (filter.ingestionId !== undefined) query = query.where('ingestion_id', '=', filter.ingestionId);
      if (filter.code !== undefined) query = query.where('code', '=', filter.code);
      const rows = await query
        .selectAll()
        .orderBy('id')
        .limit(limit)
        .offset(page * limit)
        .execute();
      const total = await countRows(query);
      return {
        rows: rows.map((r) => ({
          ingestionId: r.ingestion_id,
          namespace: r.namespace,
          entity: r.entity,
          code: r.code,
          message: r.message,
          record: JSON.parse(r.record) as Record<string, unknown>,
          at: r.created_at,
        })),
        total,
      };
    },
  };
}
