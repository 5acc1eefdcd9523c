/**
 * The storage port of extracts (docs/adr/0022-gap-free-extract-offsets.md), implemented by
 * `storage/extracts/`. Positions are opaque texts the store makes and compares: a window
 * `[from, to)` of positions holds rows that are final, so the same window always reads the
 * same rows.
 */
import type { StoredJournalValues, StoredLineValues } from '../accounting/line-record.js';

/** What an extract reads. */
export type ExtractSource =
  | 'posted-journals'
  | 'unposted-journals'
  | 'journal-lines'
  | 'processing-errors'
  | 'balances'
  | 'records';

export type ExtractFormat = 'jsonl' | 'csv';
export type ExtractState = 'Draft' | 'Active' | 'Inactive';

/** Which rows of its source an extract keeps; each source takes some of them (`inputs.ts`). */
export interface ExtractFilters {
  accountingConfig?: string;
  /** Node field values the row's node must hold (all of them). */
  node?: Record<string, string>;
  namespace?: string;
  entity?: string;
  code?: string;
  /** Balances as of this day (on or before it); absent, the balances now. */
  asOf?: string;
}

/** A stored extraction configuration. */
export interface StoredExtractConfiguration {
  id: number;
  name: string;
  description: string | null;
  source: ExtractSource;
  filters: ExtractFilters;
  fields: string[] | null;
  format: ExtractFormat;
  incremental: boolean;
  state: ExtractState;
  ackedPosition: string;
  pendingPosition: string | null;
  pendingSince: string | null;
  ackedAt: string | null;
  createdAt: string;
  createdBy: string;
  updatedAt: string;
  updatedBy: string;
}

/** What a new configuration holds. */
export type NewExtractConfiguration = Pick<
  StoredExtractConfiguration,
  'name' | 'description' | 'source' | 'filters' | 'fields' | 'format' | 'incremental'
>;

/** The members a change may set. */
export type ExtractConfigurationChange = Partial<
  Pick<
    StoredExtractConfiguration,
    'name' | 'description' | 'source' | 'filters' | 'fields' | 'format' | 'incremental' | 'state'
  >
>;

/** The sort key of a row within its source: texts and numbers, the position first where there is one. */
export type RowKey = readonly (string | number)[];

/** A journal as an extract reads it. */
export interface ExtractJournal extends StoredJournalValues {
  status: 'posted' | 'unposted';
  originalCoreDate: string | null;
  withdrawnBy: string | null;
  lineCount: number;
  createdAt: string;
  revision: number;
}

/** One row of a source, as stored; the service shapes it. */
export type SourceRow =
  | { kind: 'journal'; journal: ExtractJournal }
  | { kind: 'line'; journal: StoredJournalValues; line: StoredLineValues }
  | { kind: 'values'; values: Record<string, unknown> };

/** The rows of a window: `[from, to)` of positions, or a snapshot (balances) where both are unused. */
export interface SourceWindow {
  from: string;
  to: string;
}

/** The offsets of the configurations as a window is fixed, read or in a change's transaction alike. */
export interface ExtractOffsets {
  /** The position before every row: where offsets start, and other reads too. */
  readonly startPosition: string;
  /**
   * The position that ends a window read now: every row of `source` committed so far is before
   * it, every row committed later after it.
   */
  boundNow(source: ExtractSource): Promise<string>;
  /**
   * Fixes the pending answer's end at the position that ends a window read now, unless one is
   * pending already (of two readers at once, one fixes it, both read it); returns the
   * configuration as stored then.
   */
  fixPending(id: number, source: ExtractSource, at: string): Promise<StoredExtractConfiguration | undefined>;
}

/** The configurations as read, and the reads that fix a window (a read is no change: it is not audited). */
export interface ExtractStore extends ExtractOffsets {
  find(id: number): Promise<StoredExtractConfiguration | undefined>;
  /** The configurations in `state`, by id, after `after`; `limit + 1` read to know of a next page. */
  list(state: ExtractState, after: number, limit: number): Promise<StoredExtractConfiguration[]>;
  /** Up to `limit + 1` rows of `source` in the window, after `after` (from the start when undefined). */
  readRows(
    source: ExtractSource,
    filters: ExtractFilters,
    window: SourceWindow,
    after: RowKey | undefined,
    limit: number,
  ): Promise<{ rows: SourceRow[]; keys: RowKey[] }>;
}

