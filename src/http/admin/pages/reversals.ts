import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../../composition/services.js';
import { AppError } from '../../../lib/errors.js';
import { keepsRule } from '../../../lib/input-rule.js';
import { ReversalReason } from '../../../modules/accounting/inputs.js';
import type { ReversalCounts, StoredReversal } from '../../../modules/accounting/reversal-store.js';
import {
  REVERSAL_REASON_LENGTH_MAX,
  type ReversalRequest,
  type ReversalView,
} from '../../../modules/accounting/reversals.js';
import { actorOfCaller } from '../../../modules/audit/entry.js';
import { PROBLEM_STATUS } from '../../problems.js';
import { dateField, lengthAttributes } from '../form-fields.js';
import { type Html, html } from '../html.js';
import { csrfField, emptyState, notice, type PageContext, page, pagination, table, when } from '../layout.js';
import { formatCount } from '../money.js';
import { contextOf, formOf, pagingOf, sendPage } from '../request.js';
import { countFacts, totalsTable } from '../reversal-facts.js';
import { selectionHtml } from '../words.js';
import { adminCallerOf, approvalPagePath } from './approvals.js';

/**
 * What a "Reverse…" action of the administration interface withdraws: one journal (its page) or
 * everything one ingestion session produced (its page). The other selections of the API (an
 * origin journal, a date range of an accounting configuration) are for the API and the CLI.
 */
type ActionSelection = { journalIds: [string] } | { ingestionId: string };

/** Where the action of a selection lives, and where "Cancel" goes back to. */
function actionPathOf(selection: ActionSelection): { action: string; back: string } {
  if ('ingestionId' in selection) {
    const id = encodeURIComponent(selection.ingestionId);
    return { action: `/admin/ingestions/${id}/reverse`, back: `/admin/ingestions/${id}` };
  }
  const id = encodeURIComponent(selection.journalIds[0]);
  return { action: `/admin/journals/${id}/reverse`, back: `/admin/journals/${id}` };
}

/**
 * What a submitted "Reverse…" form asked, shown again on the form when its posting date was
 * refused, with the refusal beside the field.
 */
interface EnteredForm {
  reason: string;
  postingDate: string;
  /** Why the reason was refused, when it was. */
  reasonRefusal?: string;
  /** Why the posting date was refused: the detail, then what the field must be. */
  postingDateRefusal: string[];
}

/** The dry run of a "Reverse…" action, then the form that asks for the reason and confirms. */
function dryRunHtml(
  context: PageContext,
  selection: ActionSelection,
  counts: ReversalCounts,
  entered?: EnteredForm,
): Html {
  const { action, back } = actionPathOf(selection);
  const reasonRefusal =
    entered?.reasonRefusal === undefined
      ? ''
      : html`<div id="reason-refusal">${notice('error', html`<p><strong>${entered.reasonRefusal}</strong> Nothing was reversed.</p>`)}</div>`;
  const refusal =
    entered === undefined || entered.postingDate === '' || entered.postingDateRefusal.length === 0
      ? ''
      : html`<div id="posting-date-refusal">${notice(
          'error',
          html`<p><strong>The posting date ${entered.postingDate} was refused; nothing was reversed.</strong></p>${entered.postingDateRefusal.map((line) => html`<p>${line}</p>`)}<p>Leave the posting date empty to date each reversal journal by the rule above, or choose a day of an open period.</p>`,
        )}</div>`;
  return html`<section class="card">
<h2>What the reversal would do now</h2>
<p>Selection: ${selectionHtml(selection)}. Each journal gets one reversal journal with the same lines on the other side, dated on its own core date when that period is open, else on the first day of the earliest open period. Nothing is edited or deleted.</p>
${countFacts(counts, 'reversal-dry-run')}
${totalsTable(counts)}
${
  counts.journals === 0
    ? html`${notice(
        'info',
        'Nothing to reverse: every selected journal is reversed already, or is itself a reversal.',
      )}${refusal}`
    : html`<form method="post" action="${action}">
  ${csrfField(context)}
  <p><label>Reason (kept with the reversal and in the audit log)<br><textarea name="reason" rows="3" cols="60"${lengthAttributes(ReversalReason, { trimmed: true })} required${reasonRefusal === '' ? '' : html` aria-invalid="true" aria-describedby="reason-refusal"`}>${entered?.reason ?? ''}</textarea></label></p>
  ${reasonRefusal}
  <p>${dateField(
    'Posting date (optional: every reversal journal on this date)',
    'postingDate',
    entered?.postingDate,
    {
      hint: 'YYYY-MM-DD, a day of an open period of every journal selected; empty: the dating rule above',
      ...(refusal === '' ? {} : { invalid: true, describedBy: 'posting-date-refusal' }),
    },
  )}</p>
  ${refusal}
  <p class="actions"><button type="submit">Reverse ${formatCount(counts.journals)} ${counts.journals === 1 ? 'journal' : 'journals'}</button>
  <a href="${back}">Cancel</a></p>
</form>`
}
</section>`;
}

