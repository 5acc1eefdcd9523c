import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { PreparedConfiguration } from '../../composition/prepared-configuration.js';
import {
  ReprocessScheduleInput,
  ReprocessSelectionBody,
  reprocessSelectionOf,
} from '../../modules/accounting/inputs.js';
import {
  REPROCESS_INTERVAL_MINUTES_MIN,
  REPROCESS_RECORDS_PER_RUN_MAX,
  type ReprocessingService,
} from '../../modules/accounting/reprocessing.js';
import { ChangeHeaders, ChangeQuery, changeOptionsOf, sendChange } from './changes.js';
import {
  ReprocessDryRun,
  ReprocessingStatistics,
  ReprocessRun,
  ReprocessScheduleAnswer,
} from './reprocess-answers.js';
import type { ApiApp } from './route-app.js';
import { Page, PageQuery, Problem, pageOf } from './schemas.js';

/** A run's number in a path, as text: runs are numbered in the order they started. */
const RunPath = Type.Object({
  id: Type.String({ pattern: '^[1-9][0-9]{0,14}$', maxLength: 15, description: 'The run number.' }),
});

/** Reprocessing of failed records: runs, dry runs and the schedule. */
export const reprocessingRoutes: FastifyPluginAsyncTypebox<{
  reprocessing: ReprocessingService<PreparedConfiguration>;
}> = async (app, { reprocessing }) => {
  registerReprocessRoute(app, reprocessing);
  registerRunRoutes(app, reprocessing);
  registerScheduleRoutes(app, reprocessing);
  registerReprocessingStatisticsRoute(app, reprocessing);
};

/** `POST /api/v1/processing-errors/reprocess`: a run of the selected errors, or its dry run. */
function registerReprocessRoute(app: ApiApp, reprocessing: ReprocessingService<PreparedConfiguration>): void {
  app.post(
    '/api/v1/processing-errors/reprocess',
    {
      config: { permission: 'configuration:write' },
      schema: {
        operationId: 'reprocessProcessingErrors',
        tags: ['journals'],
        summary: 'Run failed records again under the current configuration',
        description: `Puts the records of the selected open processing errors back into the processing queue, under the configuration stored now; each is processed exactly once by this run, on whichever instance claims it. A record that posts closes its error (its journals carry its \`recordId\`); one that fails again keeps its error with the new code and one attempt more. At most ${REPROCESS_RECORDS_PER_RUN_MAX} records per run; records at the schedule's \`maxAttempts\` are skipped and counted. The answer is the run: 202 with \`Location\` while its records wait (follow it until \`state\` is \`finished\`), 200 when it queued nothing. A selection that names nothing must say \`all: true\` (else 400). With \`dryRun=true\` the engine runs over the same records and nothing is written: the answer (200) says how many would post and how many would fail again, by code, with examples.`,
        querystring: Type.Object(
          {
            dryRun: Type.Boolean({
              default: false,
              description: 'When true, nothing changes: the answer says what a run would do now.',
            }),
          },
          { additionalProperties: false },
        ),
        headers: ChangeHeaders,
        body: ReprocessSelectionBody,
        response: {
          200: Type.Union([ReprocessRun, ReprocessDryRun]),
          202: ReprocessRun,
          400: Problem,
          422: Problem,
        },
      },
    },
    async (request, reply) => {
      const selection = reprocessSelectionOf(request.body);
      // The engine over the same records: the answer says what would post and what would fail.
      if (request.query.dryRun) return { dryRun: true as const, ...(await reprocessing.dryRun(selection)) };
      const { actor, idempotencyKey } = changeOptionsOf(request);
      const outcome = await reprocessing.reprocess(selection, { actor, idempotencyKey });
      const run = outcome.answer;
      if (run.state === 'finished') return sendChange(reply, outcome, 200);
      reply.header('location', `/api/v1/processing-errors/reprocess-runs/${run.id}`);
      return sendChange(reply, outcome, 202);
    },
  );
}

