import { readFile, rename, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { type Static, Type } from '@sinclair/typebox';
import {
  ProcessingDataCounts,
  Sections,
  UploadResult,
  type WhatIfAnswer,
  WipeDryRunResult,
} from '../../http/api/answer-schemas.js';
import {
  CliError,
  checkOutputFile,
  countLines,
  EXIT_REFUSED,
  type Io,
  isStandardOutput,
  usageError,
} from '../output.js';
import { CONFIG_USAGE } from '../usage.js';
import { answerOf } from './answers.js';
import { reportPendingApproval } from './approvals-command.js';
import { ApiClient, CONNECTION_OPTIONS, connectionOf } from './client.js';
import { diffCommand, revisionsCommand } from './config-revisions-command.js';

const BULK_PATH = '/api/v1/configuration/bulk';
const AUDIT_LOG_PATH = '/api/v1/audit-log';

interface ConfigArgs {
  client: ApiClient;
  file: string | undefined;
  dryRun: boolean;
  yes: boolean;
  keepData: boolean;
}

function parseConfigArgs(args: string[], files: number, io: Io): ConfigArgs {
  const { values, positionals } = parseArgs({
    args,
    options: {
      ...CONNECTION_OPTIONS,
      'dry-run': { type: 'boolean' },
      yes: { type: 'boolean' },
      'keep-data': { type: 'boolean' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length !== files) throw usageError(CONFIG_USAGE);
  return {
    client: new ApiClient(connectionOf(values), { onRetry: (message) => io.err(`retry: ${message}`) }),
    file: positionals[0],
    dryRun: values['dry-run'] === true,
    yes: values.yes === true,
    keepData: values['keep-data'] === true,
  };
}

async function readDocument(file: string): Promise<unknown> {
  let raw: string;
  try {
    raw = await readFile(file, 'utf8');
  } catch (error) {
    throw usageError(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw usageError(`${file} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}

type Counts = Static<typeof ProcessingDataCounts>;

/** An upload answer as far as the commands read it: the sections it counts are printed as given. */
const UploadRead = Type.Composite([
  Type.Pick(UploadResult, ['version']),
  Type.Partial(Type.Pick(UploadResult, ['deleted', 'wouldDelete', 'keepProcessingData', 'whatIf'])),
  Type.Object({ sections: Type.Partial(Sections) }),
]);

/** The newest audit log entry as far as a wipe reads it. */
const AuditLogRead = Type.Object({
  data: Type.Array(
    Type.Object({
      action: Type.String(),
      deleted: Type.Optional(Type.Union([ProcessingDataCounts, Type.Null()])),
    }),
  ),
});

/** The `wouldDelete` (or `deleted`) counts of an upload answer; a CliError when they are missing. */
function countsOf(answer: Static<typeof UploadRead>, name: 'wouldDelete' | 'deleted'): Counts {
  const counts = answer[name];
  if (counts === undefined) {
    throw new CliError(
      `the service answered without the ${name} counts; it may be older than this command`,
      EXIT_REFUSED,
    );
  }
  return counts;
}

function total(counts: Readonly<Record<string, number>>): number {
  return Object.values(counts).reduce((sum, count) => sum + count, 0);
}

/**
 * Shows what a change would delete and decides whether it goes ahead: without anything to
 * delete, or with --yes, it does; on a terminal the user is asked; elsewhere it is refused
 * (exit 2) with the advice to pass --yes. A "no" on the terminal is exit 1, nothing changed.
 * `action` completes "pass --yes to …", such as `push configuration v2`.
 */
async function confirmDeletion(io: Io, wouldDelete: Counts, action: string, yes: boolean): Promise<void> {
  if (total(wouldDelete) === 0) {
    io.out('would delete no processing data');
    return;
  }
  io.out('would delete this processing data:');
  for (const line of countLines(wouldDelete)) io.out(line);
  if (yes) return;
  if (!io.inputInteractive) {
    throw usageError(
      `standard input is not a terminal, so nothing can be asked: pass --yes to ${action} and delete this processing data (nothing was changed)`,
    );
  }
  const question = `${action.charAt(0).toUpperCase()}${action.slice(1)} and delete this processing data?`;
  if (!(await io.confirm(question))) throw new CliError('nothing was changed', EXIT_REFUSED);
}

async function pull(args: string[], io: Io): Promise<void> {
  const { client, file } = parseConfigArgs(args, 1, io);
  if (file === undefined) throw usageError(CONFIG_USAGE);
  if (!isStandardOutput(file)) await checkOutputFile(file);
  const document = await client.json({ method: 'GET', path: BULK_PATH });
  const pretty = `${JSON.stringify(document, null, 2)}\n`;
  if (isStandardOutput(file)) {
    io.out(pretty.trimEnd());
    return;
  }
  // Written beside the target and renamed, so a failed write never leaves half a document.
  const partial = `${file}.partial`;
  await writeFile(partial, pretty, 'utf8');
  await rename(partial, file);
  io.out(`pulled configuration ${String(document.version)} to ${file}`);
}

/**
 * What the what-if of a keep-data dry run has to say, each heading only with lines under it:
 * nothing when no record failed processing; how many would post; and the records that would
 * still fail, by code, under a "still failing:" heading only when there are some.
 */
function whatIfLines(whatIf: Static<typeof WhatIfAnswer>): string[] {
  const stillFailing = Object.fromEntries(
    Object.entries(whatIf.wouldStillFail).filter(([, count]) => count > 0),
  );
  const posting = whatIf.wouldPost;
  if (Object.keys(stillFailing).length === 0) {
    return posting === 0 ? [] : [`of the records that failed processing, all ${posting} would post`];
  }
  return [
    `of the records that failed processing, ${posting === 0 ? 'none' : posting} would post; still failing:`,
    ...countLines(stillFailing),
  ];
}

/**
 * `config push FILE --keep-data`: the upload that keeps the processing data. Its dry run
 * checks the document and the stored data (a 409 lists each blocking change as PATH: REASON);
 * nothing is deleted, so nothing is asked.
 */
async function pushKeeping(client: ApiClient, file: string, document: unknown, dryRun: boolean, io: Io) {
  const query = { keep: 'processing-data' };
  const checked = await client.json(
    { method: 'PUT', path: BULK_PATH, query: { ...query, dryRun: 'true' }, json: document },
    UploadRead,
  );
  io.out(`configuration ${checked.version} in ${file} is valid and keeps the processing data`);
  if (checked.whatIf !== undefined) for (const line of whatIfLines(checked.whatIf)) io.out(line);
  if (dryRun) {
    printSections(io, checked.sections);
    io.out('dry run: nothing was changed');
    return;
  }
  const answer = await client.request({ method: 'PUT', path: BULK_PATH, query, json: document });
  if (reportPendingApproval(io, `PUT ${BULK_PATH}`, answer)) return;
  const result = answerOf(`PUT ${BULK_PATH}`, UploadRead, answer.body);
  io.out(`pushed configuration ${result.version} from ${file}; the processing data was kept`);
  printSections(io, result.sections);
}

async function push(args: string[], io: Io): Promise<void> {
  const { client, file, dryRun, yes, keepData } = parseConfigArgs(args, 1, io);
  if (file === undefined) throw usageError(CONFIG_USAGE);
  const document = await readDocument(file);
  if (keepData) return pushKeeping(client, file, document, dryRun, io);
  // The dry run validates the document as the upload will, and counts what it would delete.
  const checked = await client.json(
    { method: 'PUT', path: BULK_PATH, query: { dryRun: 'true' }, json: document },
    UploadRead,
  );
  const wouldDelete = countsOf(checked, 'wouldDelete');
  io.out(`configuration ${checked.version} in ${file} is valid`);
  if (checked.keepProcessingData?.possible === true && total(wouldDelete) > 0)
    io.out('it could keep the processing data: push it with --keep-data to delete nothing');
  if (dryRun) {
    printSections(io, checked.sections);
    await confirmDeletion(io, wouldDelete, 'push it', true);
    io.out('dry run: nothing was changed');
    return;
  }
  await confirmDeletion(io, wouldDelete, `push configuration ${checked.version}`, yes);
  const answer = await client.request({ method: 'PUT', path: BULK_PATH, json: document });
  if (reportPendingApproval(io, `PUT ${BULK_PATH}`, answer)) return;
  const result = answerOf(`PUT ${BULK_PATH}`, UploadRead, answer.body);
  io.out(`pushed configuration ${result.version} from ${file}`);
  printSections(io, result.sections);
  printDeleted(io, countsOf(result, 'deleted'));
}

async function wipe(args: string[], io: Io): Promise<void> {
  const { client, dryRun, yes } = parseConfigArgs(args, 0, io);
  const { wouldDelete } = await client.json(
    { method: 'DELETE', path: BULK_PATH, query: { dryRun: 'true' } },
    WipeDryRunResult,
  );
  io.out('would delete the configuration (users and credentials stay)');
  if (dryRun) {
    await confirmDeletion(io, wouldDelete, 'wipe', true);
    io.out('dry run: nothing was changed');
    return;
  }
  await confirmDeletion(io, wouldDelete, 'wipe the configuration', yes);
  const answer = await client.request({ method: 'DELETE', path: BULK_PATH });
  if (reportPendingApproval(io, `DELETE ${BULK_PATH}`, answer)) return;
  io.out('configuration wiped (users and credentials kept)');
  // The wipe's own counts are in its audit log entry, the newest one.
  let deleted: Counts | null | undefined;
  try {
    const log = await client.json(
      { method: 'GET', path: AUDIT_LOG_PATH, query: { page: 0, limit: 1 } },
      AuditLogRead,
    );
    const newest = log.data[0];
    if (newest?.action === 'configuration.delete') deleted = newest.deleted;
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
  }
  if (deleted === undefined || deleted === null)
    io.out('(what was deleted cannot be read from the audit log)');
  else printDeleted(io, deleted);
}

function printSections(io: Io, sections: Readonly<Record<string, number | undefined>>): void {
  for (const line of countLines(sections)) io.out(line);
}

function printDeleted(io: Io, deleted: Counts): void {
  if (total(deleted) === 0) {
    io.out('deleted no processing data');
    return;
  }
  io.out('deleted:');
  for (const line of countLines(deleted)) io.out(line);
}

/**
 * `config pull FILE` (writes the downloaded Configuration Data as pretty JSON; `-` is standard
 * output), `config push FILE [--dry-run] [--yes]` (validates, shows what the upload would
 * delete, confirms, uploads, prints what was deleted; a 400 prints every problem as
 * `path: message`, one per line, exit 1), `config push FILE --keep-data [--dry-run]` (the
 * upload that deletes nothing; a 409 prints each blocking change as `path: reason`),
 * `config wipe [--dry-run] [--yes]` (the same for deleting the configuration), `config
 * revisions` and `config diff N M`. Exit 2 on bad usage, an unreadable file or a missing --yes
 * off a terminal, 1 on a refused request or a "no" on the terminal.
 */
export async function configCommand(args: string[], io: Io): Promise<void> {
  const [action, ...rest] = args;
  if (action === 'pull') return pull(rest, io);
  if (action === 'push') return push(rest, io);
  if (action === 'wipe') return wipe(rest, io);
  if (action === 'revisions') return revisionsCommand(rest, io);
  if (action === 'diff') return diffCommand(rest, io);
  throw usageError(CONFIG_USAGE);
}
