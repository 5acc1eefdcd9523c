/**
 * Reversals by selection (docs/reference.md, Reversals): the port `reversals.ts` uses, and the
 * limits its adapter applies. Storage reaches it through `store.ts`, which re-exports what the
 * adapter names (the layering test lets storage import of a module only its `store.ts`).
 */
import type { KeyedPage, PageStart } from '../../lib/keyed-page.js';
import type { PeriodStates } from './periods.js';
import type { ReversalTotal, ReversalWindow } from './reversal-journals.js';

/** Journals one reversal request may select (already reversed ones included); more is refused. */
export const REVERSAL_JOURNALS_PER_REQUEST_MAX = 200_000;
/** Journal ids an answer lists: reversal journals, already reversed and not reversible ones. */
export const REVERSAL_IDS_LISTED_MAX = 100;

/** Which journals a reversal request takes: exactly one of these. */
export type ReversalSelection =
  | { journalIds: string[] }
  | { ingestionId: string }
  | { originJournalId: string }
  | { accountingConfig: string; from: string; to: string };

/** The open window of a node and accounting configuration now; undefined when it has none. */
export type OpenWindowOf = (
  node: Readonly<Record<string, string>>,
  accountingConfig: string,
) => ReversalWindow | undefined;

/** What a reversal request did, or what a dry run would do. */
export interface ReversalCounts {
  /** Reversal journals written (an automatic reversal withdrawn with its journal included). */
  journals: number;
  lines: number;
  /** Selected journals already withdrawn by an earlier reversal: left as they are. */
  alreadyReversed: number;
  /** Selected reversal journals: a reversal journal is never reversed itself. */
  notReversible: number;
  /** The first selected journals already reversed, in selection order. */
  alreadyReversedIds: string[];
  /** The first selected journals that may not be reversed, in selection order. */
  notReversibleIds: string[];
  /** The lines of the reversal journals per accounting configuration, account and currency. */
  totals: ReversalTotal[];
}

/** A stored reversal request. */
export interface StoredReversal extends ReversalCounts {
  reversalId: string;
  reason: string;
  selection: ReversalSelection;
  postingDate: string | null;
  /** The e-mail of the user whose credential asked. */
  createdBy: string;
  createdAt: string;
  /** The configuration revision it worked under. */
  revision: number;
}

/** The sort key of the reversals list: newest first, by when, then id. */
export interface ReversalKey {
  createdAt: string;
  reversalId: string;
}

/** What a reversal's journals are withdrawn with, under the windows prepared for it. */
export interface ReversalWithdrawal {
  reversalId: string;
  /** The instant the reversal journals are stamped with. */
  at: string;
  /** The configuration revision the reversal journals are made under. */
  revision: number;
  /** A date for every reversal journal instead of the dating rule's. */
  postingDate: string | undefined;
  openWindowOf: OpenWindowOf;
  newId: () => string;
}

/** A reversal as recorded: the request, who made it and when, and what it did. */
export interface ReversalRow extends ReversalCounts {
  reversalId: string;
  selection: ReversalSelection;
  reason: string;
  postingDate: string | null;
  createdBy: string;
  /** The client whose credential asked (the signed-in user's own for the administration interface). */
  clientId: string;
  createdAt: string;
  revision: number;
}

/**
 * The tables a reversal writes, in the change runner's transaction (`reversal-change.ts`).
 * Errors (thrown as `AppError`): those each method names.
 */
export interface ReversalTables {
  /**
   * The stored configuration revision and the period states' version, both held until the
   * transaction ends: an upload that wipes and a close or a lock of a period wait for this
   * reversal on PostgreSQL, or it for them.
   */
  heldVersions(): Promise<{ revision: number; periodsVersion: number }>;
  /**
   * The ids of the journals `selection` names, in the journals list order (core date, instant
   * written, id). Errors: `nothing-to-reverse` (none), `not-found` (a `journalIds` id of no
   * journal), `reversal-too-large`.
   */
  selectedIds(selection: ReversalSelection): Promise<string[]>;
  /**
   * Withdraws the journals `ids`: each one not withdrawn yet gets its reversal journal, with the
   * kept balances and counters; answers the counts. Errors: `posting-date-closed`, `conflict`
   * (a journal's node no longer has its accounting configuration).
   */
  withdraw(ids: readonly string[], withdrawal: ReversalWithdrawal): Promise<ReversalCounts>;
  /** Records the reversal. */
  record(row: ReversalRow): Promise<void>;
  find(reversalId: string): Promise<StoredReversal | undefined>;
  /** The first reversal journal ids a request made, in journal list order. */
  reversalJournalIds(reversalId: string, limit: number): Promise<string[]>;
}

/**
 * The reads of reversals, and their dry run; a reversal itself is made through the change
 * runner, on `ReversalTables`. Errors (thrown as `AppError`): `nothing-to-reverse`,
 * `reversal-too-large`, `posting-date-closed`.
 */
export interface ReversalStore {
  /** The periods closed, locked or reopened by hand, with their version. */
  periodStates(): Promise<PeriodStates>;
  /** What a reversal of `selection` would do now; reads only. Errors as `ReversalTables`'. */
  dryRun(input: {
    selection: ReversalSelection;
    postingDate: string | undefined;
    openWindowOf: OpenWindowOf;
  }): Promise<ReversalCounts>;
  find(reversalId: string): Promise<StoredReversal | undefined>;
  /** The first reversal journal ids a request made, in journal list order. */
  reversalJournalIds(reversalId: string, limit: number): Promise<string[]>;
  /** A page of reversals, newest first, and with page paging their number. */
  list(start: PageStart<ReversalKey>, limit: number): Promise<KeyedPage<StoredReversal, ReversalKey>>;
  count(): Promise<number>;
}
