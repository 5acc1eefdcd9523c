import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../composition/services.js';
import { AppError } from '../../../lib/errors.js';
import { keepsRule } from '../../../lib/input-rule.js';
import { APPROVAL_REASON_LENGTH_MAX, ApprovalReason } from '../../../modules/approvals/inputs.js';
import type { ApprovalCaller } from '../../../modules/approvals/service.js';
import {
  APPROVAL_STATUSES,
  type ApprovalStatus,
  type StoredApprovalRequest,
  signedInClientIdOf,
} from '../../../modules/approvals/store.js';
import { type Html, html } from '../html.js';
import { csrfField, emptyState, notice, type PageContext, page, pagination, table, when } from '../layout.js';
import { formatCount } from '../money.js';
import { AdminPageError, contextOf, formOf, pagingOf, queryText, sendPage } from '../request.js';

/** The page of one approval request. */
export function approvalPagePath(requestId: string): string {
  return `/admin/approvals/${encodeURIComponent(requestId)}`;
}

/**
 * A signed-in user as approvals know people: the user, and a client id of their own for the
 * administration interface (the scope the reversal pages use too).
 */
export function adminCallerOf(context: PageContext): ApprovalCaller {
  const { email } = context.principal.user;
  return { email, clientId: signedInClientIdOf(email) };
}

/** How each status reads in the queue. */
const STATUS_LABEL: Record<ApprovalStatus, string> = {
  'pending-approval': 'Pending approval',
  processing: 'Processing',
  approved: 'Approved',
  rejected: 'Rejected',
  canceled: 'Canceled',
  invalid: 'Invalid',
  failed: 'Failed',
};

/** How each kind reads. */
const KIND_LABEL: Record<StoredApprovalRequest['kind'], string> = {
  'configuration.upload': 'Configuration upload',
  'configuration.delete': 'Configuration wipe',
  reversal: 'Reversal',
  'period.reopen': 'Period reopening',
};

/** A JSON value of a dry run as a short line: its numbers, member by member. */
function countsLine(value: unknown): string {
  if (value === null || typeof value !== 'object') return String(value);
  return Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => typeof v === 'number')
    .map(([k, v]) => `${k} ${formatCount(v as number)}`)
    .join(' · ');
}

/** What a request's dry run says in one line: what it deletes, reverses or reopens. */
function dryRunLine(request: StoredApprovalRequest): string {
  const { dryRun, summary } = request;
  if (request.kind === 'period.reopen') {
    const since =
      typeof dryRun.actedAt === 'string' ? ` by ${String(dryRun.actedBy)} at ${dryRun.actedAt}` : '';
    return `reopens ${String(summary.accountingConfig)} ${JSON.stringify(summary.node)} ${String(summary.firstDay)} to ${String(summary.lastDay)}, ${String(dryRun.state)} (${String(dryRun.basis)}${since}), because: ${String(summary.reason)}`;
  }
  if ('wouldDelete' in dryRun) {
    const keep = dryRun.keepProcessingData === true ? 'keeps the processing data; ' : '';
    return `${keep}deletes ${countsLine(dryRun.wouldDelete)}`;
  }
  return `reverses ${countsLine(dryRun)}`;
}

/** The changes of an upload, as the approver reads them. */
function summaryHtml(request: StoredApprovalRequest): Html | string {
  const { summary } = request;
  if (!Array.isArray(summary.changes)) return '';
  const changes = summary.changes as { path: string; kind: string }[];
  return html`<h3>Changes from the stored configuration</h3>
<p id="approval-diff">${String(summary.added)} added · ${String(summary.removed)} removed · ${String(summary.changed)} changed${summary.truncated === true ? ' (more than listed)' : ''}</p>
${changes.length === 0 ? '' : html`<ul class="changes">${changes.map((c) => html`<li><code>${c.path || '/'}</code> ${c.kind}</li>`)}</ul>`}`;
}

/** The forms the signed-in user may use on a request: approve and reject (never the maker's), or cancel (the maker's own). */
function actionsHtml(context: PageContext, request: StoredApprovalRequest): Html | string {
  if (request.status !== 'pending-approval') return '';
  const path = approvalPagePath(request.requestId);
  const isMaker = request.makerEmail.toLowerCase() === context.principal.user.email.toLowerCase();
  if (isMaker)
    return html`<p class="muted">You made this request: another user approves or rejects it.</p>
<form method="post" action="${path}/cancel">${csrfField(context)}<button type="submit">Cancel my request</button></form>`;
  if (!context.principal.permissions.has('approvals:approve'))
    return html`<p class="muted">A user with the approvals:approve permission approves or rejects it.</p>`;
  return html`<form method="post" action="${path}/approve" id="approve-form">
  ${csrfField(context)}
  <p>Approving runs it now, as your action on behalf of ${request.makerEmail}, only while the data is still what the dry run above shows.</p>
  <button type="submit" class="danger">Approve and run</button>
</form>
<form method="post" action="${path}/reject" id="reject-form">
  ${csrfField(context)}
  <label>Reason <textarea name="reason" required maxlength="${APPROVAL_REASON_LENGTH_MAX}"></textarea></label>
  <button type="submit">Reject</button>
</form>`;
}

