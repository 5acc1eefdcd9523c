/**
 * The storage port of reversals by selection (docs/reference.md, Reversals), declared by the
 * module that uses it (`reversals.ts`) and implemented in `storage/accounting/reversal-store.ts`.
 */
import type { KeyedPage, PageStart } from '../../lib/keyed-page.js';
import type { ReversalTotal, ReversalWindow } from './reversal-journals.js';

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
  openWindowOf: OpenWindowOf;
  newId: () => string;
}

/**
 * What storing a reversal came to: `stored`, written now; `replay`, an earlier request of the
 * same client with the same idempotency key (the caller compares its digest); `stale`, the
 * configuration changed since `revision` (nothing written: prepare the new one and try again).
 */
export type ReversalResult =
  | { kind: 'stored'; reversal: StoredReversal }
  | { kind: 'replay'; reversal: StoredReversal; digest: string }
  | { kind: 'stale' };

/**
 * Reversals over the store. `reverse` is one transaction: everything the request reverses, its
 * row and its audit entry, or nothing. Errors (thrown as `AppError`): `nothing-to-reverse`,
 * `reversal-too-large`, `posting-date-closed`.
 */
export interface ReversalStore {
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
