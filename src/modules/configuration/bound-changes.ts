/**
 * The changes an approved request runs (docs/domain/approvals.md): what such a change is bound
 * to, and what it came to.
 */
import type { ProcessingDataCounts } from './store.js';

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
  return { kind: 'moved', detail: revisionMovedDetail(bound, found) };
}

/** How the configuration moved from the revision an approval was bound to. */
export function revisionMovedDetail(bound: number, found: number): string {
  return `the configuration moved from revision ${bound} to revision ${found}`;
}
