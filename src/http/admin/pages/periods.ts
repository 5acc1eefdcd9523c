import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../composition/services.js';
import { keepsRule } from '../../../lib/input-rule.js';
import { nodeOfJson, PeriodReason } from '../../../modules/periods/inputs.js';
import { PERIOD_REASON_LENGTH_MAX, type PeriodView } from '../../../modules/periods/service.js';
import type { PeriodAction, StoredSnapshot } from '../../../modules/periods/store.js';
import { lengthAttributes } from '../form-fields.js';
import { type Html, html } from '../html.js';
import { currentJournalFields, type JournalFields } from '../journal-fields.js';
import { csrfField, emptyState, notice, type PageContext, page, table, when } from '../layout.js';
import { amountHtml, formatCount } from '../money.js';
import { AdminPageError, actorOf, contextOf, formOf, queryText, sendPage } from '../request.js';
import { idHtml, nodeText, nodeWords, periodName, periodStateHtml } from '../words.js';
import { adminCallerOf, approvalPagePath } from './approvals.js';

/** What each change is called, and what the confirmation says it does. */
const ACTIONS: { readonly [A in PeriodAction]: { verb: string; consequence: string } } = {
  close: {
    verb: 'Close',
    consequence:
      'Journals dated in it will fail closed-period (or move to the first open period after it where the posting date override is on). It is refused while records wait for processing or journals dated in it are unposted. A trial-balance snapshot of its last day is kept.',
  },
  lock: {
    verb: 'Lock',
    consequence:
      'No journal will be posted in it, no reversal dated in it, and the posting date override moves nothing into it, until it is reopened. A trial-balance snapshot of its last day is kept.',
  },
  reopen: {
    verb: 'Reopen',
    consequence:
      'Journals dated in it will post again until it is closed or locked again. Records that failed closed-period are posted by a reprocessing run of that code. Earlier snapshots are kept.',
  },
};

/** The action a page path names. Errors: a 404 page for any other word. */
function actionOf(value: string): PeriodAction {
  if (value === 'close' || value === 'lock' || value === 'reopen') return value;
  throw new AdminPageError(
    404,
    'No such page',
    `There is no period action ${value}.`,
    'Open the periods list.',
  );
}

/** The period a page or a form names: accounting configuration, node (JSON) and first day. */
interface Target {
  accountingConfig: string;
  node: Record<string, string>;
  firstDay: string;
}

/** The target of a query or a form, or a 400 page naming what is missing. */
function targetOf(get: (name: string) => string | undefined): Target {
  const accountingConfig = get('accountingConfig');
  const node = nodeOfJson(get('node') ?? '');
  const firstDay = get('firstDay');
  if (accountingConfig === undefined || node === undefined || firstDay === undefined)
    throw new AdminPageError(
      400,
      'Which period?',
      'The page needs an accounting configuration, a node and the first day of a period.',
      'Open it from the periods list.',
    );
  return { accountingConfig, node, firstDay };
}

function targetQuery(target: Target): string {
  return new URLSearchParams({
    accountingConfig: target.accountingConfig,
    node: JSON.stringify(target.node),
    firstDay: target.firstDay,
  }).toString();
}

/** A period of a node as a sentence names it: `November 2026 of Legal entity LF_NL · Branch AMS`. */
function periodOfNode(
  p: { firstDay: string; lastDay: string; node: Record<string, string> },
  fields: JournalFields | undefined,
): Html {
  return html`${periodName(p.firstDay, p.lastDay)} of ${nodeWords(p.node, fields)}`;
}

/**
 * The periods newest first, then by node: the latest period, where work happens, is read
 * first, as accountants read their books (the service lists them by node, oldest first).
 */
function newestFirst(periods: readonly PeriodView[]): PeriodView[] {
  const nodeKey = (p: PeriodView) => JSON.stringify(Object.entries(p.node).sort());
  return [...periods].sort((a, b) =>
    a.firstDay === b.firstDay ? nodeKey(a).localeCompare(nodeKey(b)) : a.firstDay < b.firstDay ? 1 : -1,
  );
}