/** `GET /api/v1/processing-errors/reprocess-runs` and `…/:id`: the runs, newest first, and one. */
function registerRunRoutes(app: ApiApp, reprocessing: ReprocessingService<PreparedConfiguration>): void {
  app.get(
    '/api/v1/processing-errors/reprocess-runs',
    {
      config: { permission: 'journals:read' },
      schema: {
        operationId: 'listReprocessRuns',
        tags: ['journals'],
        summary: 'Reprocessing runs, newest first',
        querystring: Type.Object(PageQuery),
        response: { 200: Page(Type.Omit(ReprocessRun, ['examples'])), 400: Problem },
      },
    },
    async (request) => {
      const { page, limit } = request.query;
      const { rows, total } = await reprocessing.runs(page, limit);
      return pageOf(rows, page, limit, total);
    },
  );

  app.get(
    '/api/v1/processing-errors/reprocess-runs/:id',
    {
      config: { permission: 'journals:read' },
      schema: {
        operationId: 'getReprocessRun',
        tags: ['journals'],
        summary: 'A reprocessing run: its progress, outcomes by code and examples',
        params: RunPath,
        response: { 200: ReprocessRun, 400: Problem, 404: Problem },
      },
    },
    async (request) => reprocessing.run(Number(request.params.id)),
  );
}

/** `GET` and `PUT /api/v1/processing-errors/reprocess-schedule`: the schedule of automatic runs. */
function registerScheduleRoutes(app: ApiApp, reprocessing: ReprocessingService<PreparedConfiguration>): void {
  app.get(
    '/api/v1/processing-errors/reprocess-schedule',
    {
      config: { permission: 'journals:read' },
      schema: {
        operationId: 'getReprocessSchedule',
        tags: ['journals'],
        summary: 'The schedule of automatic reprocessing runs',
        response: { 200: ReprocessScheduleAnswer },
      },
    },
    async () => reprocessing.schedule(),
  );

  app.put(
    '/api/v1/processing-errors/reprocess-schedule',
    {
      config: { permission: 'configuration:write' },
      schema: {
        operationId: 'setReprocessSchedule',
        tags: ['journals'],
        summary: 'Change the schedule of automatic reprocessing runs',
        description: `Every member is required. \`daily\` runs every open error once a day at \`dailyAt\` (UTC); \`interval\` every \`intervalMinutes\` (at least ${REPROCESS_INTERVAL_MINUTES_MIN}); \`disabled\` none. One instance starts each run, however many share the store. The next run is due by the new settings from now. The change is written to the audit log. Takes \`dryRun=true\` and an \`Idempotency-Key\`.`,
        querystring: ChangeQuery,
        headers: ChangeHeaders,
        body: ReprocessScheduleInput,
        response: { 200: ReprocessScheduleAnswer, 400: Problem, 422: Problem },
      },
    },
    async (request, reply) =>
      sendChange(reply, await reprocessing.setSchedule(request.body, changeOptionsOf(request)), 200),
  );
}

/** `GET /api/v1/statistics/reprocessing`: errors by state, the last run and the schedule. */
function registerReprocessingStatisticsRoute(
  app: ApiApp,
  reprocessing: ReprocessingService<PreparedConfiguration>,
): void {
  app.get(
    '/api/v1/statistics/reprocessing',
    {
      config: { permission: 'statistics:read' },
      schema: {
        operationId: 'getReprocessingStatistics',
        tags: ['statistics'],
        summary: 'Processing errors by state, the last reprocessing run and the schedule',
        response: { 200: ReprocessingStatistics },
      },
    },
    async () => {
      const [errors, runs, schedule] = await Promise.all([
        reprocessing.errorStates(),
        reprocessing.runs(0, 1),
        reprocessing.schedule(),
      ]);
      return { errors, runs: runs.total, lastRun: runs.rows[0] ?? null, schedule };
    },
  );
}
