import { parseArgs } from 'node:util';
import type { Static } from '@sinclair/typebox';
import { ReprocessDryRun, ReprocessRun, ReprocessScheduleAnswer } from '../../http/api/reprocess-answers.js';
import { CliError, EXIT_REFUSED, type Io, usageError } from '../output.js';
import { ERRORS_USAGE } from '../usage.js';
import { ApiClient, CONNECTION_OPTIONS, connectionOf } from './client.js';
import { checkDateOption } from './report-commands.js';

const REPROCESS_PATH = '/api/v1/processing-errors/reprocess';
const SCHEDULE_PATH = '/api/v1/processing-errors/reprocess-schedule';
/** How often a reprocessing run is asked for its progress while the command waits for it. */
const RUN_POLL_INTERVAL_MS = 1_000;
/** How long the command waits for a run to finish before it leaves it running and says so. */
const RUN_WAIT_MS_MAX = 30 * 60_000;

function clientOf(values: Parameters<typeof connectionOf>[0], io: Io): ApiClient {
  return new ApiClient(connectionOf(values), { onRetry: (message) => io.err(`retry: ${message}`) });
}

function codesText(byCode: Readonly<Record<string, number>>): string {
  const entries = Object.entries(byCode).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.length === 0 ? 'none' : entries.map(([code, n]) => `${code} ${n}`).join(', ');
}

function printExamples(io: Io, examples: Static<typeof ReprocessRun>['examples']): void {
  for (const e of examples)
    io.out(
      `  record ${e.recordId} of ${e.ingestionId}: ${e.previousCode} -> ${e.code === undefined ? 'posted' : `${e.code}: ${e.message ?? ''}`}`,
    );
}

function printRun(io: Io, run: Static<typeof ReprocessRun>): void {
  io.out(
    `run ${run.id} ${run.state}: ${run.queued} queued, ${run.skipped} skipped at ${run.maxAttempts} attempts, ` +
      `${run.posted} posted, ${run.stillFailing} still failing (${codesText(run.stillFailingByCode)})`,
  );
  printExamples(io, run.examples);
}

/**
 * `errors reprocess [--dry-run] [--ingestion ID] [--entity E] [--code C] [--from D] [--to D]
 * [--all] [--no-wait]`: runs the selected open processing errors again (POST
 * /api/v1/processing-errors/reprocess) and waits for the run to finish, printing its outcome;
 * with `--dry-run` prints what a run would do. Exit 1 when records still fail or on a refused
 * request, 2 on bad usage.
 */
async function reprocess(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      ...CONNECTION_OPTIONS,
      'dry-run': { type: 'boolean' },
      ingestion: { type: 'string' },
      entity: { type: 'string' },
      code: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      all: { type: 'boolean' },
      'no-wait': { type: 'boolean' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length > 0) throw usageError(ERRORS_USAGE);
  checkDateOption('from', values.from);
  checkDateOption('to', values.to);
  const selection = {
    ingestionId: values.ingestion,
    entity: values.entity,
    code: values.code,
    from: values.from,
    to: values.to,
    ...(values.all === true ? { all: true } : {}),
  };
  if (Object.values(selection).every((v) => v === undefined))
    throw usageError('name what to reprocess (--ingestion, --entity, --code, --from, --to) or give --all');
  const client = clientOf(values, io);
  if (values['dry-run'] === true) {
    const dry = await client.json(
      { method: 'POST', path: REPROCESS_PATH, query: { dryRun: 'true' }, json: selection, idempotent: true },
      ReprocessDryRun,
    );
    io.out(
      `dry run: ${dry.selected} would run, ${dry.skipped} skipped at the maximum of attempts; ` +
        `${dry.wouldPost} would post, ${dry.selected - dry.wouldPost} would still fail (${codesText(dry.wouldStillFail)})`,
    );
    printExamples(io, dry.examples);
    io.out('dry run: nothing was changed');
    return;
  }
  let run = await client.json({ method: 'POST', path: REPROCESS_PATH, json: selection }, ReprocessRun);
  const deadline = Date.now() + RUN_WAIT_MS_MAX;
  while (run.state === 'running' && values['no-wait'] !== true && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, RUN_POLL_INTERVAL_MS));
    run = await client.json({ method: 'GET', path: `${REPROCESS_PATH}-runs/${run.id}` }, ReprocessRun);
  }
  printRun(io, run);
  if (run.state === 'running')
    io.err(`run ${run.id} goes on; ledgerflow errors run ${run.id} shows it later`);
  if (run.stillFailing > 0)
    throw new CliError(
      `${run.stillFailing} records still fail: see ledgerflow processing-errors`,
      EXIT_REFUSED,
    );
}