/** The changes the state of a period allows, as links to their confirmation. */
function actionLinks(accountingConfig: string, p: PeriodView, canManage: boolean): Html | string {
  if (!canManage) return '';
  const query = targetQuery({ accountingConfig, node: p.node, firstDay: p.firstDay });
  return html`${p.actions.map(
    (a, i) => html`${i === 0 ? '' : ' · '}<a href="/admin/periods/${a}?${query}">${ACTIONS[a].verb}…</a>`,
  )}`;
}

function listHtml(
  configs: readonly string[],
  accountingConfig: string | undefined,
  periods: readonly PeriodView[],
  canManage: boolean,
  fields: JournalFields,
): Html {
  const picker = html`<form method="get" action="/admin/periods" class="filters">
  <label>Accounting configuration <select name="accountingConfig">${configs.map(
    (c) => html`<option value="${c}"${c === accountingConfig ? html` selected` : ''}>${c}</option>`,
  )}</select></label>
  <button type="submit">Show</button>
</form>`;
  if (accountingConfig === undefined)
    return html`${picker}${emptyState(configs.length === 0 ? 'No configuration is stored yet.' : 'Choose an accounting configuration.')}`;
  return html`${picker}
<p>The twelve periods up to the current one of each node, newest first. A period is open, in its grace time or closed by the calendar and the node's grace time, unless it was closed, locked or reopened by hand.</p>
${table(
  'periods',
  [
    { label: 'Period', kind: 'words' },
    { label: 'Node', kind: 'words' },
    { label: 'Fiscal period', kind: 'words' },
    { label: 'State', kind: 'words' },
    { label: 'Snapshots', kind: 'num' },
    'Actions',
  ],
  newestFirst(periods).map((p) => [
    html`<strong class="nowrap">${periodName(p.firstDay, p.lastDay)}</strong>${p.current ? html` <span class="badge current">current</span>` : ''} <span class="why nowrap">${p.firstDay} to ${p.lastDay}</span>`,
    nodeWords(p.node, fields),
    p.fiscalYear === null
      ? ''
      : html`<span class="nowrap">Year ${p.fiscalYear}</span>${p.number === null ? '' : html`, <span class="nowrap">period ${p.number}</span>`}`,
    periodStateHtml(p),
    p.snapshots === 0
      ? '0'
      : html`<a href="/admin/periods/snapshots?${targetQuery({ accountingConfig, node: p.node, firstDay: p.firstDay })}">${formatCount(p.snapshots)}</a>`,
    actionLinks(accountingConfig, p, canManage),
  ]),
)}`;
}

function confirmHtml(
  context: PageContext,
  action: PeriodAction,
  target: Target,
  period: PeriodView,
  waitsForApproval: boolean,
  fields: JournalFields,
  entered?: { reason: string; refusal: string },
): Html {
  const back = `/admin/periods?${new URLSearchParams({ accountingConfig: target.accountingConfig }).toString()}`;
  const refused = entered !== undefined;
  return html`<section class="card">
<h2>${ACTIONS[action].verb} ${periodOfNode(period, fields)} in ${target.accountingConfig}?</h2>
<p>${period.firstDay} to ${period.lastDay}. Now: ${periodStateHtml(period)}</p>
<p>${ACTIONS[action].consequence}</p>
${waitsForApproval ? html`<p id="approval-note">Reopenings wait for four-eyes approval: this makes a request that another user approves before the period opens.</p>` : ''}
<form method="post" action="/admin/periods/${action}">
  ${csrfField(context)}
  <input type="hidden" name="accountingConfig" value="${target.accountingConfig}">
  <input type="hidden" name="node" value="${JSON.stringify(target.node)}">
  <input type="hidden" name="firstDay" value="${target.firstDay}">
  ${
    action === 'reopen'
      ? html`<p><label>Reason (kept with the period and in the audit log)<br><textarea name="reason" rows="3" cols="60"${lengthAttributes(PeriodReason, { trimmed: true })} required${refused ? html` aria-invalid="true" aria-describedby="reason-refusal"` : ''}>${entered?.reason ?? ''}</textarea></label></p>${
          entered === undefined
            ? ''
            : html`<div id="reason-refusal">${notice('error', html`<p><strong>${entered.refusal}</strong> The period was not reopened.</p>`)}</div>`
        }`
      : ''
  }
  <p class="actions"><button type="submit">${waitsForApproval ? 'Ask for approval' : `${ACTIONS[action].verb} the period`}</button>
  <a href="${back}">Cancel</a></p>
</form>
</section>`;
}