/**
 * The extract tables an operator's or a consumer's change writes, inside the change runner's
 * transaction (`modules/changes/`), which writes the audit entry: configurations, their offsets
 * (moved by the same conditional single statements as a read fixes them) and the executions a
 * trigger queues.
 */
export interface ExtractTables extends ExtractOffsets {
  find(id: number): Promise<StoredExtractConfiguration | undefined>;
  /** Stores a new configuration in Draft, its offset at the start of every source. */
  create(config: NewExtractConfiguration, actor: string, at: string): Promise<StoredExtractConfiguration>;
  /** Applies `change`; undefined when the configuration no longer exists. */
  update(
    id: number,
    change: ExtractConfigurationChange,
    actor: string,
    at: string,
  ): Promise<StoredExtractConfiguration | undefined>;
  /** Deletes the configuration and its executions; false when none existed. */
  delete(id: number): Promise<boolean>;
  /**
   * Moves the offset to the pending end and clears it, in one conditional update. True when an
   * answer was pending.
   */
  acknowledge(id: number, at: string): Promise<boolean>;
  /** Queues an execution of the window `window`. */
  insertExecution(execution: {
    configurationId: number;
    format: ExtractFormat;
    window: SourceWindow;
    requestedBy: string;
    at: string;
  }): Promise<StoredExecution>;
}

/** The state of an asynchronous extraction. */
export type ExecutionStatus = 'queued' | 'running' | 'completed' | 'failed';

/** An asynchronous extraction as stored. */
export interface StoredExecution {
  id: number;
  configurationId: number;
  status: ExecutionStatus;
  format: ExtractFormat;
  window: SourceWindow;
  /** The key of the last row written; null before the first run. */
  cursor: RowKey | null;
  records: number;
  bytes: number;
  runs: number;
  requestedBy: string;
  requestedAt: string;
  startedAt: string | null;
  completedAt: string | null;
  /** Until when the instance making it holds it; the instance's proof of holding it. */
  leaseUntil: string | null;
  failure: string | null;
  expiresAt: string | null;
}

/** One run of an execution: a part of its file. */
export interface ExecutionRun {
  runNo: number;
  records: number;
  startedAt: string;
  completedAt: string;
}

/**
 * The storage of asynchronous extractions (a trigger queues one through `ExtractTables`). Every
 * change by the maker is conditional on its lease, in transactions of its own.
 */
export interface ExecutionStore {
  find(id: number): Promise<StoredExecution | undefined>;
  /** The executions of a configuration, newest first, before id `before`; `limit + 1` read. */
  list(configurationId: number, before: number, limit: number): Promise<StoredExecution[]>;
  /** The runs of an execution, in order, at most `limit`. */
  runs(id: number, limit: number): Promise<ExecutionRun[]>;
  /**
   * Takes the oldest execution that is queued, or running under a lease that ended before `now`
   * (its maker died), leasing it until `leaseUntil`; one instance gets each.
   */
  claim(now: string, leaseUntil: string): Promise<StoredExecution | undefined>;
  /**
   * Stores one run's part and moves the execution's cursor, counts and lease, in one transaction,
   * only while the lease is still `lease`. False when it is not (another instance took it over).
   */
  saveRun(
    id: number,
    lease: string,
    run: ExecutionRun & { content: string; bytes: number; cursor: RowKey | null },
    nextLease: string,
  ): Promise<boolean>;
  /** Ends the execution while its lease is `lease`; false when it is not. */
  finish(
    id: number,
    lease: string,
    outcome: { status: 'completed' | 'failed'; at: string; expiresAt: string; failure: string | null },
  ): Promise<boolean>;
  /** The parts of a file, in order, after run `after`, at most `limit`. */
  parts(id: number, after: number, limit: number): Promise<{ runNo: number; content: string }[]>;
  /** Deletes the executions whose file expired before `now`, with their parts; how many. */
  sweep(now: string): Promise<number>;
}
