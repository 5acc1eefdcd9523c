import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApprovalRejectBody, ApprovalStatusQuery } from '../../modules/approvals/inputs.js';
import type { ApprovalService } from '../../modules/approvals/service.js';
import type { StoredApprovalRequest } from '../../modules/approvals/store.js';
import { principalOf } from '../authenticate.js';
import { ApprovalRequest } from './approval-answers.js';
import { ChangeHeaders, ChangeQuery, changeOptionsOf, sendChange } from './changes.js';
import { keyOfCursor, nextCursor } from './cursor.js';
import type { ApiApp } from './route-app.js';
import {
  AfterQuery,
  CURSOR_PAGING_DESCRIPTION,
  CursorPage,
  cursorPageOf,
  PageQuery,
  PathParam,
  Problem,
} from './schemas.js';

/** The path of one request. */
export function approvalRequestPath(requestId: string): string {
  return `/api/v1/approval-requests/${requestId}`;
}

/**
 * Answers an action that now waits for approval: 202 with the request and its `Location`; a
 * repeat under the same idempotency key says it is one (`Idempotent-Replayed`).
 */
export function sendPendingApproval(
  reply: FastifyReply,
  answer: { request: StoredApprovalRequest; replayed: boolean },
): FastifyReply {
  if (answer.replayed) reply.header('idempotent-replayed', 'true');
  return reply
    .code(202)
    .header('location', approvalRequestPath(answer.request.requestId))
    .send(answer.request);
}

/** The caller of a request as approvals know people: the user, and the client id it came with. */
export function approvalCallerOf(request: FastifyRequest) {
  const principal = principalOf(request);
  return { email: principal.ownerEmail, clientId: principal.clientId };
}

const PENDING_DESCRIPTION =
  'When the service requires approval for this kind of action (APPROVAL_REQUIRED), nothing runs: the answer is 202 with the approval request (status `pending-approval`) and `Location` naming it; another user with `approvals:approve` approves it (then it runs) or rejects it. The same action asked again by the same user while its request waits answers that request (`Idempotent-Replayed: true`). A dry run never waits.';

/** The documented 202 of an action that may wait for approval. */
export const PendingApprovalAnswer = { ...ApprovalRequest, description: PENDING_DESCRIPTION };

/** The path parameters of one request's routes. */
const RequestParams = Type.Object({ requestId: PathParam });

/** The approval requests: list, one, approve, reject, cancel (docs/reference.md, Approvals). */
export const approvalRequestRoutes: FastifyPluginAsyncTypebox<{ approvals: ApprovalService }> = async (
  app,
  { approvals },
) => {
  registerApprovalReadRoutes(app, approvals);
  registerApprovalDecisionRoutes(app, approvals);
};

/** `GET /api/v1/approval-requests` and `…/:requestId`: the requests, newest first, and one. */
function registerApprovalReadRoutes(app: ApiApp, approvals: ApprovalService): void {
  app.get(
    '/api/v1/approval-requests',
    {
      config: { permission: ['approvals:read', 'approvals:approve'] },
      schema: {
        operationId: 'listApprovalRequests',
        tags: ['approvals'],
        summary: 'Approval requests, newest first',
        description: `Every request made while approval was required, of one status or all. ${CURSOR_PAGING_DESCRIPTION}`,
        querystring: Type.Object({
          status: Type.Optional(ApprovalStatusQuery),
          ...PageQuery,
          ...AfterQuery,
        }),
        response: { 200: CursorPage(ApprovalRequest), 400: Problem },
      },
    },
    async (request) => {
      const { status, page, limit, after } = request.query;
      const cursorOf = (key: { createdAt: string; requestId: string } | undefined) =>
        nextCursor('approval-requests', key, (k) => [k.createdAt, k.requestId]);
      if (after !== undefined) {
        const [createdAt, requestId] = keyOfCursor('approval-requests', after, ['text', 'text']);
        const found = await approvals.list(status, { after: { createdAt, requestId } }, limit);
        return cursorPageOf(found.rows, limit, cursorOf(found.next));
      }
      const found = await approvals.list(status, { page }, limit);
      return cursorPageOf(found.rows, limit, cursorOf(found.next), { page, total: found.total ?? 0 });
    },
  );

  app.get(
    '/api/v1/approval-requests/:requestId',
    {
      config: { permission: ['approvals:read', 'approvals:approve'] },
      schema: {
        operationId: 'getApprovalRequest',
        tags: ['approvals'],
        summary: 'One approval request, with its dry run and what became of it',
        params: RequestParams,
        response: { 200: ApprovalRequest, 404: Problem },
      },
    },
    async (request) => approvals.get(request.params.requestId),
  );
}

