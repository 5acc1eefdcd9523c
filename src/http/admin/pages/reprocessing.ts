import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../../composition/services.js';
import {
  ReprocessScheduleInput,
  ReprocessSelectionBody,
  reprocessSelectionOf,
} from '../../../modules/accounting/inputs.js';
import type { ReprocessDryRun } from '../../../modules/accounting/reprocessing.js';
import type {
  ReprocessExample,
  ReprocessRun,
  ReprocessSelection,
} from '../../../modules/accounting/store.js';
import { formInput } from '../form-input.js';
import { type Html, html } from '../html.js';
import { csrfField, emptyState, notice, type PageContext, page, pagination, table, when } from '../layout.js';
import { formatCount } from '../money.js';
import { AdminPageError, actorOf, contextOf, formOf, pagingOf, sendPage } from '../request.js';

/** The members of a selection the pages carry, in query strings and hidden form fields alike. */
const SELECTION_MEMBERS = ['ingestionId', 'entity', 'code'] as const;

/**
 * The selection of the processing errors page's filters, read as the API reads a selection
 * (`ReprocessSelectionBody`): every open error when none is given.
 */
function selectionOf(fields: URLSearchParams): ReprocessSelection {
  const { all: _all, ...named } = reprocessSelectionOf(
    formInput(ReprocessSelectionBody, fields, 'The selection is not valid'),
  );
  return Object.keys(named).length === 0 ? { all: true } : named;
}

