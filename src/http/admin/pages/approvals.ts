import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../composition/services.js';
import { AppError } from '../../../lib/errors.js';
import type { ReversalCounts } from '../../../modules/accounting/reversal-store.js';
import { ApprovalReason, ApprovalRejectBody } from '../../../modules/approvals/inputs.js';
import type { ApprovalCaller } from '../../../modules/approvals/service.js';
import {
  APPROVAL_STATUSES,
  type ApprovalStatus,
  type StoredApprovalRequest,
  signedInClientIdOf,
} from '../../../modules/approvals/store.js';
import type { UserView } from '../../../modules/auth/access-directory.js';
import type { PeriodBasis, PeriodStateName } from '../../../modules/periods/service.js';
import { lengthAttributes } from '../form-fields.js';
import { formInput } from '../form-input.js';
import { type Html, type HtmlValue, html } from '../html.js';
import { currentJournalFields, type JournalFields } from '../journal-fields.js';
import { csrfField, emptyState, notice, type PageContext, page, pagination, table, when } from '../layout.js';
import { formatCount } from '../money.js';
import { contextOf, formOf, pagingOf, queryText, sendPage } from '../request.js';
import { countFacts, totalsTable } from '../reversal-facts.js';
import {
  countOf,
  idHtml,
  isSelection,
  keyInWords,
  nodeWords,
  type PeriodStateFacts,
  periodName,
  periodStateHtml,
  periodStateText,
  selectionHtml,
} from '../words.js';

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
export const KIND_LABEL: Record<StoredApprovalRequest['kind'], string> = {
  'configuration.upload': 'Configuration upload',
  'configuration.delete': 'Configuration wipe',
  reversal: 'Reversal',
  'period.reopen': 'Period reopening',
};

/** The nouns of what a configuration change wipes, by the member that counts it. */
const WIPED_NOUNS: Record<string, [string, string]> = {
  ingestions: ['ingestion session', 'ingestion sessions'],
  records: ['record', 'records'],
  journals: ['journal', 'journals'],
  journalLines: ['journal line', 'journal lines'],
  processingErrors: ['processing error', 'processing errors'],
};