/**
 * The lines that say why a posting date was refused, when `error` refuses it (a posting date in
 * a closed or locked period, before a journal's core date, or not a date): its detail and what
 * the field must be. Undefined for any other error.
 */
function postingDateRefusalOf(error: unknown): string[] | undefined {
  if (!(error instanceof AppError)) return undefined;
  const entries = Array.isArray(error.extensions.errors)
    ? (error.extensions.errors as { path?: unknown; message?: unknown }[])
    : [];
  const onField = entries.filter((e) => e.path === '/postingDate');
  if (error.code !== 'posting-date-closed' && onField.length === 0) return undefined;
  return [
    error.message,
    ...onField.flatMap((e) => (typeof e.message === 'string' ? [`Posting date: ${e.message}.`] : [])),
  ];
}

function reversalFacts(reversal: StoredReversal): Html {
  return html`<dl class="facts" id="reversal">
  <dt>Reversed</dt><dd>${when(reversal.createdAt)} by ${reversal.createdBy}</dd>
  <dt>Reason</dt><dd>${reversal.reason}</dd>
  <dt>Selection</dt><dd>${selectionHtml(reversal.selection)}</dd>
  <dt>Posting date</dt><dd>${reversal.postingDate ?? 'by the dating rule'}</dd>
  <dt>Configuration revision</dt><dd>${String(reversal.revision)}</dd>
</dl>`;
}

function reversalBody(reversal: ReversalView): Html {
  const listed = reversal.reversalJournalIds;
  return html`${reversalFacts(reversal)}
${countFacts(reversal, 'reversal-counts')}
${totalsTable(reversal)}
<h2>Reversal journals</h2>
${
  listed.length === 0
    ? emptyState('This reversal wrote no journal.')
    : html`<p>${listed.map((id, i) => html`${i === 0 ? '' : ', '}<a class="id" href="/admin/journals/${encodeURIComponent(id)}">${id}</a>`)}${reversal.journals > listed.length ? html` and ${formatCount(reversal.journals - listed.length)} more` : ''}</p>`
}
<p><a href="/admin/reversals">Every reversal</a></p>`;
}

/**
 * The reason and posting date of a confirmed "Reverse…" form, and why the reason is refused when
 * it breaks the API's rule (blank, or longer than the API takes, in characters as it counts them).
 */
function requestOf(
  request: FastifyRequest,
  selection: ActionSelection,
): { asked: ReversalRequest; reasonRefusal: string | undefined } {
  const form = formOf(request);
  const reason = (form.get('reason') ?? '').trim();
  const postingDate = (form.get('postingDate') ?? '').trim();
  const asked = { selection, reason, ...(postingDate === '' ? {} : { postingDate }) };
  if (keepsRule(ReversalReason, reason)) return { asked, reasonRefusal: undefined };
  return {
    asked,
    reasonRefusal:
      reason === ''
        ? 'A reason is needed: say why these journals are reversed.'
        : `The reason is too long: at most ${formatCount(REVERSAL_REASON_LENGTH_MAX)} characters, and it has ${formatCount([...reason].length)}.`,
  };
}

/** Who may reverse journals. */
const reverse = { adminPermission: 'journals:reverse' as const };
/** Who may read the reversals. */
const read = { adminPermission: 'journals:read' as const };

/** A page's "Reverse…" action: where it lives, and the selection the page's id stands for. */
interface ReverseAction {
  path: string;
  selectionOf: (id: string) => ActionSelection;
}

/** The "Reverse…" actions: of a journal, and of an ingestion session. */
const REVERSE_ACTIONS: readonly ReverseAction[] = [
  { path: '/admin/journals/:id/reverse', selectionOf: (id) => ({ journalIds: [id] }) },
  { path: '/admin/ingestions/:id/reverse', selectionOf: (id) => ({ ingestionId: id }) },
];

/**
 * Reversals in the administration interface: the "Reverse…" actions of a journal and of an
 * ingestion session (the dry run, then the reason and the confirmation), every reversal made,
 * and one reversal with its journals.
 */
export function reversalPages(
  app: FastifyInstance,
  services: Pick<Services, 'reversals' | 'approvals'>,
): void {
  for (const action of REVERSE_ACTIONS) {
    registerReverseDryRunPage(app, services, action);
    registerReverseAction(app, services, action);
  }
  registerReversalPage(app, services);
  registerReversalListPage(app, services);
}