function snapshotFacts(s: StoredSnapshot, fields: JournalFields): Html {
  return html`<dl class="facts">
  <dt>Taken</dt><dd>${when(s.takenAt)} by ${idHtml(s.takenBy)}, when the period was ${s.action === 'lock' ? 'locked' : 'closed'}</dd>
  <dt>Period</dt><dd>${periodName(s.firstDay, s.lastDay)} (${s.firstDay} to ${s.lastDay})</dd>
  <dt>Node</dt><dd>${nodeWords(s.node, fields)}</dd>
  <dt>Accounting configuration</dt><dd>${s.accountingConfig}</dd>
  <dt>Balances</dt><dd>${formatCount(s.lines)}</dd>
  <dt>SHA-256</dt><dd class="id">${s.hash}</dd>
</dl>`;
}

/** Who may open the period and snapshot pages. */
const read = { adminPermission: 'journals:read' as const };
/** Who may close, lock and reopen periods. */
const manage = { adminPermission: 'periods:manage' as const };

/** The confirmation of a change, with the reason refused when it was. */
async function confirmPage(
  services: Pick<Services, 'periods' | 'approvals' | 'snapshots'>,
  context: PageContext,
  action: PeriodAction,
  target: Target,
  entered?: { reason: string; refusal: string },
): Promise<Html> {
  const [listed, fields] = await Promise.all([
    services.periods.list({ ...target, from: target.firstDay, to: target.firstDay }),
    currentJournalFields(services),
  ]);
  const period = listed.periods[0];
  if (period === undefined)
    throw new AdminPageError(404, 'No such period', 'The period is not listed.', 'Open the periods list.');
  const waits = action === 'reopen' && services.approvals.isRequired('period.reopen');
  return page(
    context,
    `${ACTIONS[action].verb} a period`,
    confirmHtml(context, action, target, period, waits, fields, entered),
  );
}

/**
 * Periods in the administration interface: the periods of an accounting configuration per node
 * with their state and why, the confirmation of a close, a lock or a reopening (with its reason),
 * and the trial-balance snapshots of a period with their balances.
 */
export function periodPages(
  app: FastifyInstance,
  services: Pick<Services, 'periods' | 'approvals' | 'snapshots'>,
): void {
  registerPeriodListPage(app, services);
  registerPeriodChangePages(app, services);
  registerSnapshotPages(app, services);
}

/** `/admin/periods`: the periods of one accounting configuration, with what became of the last change. */
function registerPeriodListPage(
  app: FastifyInstance,
  services: Pick<Services, 'periods' | 'snapshots'>,
): void {
  app.get('/admin/periods', { config: read }, async (request, reply) => {
    const context = contextOf(request);
    const [configs, fields] = await Promise.all([
      services.periods.accountingConfigNames(),
      currentJournalFields(services),
    ]);
    const accountingConfig = queryText(request, 'accountingConfig') ?? configs[0];
    const listing =
      accountingConfig === undefined ? undefined : await services.periods.list({ accountingConfig });
    const canManage = context.principal.permissions.has('periods:manage');
    const done = queryText(request, 'done');
    const body = html`${done === undefined ? '' : notice('info', done)}${listHtml(configs, accountingConfig, listing?.periods ?? [], canManage, fields)}`;
    return sendPage(reply, page(context, 'Periods', body));
  });
}

/**
 * `/admin/periods/:action`: the confirmation of a close, a lock or a reopening, and the change
 * itself (a reopening's request for approval when reopenings wait for one).
 */