/** Counts of processing data in words (`1 ingestion session, 4 journals`), or undefined when all are 0. */
export function wipedWords(counts: unknown): string | undefined {
  if (counts === null || typeof counts !== 'object') return undefined;
  const parts = Object.entries(counts as Record<string, unknown>)
    .filter((entry): entry is [string, number] => typeof entry[1] === 'number' && entry[1] > 0)
    .map(([key, n]) => {
      const [singular, plural] = WIPED_NOUNS[key] ?? [
        keyInWords(key).toLowerCase(),
        keyInWords(key).toLowerCase(),
      ];
      return countOf(n, singular, plural);
    });
  return parts.length === 0 ? undefined : parts.join(', ');
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function numberOf(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

/** A node as a request or an audit entry stored it, or undefined when it is not one. */
export function nodeOf(value: unknown): Record<string, string> | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const entries = Object.entries(value as Record<string, unknown>);
  return entries.every(([, v]) => typeof v === 'string')
    ? Object.fromEntries(entries as [string, string][])
    : undefined;
}

const PERIOD_STATES: readonly string[] = ['open', 'grace', 'closed', 'locked'];
const PERIOD_BASES: readonly string[] = ['calendar', 'grace', 'closed-by-hand', 'locked-by-hand', 'reopened'];

/** A period's state as a dry run or an outcome keeps it, or undefined when it is none. */
function storedStateOf(value: Record<string, unknown>): PeriodStateFacts | undefined {
  const { state, basis } = value;
  if (typeof state !== 'string' || !PERIOD_STATES.includes(state)) return undefined;
  if (typeof basis !== 'string' || !PERIOD_BASES.includes(basis)) return undefined;
  return {
    state: state as PeriodStateName,
    basis: basis as PeriodBasis,
    actedBy: stringOf(value.actedBy) ?? null,
    actedAt: stringOf(value.actedAt) ?? null,
  };
}

/** A period's state as a dry run or an outcome keeps it, in words; its text when it is none. */
export function storedStateHtml(value: Record<string, unknown>): Html | string {
  const facts = storedStateOf(value);
  return facts === undefined ? String(value.state ?? '') : periodStateHtml(facts);
}

/**
 * What a request would do, in one sentence, from its dry run (and its summary, for the period of
 * a reopening): the queue shows it, and so does the audit entry of each step of a request.
 */
export function dryRunWords(
  kind: StoredApprovalRequest['kind'],
  dryRun: Record<string, unknown>,
  summary: Record<string, unknown> = {},
): Html | string {
  switch (kind) {
    case 'configuration.upload': {
      const wiped = wipedWords(dryRun.wouldDelete);
      if (dryRun.keepProcessingData === true) return 'Keeps the processing data.';
      return wiped === undefined ? 'Wipes the processing data (there is none now).' : `Wipes ${wiped}.`;
    }
    case 'configuration.delete': {
      const wiped = wipedWords(dryRun.wouldDelete);
      return `Empties the configuration and wipes ${wiped ?? 'the processing data (there is none now)'}.`;
    }
    case 'reversal':
      return `Writes ${countOf(numberOf(dryRun.journals), 'reversal journal')} (${countOf(numberOf(dryRun.lines), 'line')})${numberOf(dryRun.alreadyReversed) > 0 ? `; ${formatCount(numberOf(dryRun.alreadyReversed))} already reversed` : ''}.`;
    case 'period.reopen': {
      const firstDay = stringOf(summary.firstDay);
      const period =
        firstDay === undefined ? 'the period' : periodName(firstDay, stringOf(summary.lastDay) ?? firstDay);
      const state = storedStateOf(dryRun);
      return `Reopens ${period}${state === undefined ? '' : ` (now ${periodStateText(state)})`}.`;
    }
  }
}

/** A person as the approval pages name them: their name and e-mail, and how they acted. */
function personHtml(email: string, clientId: string | null, users: ReadonlyMap<string, UserView>): Html {
  const user = users.get(email.toLowerCase());
  const how =
    clientId === null || clientId === signedInClientIdOf(email)
      ? html` <span class="why">in the administration interface</span>`
      : html` <span class="why">through the API, with the credential <code>${clientId}</code></span>`;
  return html`${user === undefined ? '' : html`${user.displayName} `}&lt;${idHtml(email)}&gt;${how}`;
}

/** The changes of a configuration upload, path by path, as the approver reads them. */
function uploadChangesHtml(request: StoredApprovalRequest): Html {
  const { summary } = request;
  const changes = Array.isArray(summary.changes)
    ? (summary.changes as { path?: unknown; kind?: unknown }[])
    : [];
  const listed =
    changes.length === 0
      ? html`<p>No change from the stored configuration.</p>`
      : table(
          'approval-changes',
          ['Path', 'Change'],
          changes.map((c) => [html`<code>${String(c.path ?? '') || '/'}</code>`, String(c.kind ?? '')]),
        );
  return html`<h2>The change</h2>
<p id="approval-diff">${formatCount(numberOf(summary.added))} added · ${formatCount(numberOf(summary.removed))} removed · ${formatCount(numberOf(summary.changed))} changed${summary.truncated === true ? ' (the first ones are listed)' : ''}.</p>
${listed}`;
}

/** A reversal request's selection, reason and posting date, when the request carries them. */
function reversalChangeHtml(request: StoredApprovalRequest): Html {
  const { summary } = request;
  const reason = stringOf(summary.reason);
  const postingDate = stringOf(summary.postingDate);
  const said = isSelection(summary.selection)
    ? html`<dl class="facts" id="approval-change">
  <dt>Selection</dt><dd>${selectionHtml(summary.selection)}</dd>
  <dt>Reason</dt><dd>${reason ?? ''}</dd>
  <dt>Posting date</dt><dd>${postingDate ?? 'by the dating rule (each journal on its own date, or the first open day)'}</dd>
</dl>`
    : notice(
        'warning',
        html`<p id="approval-change">This request does not carry its selection and reason: ask its maker which journals it reverses and why before approving.</p>`,
      );
  const counts = request.dryRun as unknown as ReversalCounts;
  return html`<h2>The change</h2>
${said}
<h3>What it writes now</h3>
${Array.isArray(counts.totals) ? html`${countFacts(counts, 'approval-counts')}${totalsTable(counts)}` : dryRunWords(request.kind, request.dryRun)}`;
}

/** A reopening's period, node and reason, and the state the period is in now. */
function reopenChangeHtml(request: StoredApprovalRequest, fields: JournalFields): Html {
  const { summary } = request;
  const firstDay = stringOf(summary.firstDay) ?? '';
  const lastDay = stringOf(summary.lastDay) ?? firstDay;
  const node = nodeOf(summary.node);
  return html`<h2>The change</h2>
<dl class="facts" id="approval-change">
  <dt>Period</dt><dd><strong>${periodName(firstDay, lastDay)}</strong> (${firstDay} to ${lastDay})</dd>
  <dt>Node</dt><dd>${node === undefined ? '' : nodeWords(node, fields)}</dd>
  <dt>Accounting configuration</dt><dd>${stringOf(summary.accountingConfig) ?? ''}</dd>
  <dt>Now</dt><dd>${storedStateHtml(request.dryRun)}</dd>
  <dt>Reason</dt><dd>${stringOf(summary.reason) ?? ''}</dd>
</dl>`;
}

/** What the request changes, by kind: what the approver decides on. */
function changeHtml(request: StoredApprovalRequest, fields: JournalFields): Html {
  switch (request.kind) {
    case 'configuration.upload':
      return uploadChangesHtml(request);
    case 'configuration.delete':
      return html`<h2>The change</h2><p id="approval-change">${dryRunWords(request.kind, request.dryRun)}</p>`;
    case 'reversal':
      return reversalChangeHtml(request);
    case 'period.reopen':
      return reopenChangeHtml(request, fields);
  }
}

/** What became of an approved request, in words. */
function outcomeHtml(request: StoredApprovalRequest): HtmlValue {
  const outcome = request.outcome;
  if (outcome === null) return '';
  const reversalId = stringOf(outcome.reversalId);
  if (reversalId !== undefined)
    return html`<a href="/admin/reversals/${encodeURIComponent(reversalId)}">${countOf(numberOf(outcome.journals), 'reversal journal')} written</a>`;
  if (typeof outcome.revision === 'number')
    return html`<a href="/admin/configuration/revisions/${String(outcome.revision)}">Revision ${String(outcome.revision)}</a>${wipedWords(outcome.deleted) === undefined ? '' : `; wiped ${wipedWords(outcome.deleted) ?? ''}`}`;
  if (typeof outcome.state === 'string') return storedStateHtml(outcome);
  return Object.entries(outcome)
    .map(([key, value]) => `${keyInWords(key)}: ${String(value)}`)
    .join(' · ');
}

/**
 * The decision of the signed-in user, its buttons on one line: approve and reject (never the
 * maker's), or cancel (the maker's own). The reject form holds the reason; each button names
 * its form, so both stand side by side whatever form they belong to.
 */
function actionsHtml(context: PageContext, request: StoredApprovalRequest): Html | string {
  if (request.status !== 'pending-approval') return '';
  const path = approvalPagePath(request.requestId);
  const back = html`<a href="/admin/approvals">Back to the queue</a>`;
  const isMaker = request.makerEmail.toLowerCase() === context.principal.user.email.toLowerCase();
  if (isMaker)
    return html`<section class="decision" aria-labelledby="decision-heading">
<h2 id="decision-heading">Your request</h2>
<p class="muted">You made this request: another user approves or rejects it.</p>
<form method="post" action="${path}/cancel" id="cancel-form">${csrfField(context)}</form>
<p class="actions"><button type="submit" form="cancel-form">Cancel my request</button>${back}</p>
</section>`;
  if (!context.principal.permissions.has('approvals:approve'))
    return html`<p class="muted">A user with the approvals:approve permission approves or rejects it.</p>`;
  return html`<section class="decision" aria-labelledby="decision-heading">
<h2 id="decision-heading">Your decision</h2>
<p>Approving runs it now, as your action on behalf of ${request.makerEmail}, only while the data is still what is shown above. Rejecting needs a reason, which the maker reads.</p>
<form method="post" action="${path}/approve" id="approve-form">${csrfField(context)}</form>
<form method="post" action="${path}/reject" id="reject-form">
  ${csrfField(context)}
  <label>Reason, to reject <textarea name="reason" rows="2" required${lengthAttributes(ApprovalReason, { trimmed: true })}></textarea></label>
</form>
<p class="actions"><button type="submit" form="approve-form" class="danger">Approve and run</button><button type="submit" form="reject-form">Reject</button>${back}</p>
</section>`;
}

/** One request: who asked, what it changes, what it binds to, and what became of it. */
function requestHtml(
  context: PageContext,
  request: StoredApprovalRequest,
  users: ReadonlyMap<string, UserView>,
  fields: JournalFields,
): Html {
  const problem = request.problem;
  return html`<section class="card" id="approval-request">
<dl class="facts">
  <dt>Kind</dt><dd>${KIND_LABEL[request.kind]}</dd>
  <dt>Status</dt><dd id="approval-status">${STATUS_LABEL[request.status]}</dd>
  <dt>Made by</dt><dd id="approval-maker">${personHtml(request.makerEmail, request.makerClientId, users)} <span class="why">on ${when(request.createdAt)}</span></dd>
  ${request.decidedBy === null ? '' : html`<dt>Decided by</dt><dd>${personHtml(request.decidedBy, request.decidedByClientId, users)} <span class="why">on ${when(request.decidedAt)}</span></dd>`}
  ${request.reason === null ? '' : html`<dt>Why it was rejected</dt><dd>${request.reason}</dd>`}
  ${request.outcome === null ? '' : html`<dt>Outcome</dt><dd>${outcomeHtml(request)}</dd>`}
  <dt>What it does</dt><dd id="approval-dry-run">${dryRunWords(request.kind, request.dryRun, request.summary)}</dd>
</dl>
${problem === null ? '' : notice('error', html`<strong>${problem.code}</strong>: ${problem.detail}`)}
${changeHtml(request, fields)}
<h2>What the approval binds to</h2>
<dl class="facts">
  <dt>Configuration revision</dt><dd>${String(request.revision)}</dd>
  <dt>Document SHA-256</dt><dd><code class="id">${request.documentSha256}</code></dd>
</dl>
${actionsHtml(context, request)}
</section>`;
}

/** Who may open the approval pages, and cancel their own requests. */
const read = { adminPermission: ['approvals:read', 'approvals:approve'] as const };
/** Who may approve and reject requests. */
const approve = { adminPermission: 'approvals:approve' as const };

/**
 * Four-eyes approval in the administration interface (docs/domain/approvals.md): the queue of
 * requests with their dry runs, one request with its maker, its change and what it binds to, and
 * the approve, reject (with a reason) and cancel actions. Approve and reject are never offered
 * to the maker, and the service refuses them to the maker whatever the page shows.
 */
export function approvalPages(
  app: FastifyInstance,
  services: Pick<Services, 'approvals' | 'access' | 'snapshots'>,
): void {
  registerQueuePage(app, services.approvals);
  registerRequestPage(app, services);
  registerDecisionActions(app, services.approvals);
}

/** `/admin/approvals`: the requests of one status (or all), and the kinds that wait for approval. */
function registerQueuePage(app: FastifyInstance, approvals: Services['approvals']): void {
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
            [
              'Made',
              { label: 'Kind', kind: 'words' },
              'By',
              { label: 'Status', kind: 'words' },
              { label: 'What it does', kind: 'words' },
              'Document',
            ],
            rows.map((r) => [
              html`<a href="${approvalPagePath(r.requestId)}">${when(r.createdAt)}</a>`,
              KIND_LABEL[r.kind],
              idHtml(r.makerEmail),
              STATUS_LABEL[r.status],
              dryRunWords(r.kind, r.dryRun, r.summary),
              html`<code class="id">${r.documentSha256.slice(0, 12)}</code>`,
            ]),
          )}${pagination('/admin/approvals', { status: status ?? 'all' }, pageNo, limit, total ?? 0)}`;
    return sendPage(reply, page(context, 'Approvals', html`${setting}${filters}${body}`));
  });
}

/** `/admin/approvals/:id`: one request, with its maker, its change and what it binds to. */
function registerRequestPage(
  app: FastifyInstance,
  services: Pick<Services, 'approvals' | 'access' | 'snapshots'>,
): void {
  const { approvals } = services;

  /** The users a request names, by lower-case e-mail, for their names. */
  const usersOf = async (emails: readonly (string | null)[]): Promise<Map<string, UserView>> => {
    const distinct = [...new Set(emails.filter((e): e is string => e !== null).map((e) => e.toLowerCase()))];
    const found = await Promise.all(distinct.map((email) => services.access.findUser(email)));
    return new Map(
      found.filter((u): u is UserView => u !== undefined).map((u) => [u.email.toLowerCase(), u]),
    );
  };

  app.get<{ Params: { id: string } }>('/admin/approvals/:id', { config: read }, async (request, reply) => {
    const context = contextOf(request);
    const found = await approvals.get(request.params.id);
    const [users, fields] = await Promise.all([
      usersOf([found.makerEmail, found.decidedBy]),
      currentJournalFields(services),
    ]);
    return sendPage(reply, page(context, 'Approval request', requestHtml(context, found, users, fields)));
  });
}

/** `POST /admin/approvals/:id/approve`, `…/reject` and `…/cancel`: what becomes of a pending request. */
function registerDecisionActions(app: FastifyInstance, approvals: Services['approvals']): void {
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
      const { reason } = formInput(ApprovalRejectBody, formOf(request), 'A reason is required');
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
