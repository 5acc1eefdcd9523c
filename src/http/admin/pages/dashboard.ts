import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../composition/services.js';
import { instantOf } from '../../../lib/instant.js';
import type { IngestionMetrics, JournalMetrics } from '../../../modules/statistics/store.js';
import { dateField } from '../form-fields.js';
import { type Html, html, jsonScript } from '../html.js';
import { emptyState, page } from '../layout.js';
import { contextOf, queryText, sendPage } from '../request.js';

/** Days of ingested rows shown on the dashboard, ending today (UTC). */
const DASHBOARD_DAYS = 14;
const DAY_MS = 86_400_000;

function kpi(label: string, value: number) {
  return html`<div class="kpi"><span>${label}</span><strong>${value.toLocaleString('en-US')}</strong></div>`;
}

/** A date of the dashboard's range form; empty when the field was left blank. */
const RangeDate = Type.Optional(Type.Union([Type.Literal(''), Type.String({ format: 'date' })]));

/** The dashboard: the statistics as figures and charts (Chart.js, drawn by dashboard.js). */
export function dashboardPages(
  app: FastifyInstance,
  services: Pick<Services, 'statistics' | 'ingestion'>,
): void {
  const schema = { hide: true, querystring: Type.Object({ from: RangeDate, to: RangeDate }) };
  app.get(
    '/admin/dashboard',
    { schema, config: { adminPermission: 'statistics:read' } },
    async (request, reply) => {
      const context = contextOf(request);
      const from = queryText(request, 'from');
      const to = queryText(request, 'to');
      const figures = await dashboardFigures(services, from, to);
      return sendPage(
        reply,
        page(context, 'Dashboard', dashboardBody(from, to, figures), [
          '/admin/assets/lib/chart.umd.min.js',
          '/admin/assets/dashboard.js',
        ]),
      );
    },
  );
}

/** What the dashboard shows: the counters of the range, and the series its charts draw. */
interface DashboardFigures {
  ingestion: IngestionMetrics;
  journals: JournalMetrics;
  /** The charts' data, read by dashboard.js from the page. */
  data: unknown;
}

/**
 * The counters of the range (`from` to `to`, each a date or none) and the series of the charts:
 * rows ingested on each of the last {@link DASHBOARD_DAYS} days, journals by day, posted and
 * unposted journals, and records by entity.
 */
async function dashboardFigures(
  services: Pick<Services, 'statistics' | 'ingestion'>,
  from: string | undefined,
  to: string | undefined,
): Promise<DashboardFigures> {
  const range = {
    ...(from === undefined ? {} : { from: instantOf(from) }),
    ...(to === undefined ? {} : { to: instantOf(to) }),
  };
  // The service's clock (tests pin it), not the machine's.
  const today = Date.parse(`${services.ingestion.now().toISOString().slice(0, 10)}T00:00:00Z`);
  const days = Array.from({ length: DASHBOARD_DAYS }, (_, i) =>
    new Date(today - (DASHBOARD_DAYS - 1 - i) * DAY_MS).toISOString().slice(0, 10),
  );
  const [ingestion, journals, byDay, processing, rowsByDay] = await Promise.all([
    services.statistics.ingestionMetrics(range),
    services.statistics.journalMetrics(range),
    services.statistics.journalMetricsByDay(range),
    services.statistics.processingMetrics(),
    Promise.all(
      days.map((day) =>
        services.statistics.ingestionMetrics({
          from: instantOf(day),
          to: new Date(instantOf(day).getTime() + DAY_MS),
        }),
      ),
    ),
  ]);
  const data = {
    rowsByDay: {
      labels: days,
      success: rowsByDay.map((m) => m.successRows),
      failed: rowsByDay.map((m) => m.failedRows),
    },
    journalsByDay: {
      labels: byDay.map((d) => d.date),
      posted: byDay.map((d) => d.postedJournals),
      unposted: byDay.map((d) => d.unpostedJournals),
      errors: byDay.map((d) => d.errors),
    },
    posting: { posted: journals.postedJournals, unposted: journals.unpostedJournals },
    processing: {
      labels: processing.map((p) => `${p.namespace}/${p.entity}`),
      processed: processing.map((p) => p.processed),
      pending: processing.map((p) => p.pending),
      failed: processing.map((p) => p.failed),
    },
  };
  return { ingestion, journals, data };
}

/** The dashboard's range form, its figures, and the canvases its charts are drawn on. */
function dashboardBody(
  from: string | undefined,
  to: string | undefined,
  { ingestion, journals, data }: DashboardFigures,
): Html {
  const nothing = ingestion.ingestions === 0 && journals.postedJournals + journals.unpostedJournals === 0;
  return html`<form method="get" class="filters" action="/admin/dashboard">
  ${dateField('From', 'from', from)}
  ${dateField('To (exclusive)', 'to', to)}
  <button type="submit">Apply</button>
</form>
<div class="kpis">
  ${kpi('Ingestions', ingestion.ingestions)}${kpi('Open', ingestion.pendingIngestions)}${kpi('Rows ingested', ingestion.totalRows)}${kpi('Rows failed', ingestion.failedRows)}
  ${kpi('Journals posted', journals.postedJournals)}${kpi('Journals unposted', journals.unpostedJournals)}${kpi('Journal lines', journals.totalJournalLines)}${kpi('Processing errors', journals.errors)}
</div>
${nothing ? emptyState(html`No data yet. Upload a configuration under <a href="/admin/configuration">Configuration</a>, then send records through the API (see the API credentials page for access).`) : ''}
<div class="charts">
  <figure class="chart"><figcaption>Ingested rows by day (last ${DASHBOARD_DAYS} days)</figcaption><canvas id="chart-rows" role="img" aria-label="Ingested rows by day"></canvas></figure>
  <figure class="chart"><figcaption>Journals by day</figcaption><canvas id="chart-journals" role="img" aria-label="Journals by day, posted and unposted"></canvas></figure>
  <figure class="chart"><figcaption>Posted vs unposted</figcaption><canvas id="chart-posting" role="img" aria-label="Posted and unposted journals"></canvas></figure>
  <figure class="chart"><figcaption>Processing errors by day</figcaption><canvas id="chart-errors" role="img" aria-label="Processing errors by day"></canvas></figure>
  <figure class="chart"><figcaption>Records by entity</figcaption><canvas id="chart-processing" role="img" aria-label="Processed, pending and failed records by entity"></canvas></figure>
</div>
${jsonScript('dashboard-data', data)}`;
}