/** `GET` of a "Reverse…" action: what the reversal would do now, and the form that confirms it. */
function registerReverseDryRunPage(
  app: FastifyInstance,
  services: Pick<Services, 'reversals'>,
  { path, selectionOf }: ReverseAction,
): void {
  app.get<{ Params: { id: string } }>(path, { config: reverse }, async (request, reply) => {
    const context = contextOf(request);
    const selection = selectionOf(request.params.id);
    const counts = await services.reversals.dryRun({ selection, reason: 'dry run' });
    return sendPage(reply, page(context, 'Reverse journals', dryRunHtml(context, selection, counts)));
  });
}

/**
 * `POST` of a "Reverse…" action: the confirmed reversal (or its approval request when reversals
 * wait for one); the form again, with the dry run, when the reason or the posting date is refused.
 */
function registerReverseAction(
  app: FastifyInstance,
  services: Pick<Services, 'reversals' | 'approvals'>,
  { path, selectionOf }: ReverseAction,
): void {
  app.post<{ Params: { id: string } }>(path, { config: reverse }, async (request, reply) => {
    const context = contextOf(request);
    const { user } = context.principal;
    const selection = selectionOf(request.params.id);
    const { asked, reasonRefusal } = requestOf(request, selection);
    /** The dry run again, with what was asked and, when refused, why. */
    const formAgain = async (status: number, refusal?: { reason?: string; postingDate?: string[] }) => {
      const counts = await services.reversals.dryRun({ selection, reason: 'dry run' });
      const entered =
        refusal === undefined
          ? undefined
          : {
              reason: asked.reason,
              postingDate: asked.postingDate ?? '',
              postingDateRefusal: refusal.postingDate ?? [],
              ...(refusal.reason === undefined ? {} : { reasonRefusal: refusal.reason }),
            };
      return sendPage(
        reply,
        page(context, 'Reverse journals', dryRunHtml(context, selection, counts, entered)),
        status,
      );
    };
    if (reasonRefusal !== undefined) return formAgain(400, { reason: reasonRefusal });
    try {
      if (services.approvals.isRequired('reversal')) {
        // Four eyes: the reversal waits for another user (docs/domain/approvals.md).
        const { request: made } = await services.approvals.request(
          'reversal',
          asked,
          adminCallerOf(context),
          undefined,
        );
        return reply.redirect(approvalPagePath(made.requestId), 303);
      }
      // Idempotency keys are the API's; a form post has none.
      const answer = await services.reversals.reverse(asked, actorOfCaller(user.email, null), undefined);
      // Reversed meanwhile (another user, the API): nothing was recorded; the dry run says why.
      if (answer.kind === 'nothing-new') return formAgain(200);
      return reply.redirect(`/admin/reversals/${encodeURIComponent(answer.reversal.reversalId)}`, 303);
    } catch (error) {
      // A refused posting date is shown on the form, beside its field, with the reason kept.
      const refusal = postingDateRefusalOf(error);
      if (refusal === undefined) throw error;
      return formAgain(error instanceof AppError ? PROBLEM_STATUS[error.code] : 422, {
        postingDate: refusal,
      });
    }
  });
}

/** `/admin/reversals/:id`: one reversal with its journals. */
function registerReversalPage(app: FastifyInstance, services: Pick<Services, 'reversals'>): void {
  app.get<{ Params: { id: string } }>('/admin/reversals/:id', { config: read }, async (request, reply) => {
    const context = contextOf(request);
    const reversal = await services.reversals.get(request.params.id);
    return sendPage(reply, page(context, 'Reversal', reversalBody(reversal)));
  });
}

/** `/admin/reversals`: every reversal made, newest first. */
function registerReversalListPage(app: FastifyInstance, services: Pick<Services, 'reversals'>): void {
  app.get('/admin/reversals', { config: read }, async (request, reply) => {
    const context = contextOf(request);
    const { page: pageNo, limit } = pagingOf(request);
    const { rows, total } = await services.reversals.list({ page: pageNo }, limit);
    const body =
      rows.length === 0
        ? emptyState('No reversal yet. Reverse a journal or an ingestion from its page (Reverse…).')
        : html`${table(
            'reversals',
            [
              'Reversed',
              'By',
              { label: 'Reason', kind: 'long' },
              'Selection',
              { label: 'Journals', kind: 'num' },
              { label: 'Already reversed', kind: 'num' },
            ],
            rows.map((r) => [
              html`<a href="/admin/reversals/${encodeURIComponent(r.reversalId)}">${when(r.createdAt)}</a>`,
              r.createdBy,
              r.reason,
              selectionHtml(r.selection),
              formatCount(r.journals),
              formatCount(r.alreadyReversed),
            ]),
          )}${pagination('/admin/reversals', {}, pageNo, limit, total ?? 0)}`;
    return sendPage(reply, page(context, 'Reversals', body));
  });
}
