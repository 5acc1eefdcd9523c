/**
 * The decisions on an approval request, made through the change runner
 * (`modules/changes/runner.ts`): a rejection by another user, a cancellation by its maker, and the
 * claim of an approval by another user. Each reads the request in the runner's transaction, checks
 * who may decide it, and moves it from `pending-approval` by a conditional update, so a request is
 * decided once however many instances share the store. An approval's claim moves it to
 * `processing`; the action then runs in its own change (the service's, `service.ts`), which marks
 * it `approved` as it commits.
 */
import { AppError } from '../../lib/errors.js';
import type { Applied, Change, ChangeContext } from '../changes/runner.js';
import {
  type ApprovalAuditAction,
  type ApprovalTables,
  approvalAuditDetails,
  type StoredApprovalRequest,
} from './store.js';

/** The tables a decision writes. */
export interface ApprovalChangeTables {
  approvals: ApprovalTables;
}

/**
 * Who acts on a request. Identity is the user (docs/adr/0027-four-eyes-approval.md): every
 * credential and every sign-in of the administration interface belongs to one user, named by
 * e-mail, so the same person through another credential is still the maker. The client id is
 * recorded (and scopes idempotency keys) but never tells people apart.
 */
export interface ApprovalCaller {
  email: string;
  clientId: string;
}

/** A decision asked for: the request, who decides, and a rejection's reason. */
export interface DecisionInput {
  requestId: string;
  decider: ApprovalCaller;
  reason?: string | undefined;
}

/** True when two callers are the same user: e-mail addresses compared without case. */
export function samePerson(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** The error of a request that is not pending approval any more. */
export function notPending(request: StoredApprovalRequest): AppError {
  return new AppError(
    'approval-not-pending',
    `approval request ${request.requestId} is ${request.status}, not pending approval`,
    { requestStatus: request.status },
  );
}

/** The refusal of an approver who made the request. */
export function byMaker(): AppError {
  return new AppError(
    'approval-by-maker',
    'four eyes: the maker of a request cannot approve or reject it, through any credential; another user must',
  );
}

/** The request `requestId` in `tx`. Errors: `not-found`. */
async function requestIn(tx: ApprovalChangeTables, requestId: string): Promise<StoredApprovalRequest> {
  const found = await tx.approvals.find(requestId);
  if (found === undefined) throw new AppError('not-found', `no approval request ${requestId}`);
  return found;
}

/**
 * Moves the request to `to` as `input.decider` decided, with its audit entry naming the request
 * (and its configuration revision) as it is then. Errors: `approval-not-pending`.
 */
async function decided(
  tx: ApprovalChangeTables,
  input: DecisionInput,
  to: 'rejected' | 'canceled' | 'processing',
  at: string,
): Promise<Applied<StoredApprovalRequest>> {
  const { requestId, decider, reason } = input;
  const request = await tx.approvals.decide(requestId, {
    to,
    by: decider.email,
    byClientId: decider.clientId,
    at,
    ...(reason === undefined ? {} : { reason }),
  });
  if (request === undefined) throw notPending(await requestIn(tx, requestId));
  return {
    answer: request,
    audit: {
      details: {
        ...approvalAuditDetails(request),
        decidedByClientId: decider.clientId,
        ...(reason === undefined ? {} : { reason }),
      },
      configuration: { version: null, revision: request.revision, sections: {}, deleted: null },
    },
  };
}

/** A decision of `action` made by `apply`. */
function decision(
  action: ApprovalAuditAction,
  apply: (
    tx: ApprovalChangeTables,
    input: DecisionInput,
    context: ChangeContext,
  ) => Promise<Applied<StoredApprovalRequest>>,
): Change<DecisionInput, StoredApprovalRequest, ApprovalChangeTables> {
  return { action, apply };
}

/** The decisions the runner makes. */
export const approvalDecisions = {
  /**
   * Claims a pending request for its approval: it moves to `processing`, so only one approval
   * of it, on any instance, runs its action. A repeat of its `Idempotency-Key` reads the
   * request as it is then (approved, invalid or failed once its action ran). Errors:
   * `not-found`, `approval-not-pending`, `approval-by-maker`.
   */
  approve: {
    ...decision('approval.approved', async (tx, input, { at }) => {
      const request = await requestIn(tx, input.requestId);
      if (request.status !== 'pending-approval') throw notPending(request);
      if (samePerson(request.makerEmail, input.decider.email)) throw byMaker();
      return decided(tx, input, 'processing', at);
    }),
    keeping: {
      toKept: (request: StoredApprovalRequest) => ({ requestId: request.requestId }),
      fromKept: (kept: unknown, tx: ApprovalChangeTables) =>
        requestIn(tx, (kept as { requestId: string }).requestId),
    },
  },

  /**
   * Rejects a pending request with a reason; it never runs. Errors: `validation-failed` (a
   * blank reason), `not-found`, `approval-not-pending`, `approval-by-maker`.
   */
  reject: decision('approval.rejected', async (tx, input, { at }) => {
    if ((input.reason ?? '').trim() === '')
      throw new AppError('validation-failed', 'a reason is required', {
        errors: [{ path: '/reason', message: 'must not be blank' }],
      });
    const request = await requestIn(tx, input.requestId);
    if (request.status !== 'pending-approval') throw notPending(request);
    if (samePerson(request.makerEmail, input.decider.email)) throw byMaker();
    return decided(tx, input, 'rejected', at);
  }),

  /**
   * Cancels a pending request; only its maker may, through any of their credentials. Errors:
   * `not-found`, `forbidden` (another user's request), `approval-not-pending`.
   */
  cancel: decision('approval.canceled', async (tx, input, { at }) => {
    const request = await requestIn(tx, input.requestId);
    if (!samePerson(request.makerEmail, input.decider.email))
      throw new AppError('forbidden', 'only the maker of a request may cancel it; an approver rejects it');
    if (request.status !== 'pending-approval') throw notPending(request);
    return decided(tx, { requestId: input.requestId, decider: input.decider }, 'canceled', at);
  }),
};
