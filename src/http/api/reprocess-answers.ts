/**
 * The answers of reprocessing (docs/reference.md, Reprocessing), as TypeBox schemas free of
 * Fastify like `answer-schemas.ts`, which the CLI checks its answers against too.
 */
import { Type } from '@sinclair/typebox';

const Instant = Type.String({ format: 'date-time' });
const CountsByCode = Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
  description: 'Records by processing error code.',
});

/** Which open processing errors a run takes. */
export const ReprocessSelectionAnswer = Type.Object({
  ingestionId: Type.Optional(Type.String()),
  entity: Type.Optional(Type.String()),
  code: Type.Optional(Type.String()),
  from: Type.Optional(Type.String()),
  to: Type.Optional(Type.String()),
  all: Type.Optional(Type.Boolean()),
});

/** A record of a run or dry run: its code before, and after when it failed again. */
export const ReprocessExample = Type.Object({
  recordId: Type.Integer({ minimum: 1 }),
  ingestionId: Type.String(),
  previousCode: Type.String(),
  code: Type.Optional(Type.String({ description: 'The code it failed with again; absent when it posted.' })),
  message: Type.Optional(Type.String()),
});

/** A reprocessing run. */
export const ReprocessRun = Type.Object({
  id: Type.Integer({ minimum: 1 }),
  trigger: Type.Union([Type.Literal('manual'), Type.Literal('scheduled')]),
  actor: Type.String({ description: 'Who started it; `schedule` for a scheduled run.' }),
  selection: ReprocessSelectionAnswer,
  revision: Type.Integer({ minimum: 0, description: 'The configuration revision stored when it started.' }),
  maxAttempts: Type.Integer({ minimum: 1 }),
  state: Type.Union([Type.Literal('running'), Type.Literal('finished')]),
  startedAt: Instant,
  finishedAt: Type.Union([Instant, Type.Null()]),
  queued: Type.Integer({ minimum: 0, description: 'Records put back into the processing queue.' }),
  skipped: Type.Integer({
    minimum: 0,
    description: 'Selected records left out: they had reached the maximum number of attempts.',
  }),
  posted: Type.Integer({ minimum: 0 }),
  stillFailing: Type.Integer({ minimum: 0 }),
  stillFailingByCode: CountsByCode,
  examples: Type.Array(ReprocessExample, { maxItems: 5 }),
});

/** What a run would do (a dry run). */
export const ReprocessDryRun = Type.Object({
  dryRun: Type.Literal(true),
  selected: Type.Integer({ minimum: 0, description: 'Records a run would put back into the queue.' }),
  skipped: Type.Integer({ minimum: 0, description: 'Records at the maximum number of attempts.' }),
  wouldPost: Type.Integer({ minimum: 0 }),
  wouldStillFail: CountsByCode,
  examples: Type.Array(ReprocessExample, { maxItems: 5 }),
});

/** The schedule of reprocessing runs. */
export const ReprocessScheduleAnswer = Type.Object({
  mode: Type.Union([Type.Literal('daily'), Type.Literal('interval'), Type.Literal('disabled')]),
  dailyAt: Type.String({ description: 'HH:MM, UTC.' }),
  intervalMinutes: Type.Integer({ minimum: 1 }),
  maxAttempts: Type.Integer({ minimum: 1 }),
  nextDueAt: Type.Union([Instant, Type.Null()], {
    description: 'When the next scheduled run is due; null when disabled or not yet worked out.',
  }),
  updatedAt: Type.Union([Instant, Type.Null()]),
  updatedBy: Type.Union([Type.String(), Type.Null()]),
});

/** Reprocessing in figures. */
export const ReprocessingStatistics = Type.Object({
  errors: Type.Object({
    open: Type.Integer({ minimum: 0 }),
    queued: Type.Integer({ minimum: 0, description: 'Waiting in a reprocessing run.' }),
    closed: Type.Integer({ minimum: 0, description: 'Posted when reprocessed.' }),
  }),
  runs: Type.Integer({ minimum: 0, description: 'Runs started so far.' }),
  lastRun: Type.Union([Type.Omit(ReprocessRun, ['examples']), Type.Null()]),
  schedule: ReprocessScheduleAnswer,
});