/** `POST …/:requestId/approve`, `…/reject` and `…/cancel`: what becomes of a pending request. */
function registerApprovalDecisionRoutes(app: ApiApp, approvals: ApprovalService): void {
  app.post(
    '/api/v1/approval-requests/:requestId/approve',
    {
      config: { permission: 'approvals:approve' },
      schema: {
        operationId: 'approveApprovalRequest',
        tags: ['approvals'],
        summary: 'Approve a pending request: it runs now, as your action on behalf of its maker',
        description:
          "Four eyes: the maker cannot approve their own request, through any of their credentials (403 `approval-by-maker`). The request runs only while the data it binds to is what the approver was shown: the same configuration revision, the same document hash and, checked in the action's own transaction, the same dry-run counts. 200 with the request `approved` and its `outcome`; 409 `approval-invalidated` when that data moved (nothing changed, the request is `invalid`: make it again); 409 `approval-not-pending` when it was decided already or another approval, on any instance, won; the action's own error when it refuses (the request is `failed`, with the problem). A dry run checks that you may approve it now and runs nothing; a repeat of an `Idempotency-Key` answers the first answer again (the approved request, or the same problem when it became invalid or failed). No body.",
        params: RequestParams,
        querystring: ChangeQuery,
        headers: ChangeHeaders,
        response: {
          200: ApprovalRequest,
          403: Problem,
          404: Problem,
          409: Problem,
          412: Problem,
          422: Problem,
        },
      },
    },
    async (request, reply) => {
      const options = changeOptionsOf(request);
      return sendChange(
        reply,
        await approvals.approve(request.params.requestId, approvalCallerOf(request), options),
        200,
      );
    },
  );

  registerRejectAndCancelRoutes(app, approvals);
}

/** `POST …/:requestId/reject` and `…/cancel`: changes of the request alone, on the change runner. */
function registerRejectAndCancelRoutes(app: ApiApp, approvals: ApprovalService): void {
  app.post(
    '/api/v1/approval-requests/:requestId/reject',
    {
      config: { permission: 'approvals:approve' },
      schema: {
        operationId: 'rejectApprovalRequest',
        tags: ['approvals'],
        summary: 'Reject a pending request with a reason: it never runs',
        description:
          "Not by its maker (403 `approval-by-maker`); 409 `approval-not-pending` when it was decided already. Counted in the journal metrics' `deniedApproval`.",
        params: RequestParams,
        querystring: ChangeQuery,
        headers: ChangeHeaders,
        body: ApprovalRejectBody,
        response: {
          200: ApprovalRequest,
          400: Problem,
          403: Problem,
          404: Problem,
          409: Problem,
          422: Problem,
        },
      },
    },
    async (request, reply) => {
      const { requestId } = request.params;
      const options = changeOptionsOf(request);
      return sendChange(
        reply,
        await approvals.reject(requestId, approvalCallerOf(request), request.body.reason, options),
        200,
      );
    },
  );

  app.post(
    '/api/v1/approval-requests/:requestId/cancel',
    {
      config: { permission: ['approvals:read', 'approvals:approve'] },
      schema: {
        operationId: 'cancelApprovalRequest',
        tags: ['approvals'],
        summary: 'Cancel your own pending request',
        description:
          'Only its maker, through any of their credentials (403 `forbidden` for anyone else); 409 `approval-not-pending` when it was decided already. No body.',
        params: RequestParams,
        querystring: ChangeQuery,
        headers: ChangeHeaders,
        response: { 200: ApprovalRequest, 403: Problem, 404: Problem, 409: Problem, 422: Problem },
      },
    },
    async (request, reply) => {
      const options = changeOptionsOf(request);
      return sendChange(
        reply,
        await approvals.cancel(request.params.requestId, approvalCallerOf(request), options),
        200,
      );
    },
  );
}
