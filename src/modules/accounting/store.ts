import type { KeyedPage, PageStart } from '../../lib/keyed-page.js';
import type { AuditActor } from '../audit/entry.js';
import type { JournalDraft } from './journal-draft.js';
import type { StoredJournalValues, StoredLineValues } from './line-record.js';
import type { PeriodStates } from './periods.js';

/*
 * The ports of the accounting module: storage may import of a module only its `store.ts` (the
 * layering test), and processing, reprocessing, reversals and rollbacks all have their adapters
 * in storage/accounting. The reversals port lives in `reversal-store.ts`; what its adapter names
 * is re-exported here.
 */
/**
 * What the storage adapter needs besides the port: the journal drafts it writes, and the names of
 * the entities whose chunks need more than their records: direct journals (their origin journal
 * ids are read per claim) and rollbacks (the first fingerprint form's plans).
 */
export { BUSINESS_EVENT_ROLLBACK_ENTITY_NAME, JOURNAL_ENTITY_NAME } from '../configuration/model.js';
/** What a store asserts of every journal it writes, whatever made it (`invariants.ts`). */
export { assertJournalBalances } from './invariants.js';
/** The reversal journal builder the storage adapter of corrections writes with (`reversal-write.ts`). */
export {
  type ReversalTotal,
  ReversalTotals,
  type ReversalWindow,
  type ReversibleJournal,
  reversalDateOf,
  reversalJournalOf,
} from './reversal-journals.js';
/** The reversals port and its limits, for their adapter (`reversal-store.ts`, `reversal-write.ts`). */
export {
  type OpenWindowOf,
  REVERSAL_IDS_LISTED_MAX,
  REVERSAL_JOURNALS_PER_REQUEST_MAX,
  type ReversalCounts,
  type ReversalRow,
  type ReversalSelection,
  type ReversalStore,
  type ReversalTables,
  type ReversalWithdrawal,
  type StoredReversal,
} from './reversal-store.js';
export type { AuditActor, JournalDraft, PeriodStates };

/** A chunk, named by its session and sequence number. */
export interface ChunkRef {
  ingestionId: string;
  chunkSeq: number;
}

/**
 * What one call of `processNextChunk` did:
 * - `processed`: the chunk's claimed records were processed and their results written;
 * - `idle`: no record waits;
 * - `retry`: nothing was written, and the caller should try again: the stored configuration is
 *   no longer the caller's revision (`stale-configuration`: take the current one first), the
 *   period states are no longer the caller's version (`stale-periods`: read them again), or the
 *   records were processed by someone else while they were worked on (`chunk-taken`, SQLite);
 * - `failed`: processing the claimed chunk threw (a store error, a bug, a record the engine or the
 *   store cannot handle) and nothing was written; `transient` when the store says the fault may
 *   pass (a lost connection, a timeout, a conflict with a concurrent writer), so trying again may
 *   succeed. The caller decides between trying again and `failChunk`.
 */
export type ChunkProcessing =
  | { kind: 'processed'; chunk: ChunkRef; records: number }
  | { kind: 'idle' }
  | { kind: 'retry'; reason: 'stale-configuration' | 'stale-periods' | 'chunk-taken' }
  | { kind: 'failed'; chunk: ChunkRef; error: unknown; transient: boolean };

/** Records of one chunk claimed for processing, in arrival order. */
export interface ClaimedChunk {
  ingestionId: string;
  chunkSeq: number;
  namespace: string;
  entity: string;
  /**
   * `reprocessRun` names the reprocessing run that put a record back into the queue: its open
   * error is updated, or closed when it posts, instead of a new one written.
   */
  records: { recordId: number; index: number; data: Record<string, unknown>; reprocessRun?: number }[];
  /** Origin journal ids already stored for this session: a direct journal is sent in one chunk. */
  seenOriginJournalIds: ReadonlySet<string>;
  /**
   * Journals already booked (posted or not), in any session, for the origin journal ids this
   * chunk may carry: accounting configuration → origin journal id → journal id. An origin journal
   * id is booked once per accounting configuration (docs/domain/accounting.md, Direct journals).
   */
  bookedOriginJournals: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /**
   * For a chunk of rollback records: the attribute plans of the journals stored under the first
   * fingerprint form (`event_fingerprint_forms`), each a list of attribute names and whether each
   * is a decimal, in name order; empty when the store has none.
   */
  legacyEventForms?: readonly LegacyEventForm[];
}

/** One attribute plan of the first fingerprint form, as the store keeps it. */
export type LegacyEventForm = readonly { name: string; decimal: boolean }[];

