import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../composition/services.js';
import { EXTRACT_STATES } from '../../../modules/extracts/inputs.js';
import type { ExtractState } from '../../../modules/extracts/store.js';
import { type Html, html } from '../html.js';
import { emptyState, notice, page, table, when } from '../layout.js';
import { AdminPageError, contextOf, queryText, sendPage } from '../request.js';

/** Rows of an extract shown in its preview. */
const PREVIEW_ROWS = 20;
/** Configurations and executions listed on one page. */
const LISTED_MAX = 200;
/** Characters of a value shown in a preview cell. */
const CELL_CHARS_MAX = 120;

function idOf(text: string | undefined, what: string): number {
  if (text === undefined || !/^[1-9][0-9]{0,14}$/.test(text))
    throw new AdminPageError(
      404,
      `No such ${what}`,
      `There is no ${what} ${text ?? ''}.`,
      'Pick one from the list.',
    );
  return Number(text);
}

function cell(value: unknown): Html {
  if (value === null || value === undefined) return html`<span class="muted">—</span>`;
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return html`${text.length > CELL_CHARS_MAX ? `${text.slice(0, CELL_CHARS_MAX)}…` : text}`;
}

/**
 * Extracts in the administration interface: the extraction configurations by state, one
 * configuration with a preview of its rows and its asynchronous executions, and an execution's
 * file to download. Reading only: configurations are managed through the API or the command line.
 */
export function extractPages(
  app: FastifyInstance,
  services: Pick<Services, 'extracts' | 'extractExecutions'>,
): void {
  registerExtractListPage(app, services);
  registerExtractPage(app, services);
  registerExecutionFile(app, services);
}

/** `/admin/extracts`: the extraction configurations of one state. */
function registerExtractListPage(app: FastifyInstance, services: Pick<Services, 'extracts'>): void {
  app.get('/admin/extracts', { config: { adminPermission: 'journals:read' } }, async (request, reply) => {
    const context = contextOf(request);
    const asked = queryText(request, 'state') ?? 'Active';
    const state: ExtractState = EXTRACT_STATES.find((s) => s === asked) ?? 'Active';
    const { rows, next } = await services.extracts.list(state, 0, LISTED_MAX);
    const tabs = html`<p>${EXTRACT_STATES.map((s, i) =>
      s === state
        ? html`${i > 0 ? ' · ' : ''}<strong>${s}</strong>`
        : html`${i > 0 ? ' · ' : ''}<a href="/admin/extracts?state=${s}">${s}</a>`,
    )}</p>`;
    const body =
      rows.length === 0
        ? html`${tabs}${emptyState(`No ${state} extraction configuration. They are made with POST /api/v1/extraction-configurations.`)}`
        : html`${tabs}${table(
            'extracts',
            [
              { label: 'Id', kind: 'num' },
              'Name',
              'Source',
              'Format',
              'Incremental',
              'Pending read',
              'Last acknowledged',
            ],
            rows.map((c) => [
              c.id,
              html`<a href="/admin/extracts/${c.id}">${c.name}</a>`,
              c.source,
              c.format,
              c.incremental ? 'yes' : 'no',
              c.pending ? when(c.pendingSince) : '—',
              when(c.ackedAt),
            ]),
          )}${next === undefined ? '' : notice('info', `Only the first ${LISTED_MAX} are listed.`)}`;
    return sendPage(reply, page(context, 'Extracts', body));
  });
}

/** `/admin/extracts/:id`: one configuration, a preview of what a read answers now, and its executions. */
function registerExtractPage(
  app: FastifyInstance,
  services: Pick<Services, 'extracts' | 'extractExecutions'>,
): void {
  app.get('/admin/extracts/:id', { config: { adminPermission: 'journals:read' } }, async (request, reply) => {
    const context = contextOf(request);
    const id = idOf((request.params as { id: string }).id, 'extraction configuration');
    const config = await services.extracts.get(id);
    const preview = await services.extracts.preview(id, PREVIEW_ROWS);
    const columns = config.fields ?? Object.keys(preview[0] ?? {});
    const executions = await services.extractExecutions.list(id, Number.MAX_SAFE_INTEGER, LISTED_MAX);
    const filters = Object.keys(config.filters).length === 0 ? 'none' : JSON.stringify(config.filters);
    const body = html`<section class="card">
<dl>
  <dt>Source</dt><dd>${config.source}</dd>
  <dt>State</dt><dd>${config.state}</dd>
  <dt>Filters</dt><dd><code>${filters}</code></dd>
  <dt>Fields</dt><dd>${config.fields === null ? 'every field' : config.fields.join(', ')}</dd>
  <dt>Format</dt><dd>${config.format}</dd>
  <dt>Incremental</dt><dd>${config.incremental ? 'yes' : 'no'}</dd>
  <dt>Pending read since</dt><dd>${config.pendingPosition === null ? '—' : when(config.pendingSince)}</dd>
  <dt>Last acknowledged</dt><dd>${when(config.ackedAt)}</dd>
</dl>
${config.description === null ? '' : html`<p>${config.description}</p>`}
</section>
<h2>Preview</h2>
<p class="muted">The first ${PREVIEW_ROWS} rows a read would answer now${config.incremental ? ' (after the last acknowledged read)' : ''}; looking changes nothing.</p>
${
  preview.length === 0
    ? emptyState('No row to extract.')
    : table(
        'extract-preview',
        columns,
        preview.map((row) => columns.map((column) => cell(row[column]))),
      )
}
<h2>Executions</h2>
${
  executions.rows.length === 0
    ? emptyState('No asynchronous extraction of this configuration.')
    : table(
        'extract-executions',
        [
          { label: 'Id', kind: 'num' },
          'Status',
          'Requested',
          'Completed',
          { label: 'Rows', kind: 'num' },
          { label: 'Runs', kind: 'num' },
          'File',
        ],
        executions.rows.map((e) => [
          e.id,
          e.latestStatus,
          when(e.requestedAt),
          when(e.completedAt),
          e.recordCount,
          e.totalRuns,
          e.latestStatus === 'completed'
            ? html`<a href="/admin/extracts/executions/${e.id}/file" download>Download (${e.format})</a>`
            : (e.failure ?? '—'),
        ]),
      )
}
<p><a href="/admin/extracts">All extracts</a></p>`;
    return sendPage(reply, page(context, `Extract ${config.name}`, body));
  });
}

/** `/admin/extracts/executions/:id/file`: a completed execution's file. */
function registerExecutionFile(app: FastifyInstance, services: Pick<Services, 'extractExecutions'>): void {
  app.get(
    '/admin/extracts/executions/:id/file',
    { config: { adminPermission: 'journals:read' } },
    async (request, reply) => {
      const id = idOf((request.params as { id: string }).id, 'extraction execution');
      const { execution, parts } = await services.extractExecutions.file(id);
      return reply
        .header('cache-control', 'no-store')
        .header('content-disposition', `attachment; filename="extraction-${id}.${execution.format}"`)
        .type(execution.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/jsonl; charset=utf-8')
        .send(Readable.from(parts));
    },
  );
}
