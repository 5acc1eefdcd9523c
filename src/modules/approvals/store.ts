/**
 * The storage port of four-eyes approval (implemented in `storage/approval-store.ts`). Every
 * change of status is one conditional update, written with its audit entry and its day counters
 * in one transaction, so that two instances never both move one request.
 */
import type { KeyedPage, PageStart } from '../../lib/keyed-page.js';
import { type AuditActor, actorOfCaller, signedInClientIdOf, systemActor } from '../audit/entry.js';
import type { ApprovalKindName, ApprovalReview } from './kinds.js';

export type { KeyedPage, PageStart } from '../../lib/keyed-page.js';
export type { AuditActor };
export { actorOfCaller, signedInClientIdOf };

/**
 * The statuses of a request (docs/domain/approvals.md): `pending-approval` waits for a second
 * person; `rejected` and `canceled` (by its maker) never ran; `processing` was approved and
 * runs; `approved` ran (its action and this status committed together); `invalid` was approved
 * but the data it would change had moved, so nothing ran; `failed` was approved and the action
 * refused, or its instance stopped before the action committed (its problem is kept).
 */
export const APPROVAL_STATUSES = [
  'pending-approval',
  'processing',
  'approved',
  'rejected',
  'canceled',
  'invalid',
  'failed',
] as const;

export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/**
 * The audit log actions of approval requests: made, approved (it starts to run), rejected,
 * canceled, invalidated (approved, but the data had moved), failed (approved, and the action
 * refused). The action itself writes its own entry as it always does.
 */
export const APPROVAL_AUDIT_ACTIONS = [
  'approval.requested',
  'approval.approved',
  'approval.rejected',
  'approval.canceled',
  'approval.invalidated',
  'approval.failed',
] as const;

export type ApprovalAuditAction = (typeof APPROVAL_AUDIT_ACTIONS)[number];

/** Why a request became `invalid` or `failed`: a problem code and its detail. */
export interface ApprovalProblem {
  code: string;
  detail: string;
}

/** A request as stored, without its payload. */
export interface StoredApprovalRequest extends ApprovalReview {
  requestId: string;
  kind: ApprovalKindName;
  status: ApprovalStatus;
  makerEmail: string;
  makerClientId: string;
  createdAt: string;
  decidedBy: string | null;
  decidedByClientId: string | null;
  decidedAt: string | null;
  reason: string | null;
  finishedAt: string | null;
  outcome: Record<string, unknown> | null;
  problem: ApprovalProblem | null;
}

/** The sort key of the list: newest first, by when, then id. */
export interface ApprovalKey {
  createdAt: string;
  requestId: string;
}

/** A new request, reviewed. */
export interface NewApprovalRequest extends ApprovalReview {
  requestId: string;
  kind: ApprovalKindName;
  makerEmail: string;
  makerClientId: string;
  at: string;
  idempotencyKey: string | undefined;
  payload: unknown;
}

/** A decision on a pending request: approve (it moves to `processing`), reject or cancel. */
export interface ApprovalDecision {
  to: 'processing' | 'rejected' | 'canceled';
  by: string;
  byClientId: string;
  at: string;
  /** The reason of a rejection. */
  reason?: string;
}

/** What every audit entry of a request says of it. */
export function approvalAuditDetails(request: StoredApprovalRequest): Record<string, unknown> {
  return {
    requestId: request.requestId,
    kind: request.kind,
    status: request.status,
    maker: request.makerEmail,
    makerClientId: request.makerClientId,
    documentSha256: request.documentSha256,
    dryRun: request.dryRun,
  };
}

/**
 * The approval requests' tables inside a change's transaction (the change runner's,
 * `modules/changes/`): rows, not rules.
 */
export interface ApprovalTables {
  /** One request. */
  find(requestId: string): Promise<StoredApprovalRequest | undefined>;
  /**
   * Moves a pending request to the decision's status, with its day counters, and answers it;
   * undefined when it is not pending (any more).
   */
  decide(requestId: string, decision: ApprovalDecision): Promise<StoredApprovalRequest | undefined>;
}

/** The end of an approved request's execution. */
export type ApprovalFinish =
  | { to: 'approved'; at: string; outcome: Record<string, unknown> }
  | { to: 'invalid' | 'failed'; at: string; problem: ApprovalProblem };

export interface ApprovalStore {
  /**
   * Stores a new request `pending-approval` with its audit entry and adds it to its day's
   * awaiting count, in one transaction; or, when the maker's client stored one under the same
   * idempotency key, answers that one (`replay`) and writes nothing.
   */
  create(input: NewApprovalRequest): Promise<{ kind: 'created' | 'replay'; request: StoredApprovalRequest }>;
  /** The request stored under the client's idempotency key, if any. */
  findByIdempotencyKey(clientId: string, key: string): Promise<StoredApprovalRequest | undefined>;
  /**
   * The requests of `kind` that wait for approval with exactly this review and payload (the same
   * document hash, revision and payload text), oldest first: the same action asked again.
   */
  findPendingSame(
    kind: ApprovalKindName,
    review: Pick<ApprovalReview, 'documentSha256' | 'revision'>,
    payload: unknown,
  ): Promise<StoredApprovalRequest[]>;
  find(requestId: string): Promise<StoredApprovalRequest | undefined>;
  /** The payload of a request, for its execution. */
  payload(requestId: string): Promise<unknown>;
  /** A page of requests, newest first, of one status or all. */
  list(
    status: ApprovalStatus | undefined,
    start: PageStart<ApprovalKey>,
    limit: number,
  ): Promise<KeyedPage<StoredApprovalRequest, ApprovalKey>>;
  /** The number of requests of one status, or all. */
  count(status: ApprovalStatus | undefined): Promise<number>;
  /**
   * Ends the execution of an approved request, with its audit entry: one whose action ran (and
   * made it `approved` as it committed) gets its outcome; one whose action did not run moves
   * from `processing` to `invalid` or `failed`.
   */
  finish(requestId: string, finish: ApprovalFinish): Promise<StoredApprovalRequest>;
  /**
   * Moves the requests still `processing` that were approved before `decidedBefore` to `failed`
   * (`approval-interrupted`), each with its audit entry, and answers them: their action never
   * committed, since it would have made them `approved`, and can no longer commit.
   */
  recoverInterrupted(decidedBefore: string, at: string): Promise<StoredApprovalRequest[]>;
}

/**
 * The service, recovering a request whose approved action was interrupted: no one decided that,
 * so the trail says why it happened.
 */
export const INTERRUPTED_RECOVERY_ACTOR: AuditActor = systemActor(
  'the instance running the approved action stopped before it finished, and its lease ran out',
);