/** What processing one claimed chunk produced, written in the claim's own transaction. */
export interface ChunkOutcome {
  /** Each journal with the record it was made from. */
  journals: { recordId: number; draft: JournalDraft }[];
  errors: { recordId: number; code: string; message: string; record: Record<string, unknown> }[];
  /**
   * The rollback records of the chunk (`ledger/businessEventRollback`), settled by the write
   * path inside the claim's transaction, where their twins are looked up and withdrawn
   * (docs/domain/accounting.md, Rollback of business events); absent when there are none.
   */
  rollbacks?: RollbackRequest[];
}

/**
 * A journal with a given event fingerprint, as a rollback reads it back: the journals of one
 * record, in the order written, are the candidates of a twin.
 */
export interface TwinJournal {
  journalId: string;
  ingestionId: string;
  recordId: number;
  coreDate: string;
  journalType: string;
  accountingConfig: string;
  node: Record<string, string>;
  reverses: string | null;
  /** The reversal journal that withdrew it, null while none has. */
  withdrawnBy: string | null;
  lines: { account: string; amount: string; currency: string; extras: Record<string, unknown> }[];
}

/** A reversal a rollback writes: its draft, and the journal it withdraws. */
export interface RollbackReversal {
  original: string;
  draft: JournalDraft;
}

/**
 * One rollback record to settle. The module decides (pure); the store reads the twins and writes
 * inside the claim's transaction:
 * - `reverse`: given the journals of the one record that produced the earliest journal with the
 *   fingerprint that is not withdrawn, the reversals of the earliest event among them not yet
 *   rolled back (its journals not yet withdrawn), or a processing error;
 * - `notFound` and `alreadyRolledBack`: the error when no journal has the fingerprint, or when
 *   every one is withdrawn (`withdrawn`: the first few, in the order written).
 * A twin's journals are those with any of `fingerprints` (the current digest first, then the
 * digests journals stored under the first form would carry), in the order written.
 */
export interface RollbackRequest {
  recordId: number;
  record: Record<string, unknown>;
  fingerprints: readonly string[];
  reverse(journals: readonly TwinJournal[]): RollbackReversal[] | { code: string; message: string };
  notFound(): { code: string; message: string };
  alreadyRolledBack(withdrawn: readonly { journalId: string; withdrawnBy: string }[]): {
    code: string;
    message: string;
  };
}

/**
 * A journal as read back (docs/reference.md, Journals); line records are rebuilt from it
 * (line-record.ts).
 */
export interface StoredJournal extends StoredJournalValues {
  journalId: string;
  status: 'posted' | 'unposted';
  coreDate: string;
  originalCoreDate: string | null;
  journalType: string;
  accountingConfig: string;
  ingestionId: string;
  reverses: string | null;
  reversedBy: string | null;
  /** The reversal journal that withdrew this one (a correction); null while none has. */
  withdrawnBy: string | null;
  /** The reversal request that made this reversal journal; null on every other journal. */
  reversalId: string | null;
  node: Record<string, string>;
  /** The configuration revision the journal was made under. */
  revision: number;
  lines: StoredLineValues[];
}

export interface JournalFilter {
  status?: 'posted' | 'unposted';
  ingestionId?: string;
  accountingConfig?: string;
  from?: string;
  to?: string;
  /** The reversal journals of one reversal request. */
  reversalId?: string;
}

export interface BalanceRow {
  accountingConfig: string;
  node: Record<string, string>;
  account: string;
  currency: string;
  balance: string;
}

export interface BalanceFilter {
  accountingConfig?: string;
  asOf?: string;
  account?: string;
  currency?: string;
}

/**
 * The sort key of the journals list: core date, then the instant written, then the id, which
 * is unique and so makes the order total (a cursor names exactly one position).
 */
export interface JournalKey {
  coreDate: string;
  createdAt: string;
  journalId: string;
}

/** The filters of the processing errors list. */
export interface ProcessingErrorFilter {
  ingestionId?: string;
  code?: string;
  /** `open` unless given (the errors still to fix); `queued` errors wait in a reprocessing run. */
  state?: 'open' | 'queued' | 'closed';
}

export interface ProcessingErrorRow {
  ingestionId: string;
  namespace: string;
  entity: string;
  code: string;
  message: string;
  record: Record<string, unknown>;
  at: string;
  /** The configuration revision processing worked under when the record failed. */
  revision: number;
  id: number;
  recordId: number;
  state: 'open' | 'queued' | 'closed';
  attempts: number;
  lastAttemptAt: string;
  previousCode: string | null;
  closedAt: string | null;
}

/**
 * The storage port of the accounting module. `processNextChunk` is the one write path of
 * processing: it claims one chunk's unprocessed records (on PostgreSQL with `FOR UPDATE SKIP
 * LOCKED` on the chunk, so instances never share a chunk), hands them to `work`, and writes
 * the journals, the processing errors, the processed marks and the session counters in one
 * transaction. On SQLite, which has one writer, `work` runs before the write transaction begins
 * (it may wait on flow scripts), and the transaction writes only if the records are still
 * unprocessed. A process killed mid-way leaves the records unprocessed; nothing is lost or
 * written twice (docs/domain/accounting.md, Guarantees).
 */
