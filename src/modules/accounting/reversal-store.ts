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

/** What a reversal request asks, with who asks and when. */
export interface ReversalInput {
  reversalId: string;
  selection: ReversalSelection;
  reason: string;
  postingDate: string | undefined;
  createdBy: string;
  clientId: string;
  at: string;
  idempotencyKey: string | undefined;
  /** SHA-256 of the request's canonical JSON (`reversals.ts`). */
  digest: string;
  /** The configuration revision `openWindowOf` was prepared from. */
  revision: number;
  /** The version of the period states `openWindowOf` was prepared with. */
  periodsVersion: number;
  openWindowOf: OpenWindowOf;
  newId: () => string;
  /**
   * When set (an approved request, docs/domain/approvals.md), the reversal is made only when its
   * counts and totals, worked out in its transaction, are these; otherwise nothing is written
   * and the result is `moved` with the counts found.
   */
  expectCounts?: ReversalCounts;
  /**
   * The approval request this change runs for (docs/domain/approvals.md): the change's
   * transaction marks it `approved`, and changes nothing when it is no longer `processing`.
   */
  approvalRequestId?: string | undefined;
}

/**
 * What storing a reversal came to: `stored`, written now; `replay`, an earlier request of the
 * same client with the same idempotency key (the caller compares its digest); `stale`, the
 * configuration changed since `revision`, or the period states since `periodsVersion` (nothing
 * written: prepare the new ones and try again); `moved`, the counts were not the `expectCounts`
 * asked for (nothing written).
 */
export type ReversalResult =
  | { kind: 'stored'; reversal: StoredReversal }
  | { kind: 'replay'; reversal: StoredReversal; digest: string }
  | { kind: 'stale' }
  | { kind: 'moved'; counts: ReversalCounts }
  /** No selected journal needed a reversal journal: nothing was written, the counts say why. */
  | { kind: 'unchanged'; counts: ReversalCounts };

/**
 * Reversals over the store. `reverse` is one transaction: everything the request reverses, its
 * row and its audit entry, or nothing. Errors (thrown as `AppError`): `nothing-to-reverse`,
 * `reversal-too-large`, `posting-date-closed`.
 */
export interface ReversalStore {
  /** The periods closed, locked or reopened by hand, with their version. */
  periodStates(): Promise<PeriodStates>;
  /** The request stored under the client's idempotency key, with its digest, if any. */
  findByIdempotencyKey(
    clientId: string,
    idempotencyKey: string,
  ): Promise<{ reversal: StoredReversal; digest: string } | undefined>;
  reverse(input: ReversalInput): Promise<ReversalResult>;
  /** What `reverse` would do now; reads only. Errors as `reverse`'s. */
  dryRun(input: Pick<ReversalInput, 'selection' | 'postingDate' | 'openWindowOf'>): Promise<ReversalCounts>;
  find(reversalId: string): Promise<StoredReversal | undefined>;
  /** The first reversal journal ids a request made, in journal list order. */
  reversalJournalIds(reversalId: string, limit: number): Promise<string[]>;
  /** A page of reversals, newest first, and with page paging their number. */
  list(start: PageStart<ReversalKey>, limit: number): Promise<KeyedPage<StoredReversal, ReversalKey>>;
  count(): Promise<number>;
}
