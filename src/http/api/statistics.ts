import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { instantOf } from '../../lib/instant.js';
import type { StatisticsService, TimeRange } from '../../modules/statistics/service.js';
import type { ApiApp } from './route-app.js';
import { InstantQuery, Problem } from './schemas.js';

const Range = Type.Object({
  from: Type.Optional(
    InstantQuery('Start (inclusive): a date YYYY-MM-DD (midnight UTC) or an RFC 3339 date-time.'),
  ),
  to: Type.Optional(InstantQuery('End (exclusive): a date or a date-time.')),
});

/** The instants of a validated `Range` query; an empty value is no bound. */
function rangeOf(query: { from?: string; to?: string }): TimeRange {
  return {
    ...(query.from === undefined || query.from === '' ? {} : { from: instantOf(query.from) }),
    ...(query.to === undefined || query.to === '' ? {} : { to: instantOf(query.to) }),
  };
}

const I = Type.Integer();

/** Where the operational dashboard's counters are. */
const DASHBOARD_PATH = '/api/v1/statistics/operational-dashboard';

/** Who may read the statistics: every route of this plugin. */
const STATISTICS_READ = { permission: 'statistics:read' as const };

/** The operational dashboard: ingestion and journal counters, and processing per entity. */
export const statisticsRoutes: FastifyPluginAsyncTypebox<{ statistics: StatisticsService }> = async (
  app,
  { statistics },
) => {
  registerIngestionMetricsRoute(app, statistics);
  registerJournalMetricsRoutes(app, statistics);
  registerProcessingMetricsRoute(app, statistics);
};

/** `GET …/operational-dashboard/ingestion-metrics`: the counters of sessions opened in a range. */
function registerIngestionMetricsRoute(app: ApiApp, statistics: StatisticsService): void {
  app.get(
    `${DASHBOARD_PATH}/ingestion-metrics`,
    {
      config: STATISTICS_READ,
      schema: {
        operationId: 'getIngestionMetrics',
        tags: ['statistics'],
        summary: 'Ingestion counters for sessions opened in [from, to)',
        querystring: Range,
        response: {
          200: Type.Object({
            ingestions: I,
            pendingIngestions: I,
            closedIngestions: I,
            expiredIngestions: I,
            chunks: I,
            apiCalls: I,
            totalRows: I,
            successRows: I,
            failedRows: I,
          }),
          400: Problem,
        },
      },
    },
    async (request) => statistics.ingestionMetrics(rangeOf(request.query)),
  );
}

/** `GET …/operational-dashboard/journal-metrics` and `…-by-day`: journal counters, in all and per day. */
function registerJournalMetricsRoutes(app: ApiApp, statistics: StatisticsService): void {
  app.get(
    `${DASHBOARD_PATH}/journal-metrics`,
    {
      config: STATISTICS_READ,
      schema: {
        operationId: 'getJournalMetrics',
        tags: ['statistics'],
        summary: 'Journal counters: journals by core date in [from, to), errors by time recorded',
        querystring: Range,
        response: {
          200: Type.Object({
            postedJournals: I,
            unpostedJournals: I,
            totalJournalLines: I,
            errors: I,
            awaitingApproval: I,
            deniedApproval: I,
          }),
          400: Problem,
        },
      },
    },
    async (request) => statistics.journalMetrics(rangeOf(request.query)),
  );

  app.get(
    `${DASHBOARD_PATH}/journal-metrics-by-day`,
    {
      config: STATISTICS_READ,
      schema: {
        operationId: 'getJournalMetricsByDay',
        tags: ['statistics'],
        summary: 'Journal counters per day',
        querystring: Range,
        response: {
          200: Type.Object({
            data: Type.Array(
              Type.Object({
                date: Type.String({ format: 'date' }),
                postedJournals: I,
                unpostedJournals: I,
                totalJournalLines: I,
                errors: I,
              }),
            ),
          }),
          400: Problem,
        },
      },
    },
    async (request) => ({ data: await statistics.journalMetricsByDay(rangeOf(request.query)) }),
  );
}

/** `GET /api/v1/statistics/processing`: per entity, records waiting, processed and failed. */
function registerProcessingMetricsRoute(app: ApiApp, statistics: StatisticsService): void {
  app.get(
    '/api/v1/statistics/processing',
    {
      config: STATISTICS_READ,
      schema: {
        operationId: 'getProcessingMetrics',
        tags: ['statistics'],
        summary: 'Per entity: records waiting for processing, processed, failed',
        response: {
          200: Type.Object({
            data: Type.Array(
              Type.Object({
                namespace: Type.String(),
                entity: Type.String(),
                pending: I,
                processed: I,
                failed: I,
              }),
            ),
          }),
        },
      },
    },
    async () => ({ data: await statistics.processingMetrics() }),
  );
}