export interface AccountingStore {
  /**
   * Processes the next waiting chunk with `work`, prepared from configuration `revision` and,
   * when given, the period states of `periodsVersion` (the claim reads the version once, inside
   * its transaction, and answers `stale-periods` when it moved); results are stamped `at`. Says
   * what happened ({@link ChunkProcessing}); an error before a chunk was claimed (the store cannot
   * be reached) is thrown.
   */
  processNextChunk(
    revision: number,
    at: string,
    work: (chunk: ClaimedChunk) => ChunkOutcome | Promise<ChunkOutcome>,
    periodsVersion?: number,
  ): Promise<ChunkProcessing>;
  /** The periods closed, locked or reopened by hand, with their version (read once per change). */
  periodStates(): Promise<PeriodStates>;
  /**
   * Records `failure` as the processing error of each waiting record of `chunk` that a claim
   * would take, and marks them processed and counts them failed, in one transaction: the chunk
   * ends processed exactly once, whoever else works on it. Returns the records marked; 0 when
   * none waits any more, or (PostgreSQL) another transaction holds the chunk.
   */
  failChunk(chunk: ChunkRef, at: string, failure: { code: string; message: string }): Promise<number>;
  /**
   * Marks unposted journals of a node posted when their core date is on or before `businessDate`,
   * and adds their lines to the balances in the same transaction. Returns how many it posted.
   */
  postDue(node: Readonly<Record<string, string>>, businessDate: string): Promise<number>;
  /** The nodes (field values) that have unposted journals. */
  unpostedNodes(): Promise<Record<string, string>[]>;
  /**
   * A page of journals matching `filter` in the order of {@link JournalKey}, from a page number
   * or after a key, and the key of its last journal when more follow. Counts nothing.
   */
  listJournals(
    filter: JournalFilter,
    start: PageStart<JournalKey>,
    limit: number,
  ): Promise<KeyedPage<StoredJournal, JournalKey>>;
  /**
   * The number of journals matching `filter`: the `totalSize` of page paging. From the journal
   * counters, or with `ingestionId` from the session's journals on their index; never a count of
   * every journal.
   */
  countJournals(filter: JournalFilter): Promise<number>;
  findJournal(journalId: string): Promise<StoredJournal | undefined>;
  /**
   * The sums of the posted lines matching `filter`, ordered by accounting configuration, node,
   * account and currency. Kept as lines post, so a read costs the balances (and their days with
   * `asOf`), never the journals stored (docs/adr/0016-balances-kept-as-journals-post.md).
   */
  balances(filter: BalanceFilter): Promise<BalanceRow[]>;
  /** A page of processing errors matching `filter`, in the order written (by their id). */
  listProcessingErrors(
    filter: ProcessingErrorFilter,
    start: PageStart<number>,
    limit: number,
  ): Promise<KeyedPage<ProcessingErrorRow, number>>;
  /** The number of processing errors matching `filter`. */
  countProcessingErrors(filter: ProcessingErrorFilter): Promise<number>;
}

/**
 * Which open processing errors a reprocessing run takes (docs/reference.md, Reprocessing): every
 * given member narrows it; `from` and `to` bound the instant the error was first recorded
 * (inclusive, exclusive). An empty selection is refused unless it says `all`.
 */
export interface ReprocessSelection {
  ingestionId?: string;
  entity?: string;
  code?: string;
  from?: string;
  to?: string;
  all?: boolean;
}

/** How a reprocessing run started. */
export type ReprocessTrigger = 'manual' | 'scheduled';

/** A reprocessing run as stored, with its outcomes so far. */
export interface ReprocessRun {
  id: number;
  trigger: ReprocessTrigger;
  actor: string;
  selection: ReprocessSelection;
  /** The configuration revision stored when the run queued its records. */
  revision: number;
  maxAttempts: number;
  state: 'running' | 'finished';
  startedAt: string;
  finishedAt: string | null;
  /** Records put back into the processing queue. */
  queued: number;
  /** Selected records left out: they had reached the maximum number of attempts. */
  skipped: number;
  posted: number;
  stillFailing: number;
  /** Records of the run that failed again, by their new code. */
  stillFailingByCode: Record<string, number>;
}

/** A processing error a run or a dry run reprocessed: its record, its code before and after. */
export interface ReprocessExample {
  recordId: number;
  ingestionId: string;
  previousCode: string;
  /** The code it failed with again; absent when it posted. */
  code?: string;
  message?: string;
}