/** One request: what it asks, what it binds to, and what became of it. */
function requestHtml(context: PageContext, request: StoredApprovalRequest): Html {
  const problem = request.problem;
  return html`<section class="card" id="approval-request">
<dl class="facts">
  <dt>Kind</dt><dd>${KIND_LABEL[request.kind]}</dd>
  <dt>Status</dt><dd id="approval-status">${STATUS_LABEL[request.status]}</dd>
  <dt>Made by</dt><dd>${request.makerEmail} (${request.makerClientId}), ${when(request.createdAt)}</dd>
  <dt>Document SHA-256</dt><dd><code class="id">${request.documentSha256}</code></dd>
  <dt>Configuration revision</dt><dd>${String(request.revision)}</dd>
  <dt>Dry run</dt><dd id="approval-dry-run">${dryRunLine(request)}</dd>
  ${request.decidedBy === null ? '' : html`<dt>Decided by</dt><dd>${request.decidedBy}, ${when(request.decidedAt)}</dd>`}
  ${request.reason === null ? '' : html`<dt>Reason</dt><dd>${request.reason}</dd>`}
  ${request.outcome === null ? '' : html`<dt>Outcome</dt><dd>${JSON.stringify(request.outcome)}</dd>`}
</dl>
${problem === null ? '' : notice('error', html`<strong>${problem.code}</strong>: ${problem.detail}`)}
${summaryHtml(request)}
${actionsHtml(context, request)}
</section>`;
}

/**
 * Four-eyes approval in the administration interface (docs/domain/approvals.md): the queue of
 * requests with their dry runs, one request with its document hash and changes, and the
 * approve, reject (with a reason) and cancel actions. Approve and reject are never offered to
 * the maker, and the service refuses them to the maker whatever the page shows.
 */
export function approvalPages(app: FastifyInstance, services: Pick<Services, 'approvals'>): void {
  const { approvals } = services;
  const read = { adminPermission: ['approvals:read', 'approvals:approve'] as const };
  const approve = { adminPermission: 'approvals:approve' as const };

  app.get('/admin/approvals', { config: read }, async (request, reply) => {
    const context = contextOf(request);
    const asked = queryText(request, 'status') ?? 'pending-approval';
    const status = (APPROVAL_STATUSES as readonly string[]).includes(asked)
      ? (asked as ApprovalStatus)
      : undefined;
    const { page: pageNo, limit } = pagingOf(request);
    const { rows, total } = await approvals.list(status, { page: pageNo }, limit);
    const filters = html`<nav class="filters" aria-label="Status">${[...APPROVAL_STATUSES, 'all'].map((s) =>
      s === (status ?? 'all')
        ? html`<strong>${s === 'all' ? 'All' : STATUS_LABEL[s as ApprovalStatus]}</strong> `
        : html`<a href="/admin/approvals?status=${s}">${s === 'all' ? 'All' : STATUS_LABEL[s as ApprovalStatus]}</a> `,
    )}</nav>`;
    const required = approvals.required();
    const setting =
      required.length === 0
        ? notice('info', 'No kind of action waits for approval: APPROVAL_REQUIRED is empty.')
        : html`<p>Waiting for approval: ${required.map((k) => KIND_LABEL[k]).join(', ')}.</p>`;
    const body =
      rows.length === 0
        ? emptyState('No request in this status.')
        : html`${table(
            'approvals',
            ['Made', 'Kind', 'By', 'Status', { label: 'Dry run', kind: 'long' }, 'Document'],
            rows.map((r) => [
              html`<a href="${approvalPagePath(r.requestId)}">${when(r.createdAt)}</a>`,
              KIND_LABEL[r.kind],
              r.makerEmail,
              STATUS_LABEL[r.status],
              dryRunLine(r),
              html`<code class="id">${r.documentSha256.slice(0, 12)}</code>`,
            ]),
          )}${pagination('/admin/approvals', { status: status ?? 'all' }, pageNo, limit, total ?? 0)}`;
    return sendPage(reply, page(context, 'Approvals', html`${setting}${filters}${body}`));
  });

  app.get<{ Params: { id: string } }>('/admin/approvals/:id', { config: read }, async (request, reply) => {
    const context = contextOf(request);
    const found = await approvals.get(request.params.id);
    return sendPage(reply, page(context, 'Approval request', requestHtml(context, found)));
  });

  app.post<{ Params: { id: string } }>(
    '/admin/approvals/:id/approve',
    { config: approve },
    async (request, reply) => {
      const context = contextOf(request);
      const { id } = request.params;
      try {
        await approvals.approve(id, adminCallerOf(context));
      } catch (error) {
        // An approval that ran into moved data or the action's refusal is shown on the request,
        // which now says so; any other error is the page's.
        const after = await approvals.get(id);
        if (!(error instanceof AppError) || !['invalid', 'failed'].includes(after.status)) throw error;
      }
      return reply.redirect(approvalPagePath(id), 303);
    },
  );

  app.post<{ Params: { id: string } }>(
    '/admin/approvals/:id/reject',
    { config: approve },
    async (request, reply) => {
      const context = contextOf(request);
      const reason = (formOf(request).get('reason') ?? '').trim();
      if (!keepsRule(ApprovalReason, reason))
        throw new AdminPageError(
          400,
          'A reason is required',
          `A rejection says why, in 1 to ${APPROVAL_REASON_LENGTH_MAX} characters.`,
          'Write the reason, then reject.',
        );
      await approvals.reject(request.params.id, adminCallerOf(context), reason);
      return reply.redirect(approvalPagePath(request.params.id), 303);
    },
  );

  app.post<{ Params: { id: string } }>(
    '/admin/approvals/:id/cancel',
    { config: read },
    async (request, reply) => {
      const context = contextOf(request);
      await approvals.cancel(request.params.id, adminCallerOf(context));
      return reply.redirect(approvalPagePath(request.params.id), 303);
    },
  );
}
