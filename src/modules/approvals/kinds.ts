/**
 * The kinds of action that four-eyes approval can hold back (docs/domain/approvals.md), as a
 * small registry: each kind says what a request binds to (`review`) and how an approved
 * request runs (`execute`). The kinds themselves are wired by the composition root
 * (`src/composition/approval-kinds.ts`), which knows the services they call; this module knows
 * only their shape.
 */

/** Every kind an `APPROVAL_REQUIRED` list may name; a new kind adds its name here. */
export const APPROVAL_KIND_NAMES = [
  'configuration.upload',
  'configuration.delete',
  'reversal',
  'period.reopen',
] as const;

export type ApprovalKindName = (typeof APPROVAL_KIND_NAMES)[number];

/** True when `name` is a kind of this registry. */
export function isApprovalKindName(name: string): name is ApprovalKindName {
  return (APPROVAL_KIND_NAMES as readonly string[]).includes(name);
}

/**
 * What an approver is shown and what the approval binds to: the hash of the exact document
 * (a configuration's canonical text, a reversal's canonical request), the configuration
 * revision it was judged against, and the dry run's counts; `summary` says the rest in a form
 * a reader takes in at a glance (a configuration's changes). Counts and summary are JSON values.
 */
export interface ApprovalReview {
  documentSha256: string;
  revision: number;
  dryRun: Record<string, unknown>;
  summary: Record<string, unknown>;
}

/**
 * Who runs an approved action: the approver, on behalf of the maker; and the request it runs
 * for, which the action's own transaction marks `approved` as it commits (a request whose
 * action did not commit can then be told apart, and recovered, docs/domain/approvals.md).
 */
export interface ApprovalActor {
  approverEmail: string;
  approverClientId: string;
  makerEmail: string;
  requestId: string;
}

/**
 * What executing an approved request came to: `done`, with what it did (JSON); or `moved`, the
 * data it would change is no longer what the approver saw (nothing was changed), with why.
 * Errors of the action itself (a configuration change the stored data forbids, say) are thrown
 * as the action throws them.
 */
export type ApprovalExecution =
  | { kind: 'done'; outcome: Record<string, unknown> }
  | { kind: 'moved'; detail: string };

/**
 * One kind of action. `review` checks a payload as the action would and works out its binding,
 * changing nothing; it throws the action's own request errors (so a maker learns of a bad
 * document at once). `execute` runs the action only while the stored data is still what
 * `bound` says (the same revision, the same dry-run counts, checked in the action's own
 * transaction), and answers `moved` otherwise. The payload is the JSON value the kind's caller
 * stored; each kind reads back what it wrote.
 */
export interface ApprovalKind {
  readonly name: ApprovalKindName;
  review(payload: unknown): Promise<ApprovalReview>;
  execute(payload: unknown, bound: ApprovalReview, actor: ApprovalActor): Promise<ApprovalExecution>;
}

/** The kinds by name: the one table the approval service looks a kind up in. */
export type ApprovalKinds = ReadonlyMap<ApprovalKindName, ApprovalKind>;