function registerPeriodChangePages(
  app: FastifyInstance,
  services: Pick<Services, 'periods' | 'approvals' | 'snapshots'>,
): void {
  app.get<{ Params: { action: string } }>(
    '/admin/periods/:action',
    { config: manage },
    async (request, reply) => {
      const context = contextOf(request);
      const action = actionOf(request.params.action);
      const target = targetOf((name) => queryText(request, name));
      return sendPage(reply, await confirmPage(services, context, action, target));
    },
  );

  app.post<{ Params: { action: string } }>(
    '/admin/periods/:action',
    { config: manage },
    async (request, reply) => {
      const context = contextOf(request);
      const action = actionOf(request.params.action);
      const form = formOf(request);
      const target = targetOf((name) => {
        const value = form.get(name)?.trim();
        return value === undefined || value === '' ? undefined : value;
      });
      const reason = form.get('reason')?.trim();
      // The reason is held to the API's rule (`PeriodReason`), its length in characters as Ajv
      // counts them; a refused one is shown on the form again, as it was typed.
      if (action === 'reopen' && !keepsRule(PeriodReason, reason ?? '')) {
        const typed = reason ?? '';
        const refusal =
          typed === ''
            ? 'A reason is needed: say why the period is reopened.'
            : `The reason is too long: at most ${formatCount(PERIOD_REASON_LENGTH_MAX)} characters, and it has ${formatCount([...typed].length)}.`;
        return sendPage(
          reply,
          await confirmPage(services, context, action, target, { reason: typed, refusal }),
          400,
        );
      }
      if (action === 'reopen' && reason !== undefined && services.approvals.isRequired('period.reopen')) {
        // Four eyes: the reopening waits for another user (docs/domain/approvals.md).
        const { request: made } = await services.approvals.request(
          'period.reopen',
          { ...target, reason },
          adminCallerOf(context),
          undefined,
        );
        return reply.redirect(approvalPagePath(made.requestId), 303);
      }
      const { answer: change } = await services.periods.act(action, target, reason, {
        actor: actorOf(request),
      });
      const fields = await currentJournalFields(services);
      const done = `${periodName(change.period.firstDay, change.period.lastDay)} of ${nodeText(change.period.node, fields)} is ${change.period.state} now${change.snapshot === null ? '' : `; snapshot ${change.snapshot.hash.slice(0, 12)}… kept`}.`;
      return reply.redirect(
        `/admin/periods?${new URLSearchParams({ accountingConfig: target.accountingConfig, done }).toString()}`,
        303,
      );
    },
  );
}

/** `/admin/periods/snapshots` and `…/:id`: a period's trial-balance snapshots, and one with its balances. */
function registerSnapshotPages(
  app: FastifyInstance,
  services: Pick<Services, 'periods' | 'snapshots'>,
): void {
  app.get('/admin/periods/snapshots', { config: read }, async (request, reply) => {
    const context = contextOf(request);
    const target = targetOf((name) => queryText(request, name));
    const [snapshots, fields] = await Promise.all([
      services.periods.snapshots(target),
      currentJournalFields(services),
    ]);
    const body =
      snapshots.length === 0
        ? emptyState('No snapshot: the period was never closed or locked by hand.')
        : table(
            'period-snapshots',
            ['Taken', 'By', 'When the period was', { label: 'Balances', kind: 'num' }, 'SHA-256'],
            snapshots.map((s) => [
              html`<a href="/admin/periods/snapshots/${encodeURIComponent(s.snapshotId)}">${when(s.takenAt)}</a>`,
              idHtml(s.takenBy),
              s.action === 'lock' ? 'locked' : 'closed',
              formatCount(s.lines),
              html`<span class="id">${s.hash}</span>`,
            ]),
          );
    const title = html`Snapshots of ${periodOfNode({ ...target, lastDay: target.firstDay }, fields)} in ${target.accountingConfig}`;
    return sendPage(
      reply,
      page(
        context,
        `Snapshots of ${periodName(target.firstDay, target.firstDay)}`,
        html`<p>${title}</p>${body}`,
      ),
    );
  });

  app.get<{ Params: { id: string } }>(
    '/admin/periods/snapshots/:id',
    { config: read },
    async (request, reply) => {
      const context = contextOf(request);
      const [snapshot, fields] = await Promise.all([
        services.periods.snapshot(request.params.id),
        currentJournalFields(services),
      ]);
      const body = html`${snapshotFacts(snapshot, fields)}
${table(
  'snapshot-balances',
  ['Account', 'Currency', { label: 'Balance', kind: 'num' }],
  snapshot.balances.map((b) => [b.account, b.currency, amountHtml(b.balance, b.currency)]),
)}`;
      return sendPage(reply, page(context, 'Trial-balance snapshot', body));
    },
  );
}