/** `errors run ID`: a reprocessing run's progress and outcome. */
async function showRun(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    options: CONNECTION_OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  const id = positionals[0];
  if (positionals.length !== 1 || id === undefined || !/^[1-9]\d*$/.test(id)) throw usageError(ERRORS_USAGE);
  printRun(
    io,
    await clientOf(values, io).json({ method: 'GET', path: `${REPROCESS_PATH}-runs/${id}` }, ReprocessRun),
  );
}

function printSchedule(io: Io, schedule: Static<typeof ReprocessScheduleAnswer>): void {
  const when =
    schedule.mode === 'daily'
      ? `daily at ${schedule.dailyAt} UTC`
      : schedule.mode === 'interval'
        ? `every ${schedule.intervalMinutes} minutes`
        : 'disabled';
  io.out(`schedule: ${when}, at most ${schedule.maxAttempts} attempts per record`);
  io.out(`next run: ${schedule.nextDueAt ?? 'none'}`);
}

/**
 * `errors schedule [show]` and `errors schedule set [--daily HH:MM | --every MINUTES | --disabled]
 * [--max-attempts N]`: the schedule of automatic reprocessing runs; `set` keeps what it is not
 * given.
 */
async function schedule(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      ...CONNECTION_OPTIONS,
      daily: { type: 'string' },
      every: { type: 'string' },
      disabled: { type: 'boolean' },
      'max-attempts': { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  const action = positionals[0] ?? 'show';
  if (positionals.length > 1 || (action !== 'show' && action !== 'set')) throw usageError(ERRORS_USAGE);
  const client = clientOf(values, io);
  const current = await client.json({ method: 'GET', path: SCHEDULE_PATH }, ReprocessScheduleAnswer);
  if (action === 'show') {
    printSchedule(io, current);
    return;
  }
  const modes = [values.daily !== undefined, values.every !== undefined, values.disabled === true];
  if (modes.filter(Boolean).length > 1) throw usageError('give one of --daily, --every and --disabled');
  if (values.every !== undefined && !/^[1-9]\d*$/.test(values.every))
    throw usageError(`--every must be a whole number of minutes, got ${values.every}`);
  const maxAttempts = values['max-attempts'];
  if (maxAttempts !== undefined && !/^[1-9]\d*$/.test(maxAttempts))
    throw usageError(`--max-attempts must be a whole number from 1, got ${maxAttempts}`);
  const settings = {
    mode:
      values.daily !== undefined
        ? 'daily'
        : values.every !== undefined
          ? 'interval'
          : values.disabled === true
            ? 'disabled'
            : current.mode,
    dailyAt: values.daily ?? current.dailyAt,
    intervalMinutes: values.every === undefined ? current.intervalMinutes : Number(values.every),
    maxAttempts: maxAttempts === undefined ? current.maxAttempts : Number(maxAttempts),
  };
  printSchedule(
    io,
    await client.json({ method: 'PUT', path: SCHEDULE_PATH, json: settings }, ReprocessScheduleAnswer),
  );
}

/** `errors reprocess|run|schedule ...`: reprocessing of failed records (see ERRORS_USAGE). */
export async function errorsCommand(args: string[], io: Io): Promise<void> {
  const [action, ...rest] = args;
  if (action === 'reprocess') return reprocess(rest, io);
  if (action === 'run') return showRun(rest, io);
  if (action === 'schedule') return schedule(rest, io);
  throw usageError(ERRORS_USAGE);
}
