/** The request rules of four-eyes approval, for the REST routes and the administration pages. */
import { Type } from '@sinclair/typebox';
import { APPROVAL_STATUSES } from './store.js';

/** The longest reason of a rejection. */
export const APPROVAL_REASON_LENGTH_MAX = 500;

/**
 * Requests that may wait for approval at once: past it a new one is refused (409 `conflict`)
 * until some are decided, so a runaway client cannot fill the queue an approver reads.
 */
export const APPROVAL_PENDING_REQUESTS_MAX = 1000;

/** The reason of a rejection, as a body member. */
export const ApprovalReason = Type.String({
  minLength: 1,
  maxLength: APPROVAL_REASON_LENGTH_MAX,
  description: 'Why the request is rejected: shown to its maker and written to the audit log.',
  examples: ['the wipe was not announced to the accounting team'],
});

/** The body of a rejection: on the API and the request's page alike. */
export const ApprovalRejectBody = Type.Object({ reason: ApprovalReason }, { additionalProperties: false });

/** A status filter of the list. */
export const ApprovalStatusQuery = Type.Union(
  APPROVAL_STATUSES.map((status) => Type.Literal(status)),
  { description: 'Only requests in this status.' },
);