/** The text members of a request's query string, as a form's fields. */
function queryFields(request: FastifyRequest): URLSearchParams {
  const query = request.query as Record<string, unknown>;
  return new URLSearchParams(
    Object.entries(query).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

function selectionText(selection: ReprocessSelection): string {
  if (selection.all === true) return 'every open processing error';
  return SELECTION_MEMBERS.flatMap((name) =>
    selection[name] === undefined ? [] : [`${name} ${selection[name]}`],
  ).join(', ');
}

function codesHtml(byCode: Readonly<Record<string, number>>): Html | string {
  const entries = Object.entries(byCode).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (entries.length === 0) return 'none';
  return html`${entries.map(([code, n]) => html`<span class="id">${code}</span> ${formatCount(n)} `)}`;
}

/** Examples of a dry run (what would happen: "posts") or of a run (what happened: "posted"). */
function examplesTable(examples: readonly ReprocessExample[], ran: boolean): Html | string {
  if (examples.length === 0) return '';
  return table(
    'reprocess-examples',
    ['Record', 'Ingestion', 'Code before', 'Outcome', { label: 'Message', kind: 'long' }],
    examples.map((e) => [
      String(e.recordId),
      html`<a href="/admin/ingestions/${encodeURIComponent(e.ingestionId)}">${e.ingestionId}</a>`,
      html`<span class="id">${e.previousCode}</span>`,
      e.code === undefined
        ? html`<span class="badge posted">${ran ? 'posted' : 'posts'}</span>`
        : html`<span class="id">${e.code}</span>`,
      e.message ?? '',
    ]),
  );
}

function dryRunHtml(context: PageContext, selection: ReprocessSelection, dry: ReprocessDryRun): Html {
  const stillFailing = dry.selected - dry.wouldPost;
  return html`<section class="card">
<h2>What a run would do now</h2>
<p>Selection: ${selectionText(selection)}, under the configuration stored now.</p>
<dl class="facts" id="reprocess-dry-run">
  <dt>Records run again</dt><dd>${formatCount(dry.selected)}</dd>
  <dt>Would post</dt><dd>${formatCount(dry.wouldPost)}</dd>
  <dt>Would still fail</dt><dd>${formatCount(stillFailing)} (${codesHtml(dry.wouldStillFail)})</dd>
  <dt>Skipped (at the maximum of attempts)</dt><dd>${formatCount(dry.skipped)}</dd>
</dl>
${examplesTable(dry.examples, false)}
${
  dry.selected === 0
    ? notice('info', 'Nothing to run: no open error of this selection is below the maximum of attempts.')
    : html`<form method="post" action="/admin/processing-errors/reprocess">
  ${csrfField(context)}
  ${SELECTION_MEMBERS.map((name) => (selection[name] === undefined ? '' : html`<input type="hidden" name="${name}" value="${selection[name]}">`))}
  <button type="submit">Reprocess ${formatCount(dry.selected)} records</button>
  <a href="/admin/processing-errors">Cancel</a>
</form>`
}
</section>`;
}

function runFacts(run: ReprocessRun): Html {
  return html`<dl class="facts" id="reprocess-run">
  <dt>State</dt><dd>${run.state}${run.finishedAt === null ? '' : html` ${when(run.finishedAt)}`}</dd>
  <dt>Started</dt><dd>${when(run.startedAt)} by ${run.actor} (${run.trigger})</dd>
  <dt>Selection</dt><dd>${selectionText(run.selection)}</dd>
  <dt>Queued</dt><dd>${formatCount(run.queued)}</dd>
  <dt>Skipped (at ${run.maxAttempts} attempts)</dt><dd>${formatCount(run.skipped)}</dd>
  <dt>Posted</dt><dd>${formatCount(run.posted)}</dd>
  <dt>Still failing</dt><dd>${formatCount(run.stillFailing)} (${codesHtml(run.stillFailingByCode)})</dd>
</dl>`;
}

/** The schedule's settings from a submitted form, read as the API reads them, or a 400 page naming the fields at fault. */
function scheduleSettingsOf(request: FastifyRequest) {
  return formInput(ReprocessScheduleInput, formOf(request), 'The schedule is not valid');
}

/** Who may start runs and change the schedule. */
const write = { adminPermission: 'configuration:write' as const };
/** Who may read the runs and the schedule. */
const read = { adminPermission: 'journals:read' as const };

/**
 * Reprocessing in the administration interface: the dry run of a selection of the processing
 * errors page ("Reprocess…") shown before the run is confirmed, the runs and their outcomes, and
 * the schedule.
 */
export function reprocessingPages(app: FastifyInstance, services: Pick<Services, 'reprocessing'>): void {
  registerReprocessPages(app, services);
  registerRunPage(app, services);
  registerReprocessingPage(app, services);
  registerScheduleAction(app, services);
}

/** `/admin/processing-errors/reprocess`: the dry run of a selection, then the confirmed run. */
function registerReprocessPages(app: FastifyInstance, services: Pick<Services, 'reprocessing'>): void {
  app.get('/admin/processing-errors/reprocess', { config: write }, async (request, reply) => {
    const context = contextOf(request);
    const selection = selectionOf(queryFields(request));
    const dry = await services.reprocessing.dryRun(selection);
    return sendPage(reply, page(context, 'Reprocess failed records', dryRunHtml(context, selection, dry)));
  });

  app.post('/admin/processing-errors/reprocess', { config: write }, async (request, reply) => {
    const selection = selectionOf(formOf(request));
    const { answer: run } = await services.reprocessing.reprocess(selection, { actor: actorOf(request) });
    return reply.redirect(`/admin/reprocessing/runs/${run.id}`, 303);
  });
}

/** `/admin/reprocessing/runs/:id`: one run, its outcomes and examples. */
function registerRunPage(app: FastifyInstance, services: Pick<Services, 'reprocessing'>): void {
  app.get<{ Params: { id: string } }>(
    '/admin/reprocessing/runs/:id',
    { config: read },
    async (request, reply) => {
      const context = contextOf(request);
      const id = /^[1-9]\d{0,15}$/.test(request.params.id) ? Number(request.params.id) : 0;
      if (id === 0)
        throw new AdminPageError(
          404,
          'No such run',
          'There is no reprocessing run with this number.',
          'See every run on the reprocessing page.',
        );
      const run = await services.reprocessing.run(id);
      const body = html`${runFacts(run)}
${run.state === 'running' ? notice('info', 'The run goes on: its records wait for processing. Reload the page to follow it.') : ''}
${examplesTable(run.examples, run.state !== 'running')}
<p><a href="/admin/reprocessing">Every run</a> · <a href="/admin/processing-errors">Processing errors</a></p>`;
      return sendPage(reply, page(context, `Reprocessing run ${run.id}`, body));
    },
  );
}

/** `/admin/reprocessing`: the schedule, with its form for those who may change it, and the runs. */
function registerReprocessingPage(app: FastifyInstance, services: Pick<Services, 'reprocessing'>): void {
  app.get('/admin/reprocessing', { config: read }, async (request, reply) => {
    const context = contextOf(request);
    const { page: pageNo, limit } = pagingOf(request);
    const [{ rows, total }, schedule] = await Promise.all([
      services.reprocessing.runs(pageNo, limit),
      services.reprocessing.schedule(),
    ]);
    const canWrite = context.principal.permissions.has('configuration:write');
    const scheduleForm = html`<form method="post" action="/admin/reprocessing/schedule" class="filters">
  ${csrfField(context)}
  <label>Mode <select name="mode">${(['daily', 'interval', 'disabled'] as const).map((m) => html`<option${m === schedule.mode ? html` selected` : ''}>${m}</option>`)}</select></label>
  <label>Daily at (UTC) <input name="dailyAt" pattern="([01][0-9]|2[0-3]):[0-5][0-9]" value="${schedule.dailyAt}" required></label>
  <label>Every (minutes, at least 180) <input type="number" name="intervalMinutes" min="180" value="${String(schedule.intervalMinutes)}" required></label>
  <label>Most attempts per record <input type="number" name="maxAttempts" min="1" max="100" value="${String(schedule.maxAttempts)}" required></label>
  <button type="submit">Save the schedule</button>
</form>`;
    const body = html`<section class="card">
<h2>Schedule</h2>
<p id="reprocess-schedule">${schedule.mode === 'daily' ? `Daily at ${schedule.dailyAt} UTC` : schedule.mode === 'interval' ? `Every ${schedule.intervalMinutes} minutes` : 'Disabled'}; at most ${schedule.maxAttempts} attempts per record, manual runs included. Next run: ${schedule.nextDueAt === null ? 'none' : when(schedule.nextDueAt)}.</p>
${canWrite ? scheduleForm : ''}
</section>
<h2>Runs</h2>
${
  rows.length === 0
    ? emptyState('No reprocessing run yet. Start one from the processing errors page (Reprocess…).')
    : html`${table(
        'reprocess-runs',
        [
          'Run',
          'Started',
          'By',
          'State',
          { label: 'Queued', kind: 'num' },
          { label: 'Posted', kind: 'num' },
          { label: 'Still failing', kind: 'num' },
          { label: 'Skipped', kind: 'num' },
        ],
        rows.map((run) => [
          html`<a href="/admin/reprocessing/runs/${String(run.id)}">${String(run.id)}</a>`,
          when(run.startedAt),
          `${run.actor} (${run.trigger})`,
          run.state,
          formatCount(run.queued),
          formatCount(run.posted),
          formatCount(run.stillFailing),
          formatCount(run.skipped),
        ]),
      )}${pagination('/admin/reprocessing', {}, pageNo, limit, total)}`
}`;
    return sendPage(reply, page(context, 'Reprocessing', body));
  });
}

/** `POST /admin/reprocessing/schedule`: the schedule changed. */
function registerScheduleAction(app: FastifyInstance, services: Pick<Services, 'reprocessing'>): void {
  app.post('/admin/reprocessing/schedule', { config: write }, async (request, reply) => {
    await services.reprocessing.setSchedule(scheduleSettingsOf(request), { actor: actorOf(request) });
    return reply.redirect('/admin/reprocessing', 303);
  });
}
