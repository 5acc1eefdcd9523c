/**
 * The changes an approved request runs (docs/domain/approvals.md): what such a change is bound
 * to, what it came to, and how the store's answer to it reads as that outcome.
 */
import { changeUnsafe } from './change-errors.js';
import type { ProcessingDataCounts, ReplaceOutcome } from './store.js';

/**
 * What an approved change is bound to: the revision it was reviewed against and what it would
 * wipe; and the approval request it runs for, marked `approved` in the change's transaction.
 */
export interface BoundChange {
  revision: number;
  wouldDelete: ProcessingDataCounts;
  approvalRequestId: string;
}

/** What an approved change came to: made, or not, since the data it was bound to moved. */
export type BoundOutcome =
  | { kind: 'done'; revision: number; deleted: ProcessingDataCounts }
  | { kind: 'moved'; detail: string };

/** The `moved` outcome of a revision that changed since the review. */
export function revisionMoved(bound: number, found: number): BoundOutcome {
  return { kind: 'moved', detail: `the configuration moved from revision ${bound} to revision ${found}` };
}

/**
 * What the store's answer to an approved change comes to: `done` when it was made, else `moved`,
 * saying whether what it would wipe or the revision changed since the review. Errors:
 * `configuration-change-unsafe` (409) when the stored data now forbids the change.
 */
export function boundOutcome(outcome: ReplaceOutcome, bound: BoundChange): BoundOutcome {
  if (outcome.replaced) return { kind: 'done', revision: outcome.revision, deleted: outcome.deleted };
  if (outcome.blocking !== undefined) throw changeUnsafe(outcome.blocking);
  if (outcome.wouldDelete !== undefined)
    return {
      kind: 'moved',
      detail: `the processing data it would delete changed: it would delete ${JSON.stringify(outcome.wouldDelete)} now, not ${JSON.stringify(bound.wouldDelete)}`,
    };
  return revisionMoved(bound.revision, outcome.revision);
}