/** The schedule of reprocessing runs (docs/reference.md, Reprocessing schedule). */
export interface ReprocessSchedule {
  mode: 'daily' | 'interval' | 'disabled';
  /** `HH:MM`, UTC. */
  dailyAt: string;
  intervalMinutes: number;
  maxAttempts: number;
  nextDueAt: string | null;
  updatedAt: string | null;
  updatedBy: string | null;
}

/** Open failed records of a selection, read for a dry run, grouped by chunk. */
export interface FailedRecordsPage {
  chunks: ClaimedChunk[];
  /** The code of each record's open error. */
  codes: ReadonlyMap<number, string>;
  /** The error id to read after, when more follow. */
  next: number | undefined;
}

/**
 * The storage port of reprocessing. A run puts the records of selected open errors back into the
 * processing queue, tagged with the run (`ReprocessRunTables.queueRun`): the errors become
 * `queued`, the records wait, and the counters of processing errors, records and sessions lose
 * them, in one transaction that takes each open error at most once however many runs start at
 * once. The processor then claims
 * them as any waiting record, exactly once, and its write path closes the error of a record that
 * posts or updates it with its new code (docs/adr/0019-reprocessing-through-the-queue.md).
 */
export interface ReprocessStore {
  /** The periods closed, locked or reopened by hand, with their version: dry runs apply them. */
  periodStates(): Promise<PeriodStates>;
  /** A run; one whose records are all processed (or wiped) is marked finished first. */
  findRun(id: number, at: string): Promise<ReprocessRun | undefined>;
  /** A page of runs, newest first, and their number. */
  listRuns(page: number, limit: number): Promise<{ rows: ReprocessRun[]; total: number }>;
  /** Up to `limit` examples of a run's records, in the order queued. */
  runExamples(id: number, limit: number): Promise<ReprocessExample[]>;
  /**
   * Open errors of `selection` with fewer than `maxAttempts` attempts, after error id `after`,
   * at most about `limit`, with their records grouped by chunk as a claim reads them.
   */
  failedRecords(
    selection: ReprocessSelection,
    maxAttempts: number,
    after: number,
    limit: number,
  ): Promise<FailedRecordsPage>;
  /** Open errors of `selection` at or past `maxAttempts` attempts. */
  countAtMaximum(selection: ReprocessSelection, maxAttempts: number): Promise<number>;
  /**
   * What rollback requests would do if settled now, for a dry run, as the write path settles
   * them: the error of each that would fail, none for one that would roll its event back.
   * `taken` holds the journals the dry run's earlier rollbacks would withdraw (journal id → its
   * reversal's id) and gains this call's. Reads only.
   */
  rollbackErrors(
    requests: readonly RollbackRequest[],
    taken: Map<string, string>,
  ): Promise<ChunkOutcome['errors']>;
  /** Processing errors by state. */
  countByState(): Promise<{ open: number; queued: number; closed: number }>;
  schedule(): Promise<ReprocessSchedule>;
  /** Sets when the next run is due, only while it is still `expected`; false otherwise. */
  moveNextDue(expected: string | null, next: string | null): Promise<boolean>;
}

/** The reprocessing schedule as a change writes it, in the change runner's transaction. */
/** What a run is queued with. */
export interface ReprocessRunInput {
  trigger: ReprocessTrigger;
  /** Who starts it: a user, or the service for a scheduled run. */
  actor: string;
  selection: ReprocessSelection;
  maxAttempts: number;
  recordsMax: number;
  at: string;
  /** A scheduled run's due instant, which moves to `nextDueAt` as the run is queued. */
  due?: { dueAt: string; nextDueAt: string | null } | undefined;
}

/**
 * The runs' tables inside a change's transaction (the change runner's, `modules/changes/`): rows,
 * not rules. A run queued puts the records of the selected open errors back into the processing
 * queue (see `ReprocessStore`).
 */
export interface ReprocessRunTables {
  /**
   * Records the run, queues the selected open errors with fewer than `maxAttempts` attempts (at
   * most `recordsMax`) and counts those skipped at the maximum; answers the run and the
   * configuration revision it was queued under. With `due`, only if the schedule's next run is
   * still due at `due`, which then moves to `nextDueAt` (one instance wins): undefined otherwise.
   */
  queueRun(input: ReprocessRunInput): Promise<{ run: ReprocessRun; revision: number } | undefined>;
}

export interface ReprocessScheduleTables {
  /** Stores the settings; answers the schedule before (held until the transaction ends) and after. */
  saveSchedule(
    settings: Pick<ReprocessSchedule, 'mode' | 'dailyAt' | 'intervalMinutes' | 'maxAttempts' | 'nextDueAt'>,
    at: string,
    user: string,
  ): Promise<{ before: ReprocessSchedule | undefined; after: ReprocessSchedule }>;
}
