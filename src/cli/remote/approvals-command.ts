import { parseArgs } from 'node:util';
import { type Static, Type } from '@sinclair/typebox';
import { ApprovalRequest } from '../../http/api/approval-answers.js';
import { APPROVAL_STATUSES } from '../../modules/approvals/store.js';
import { type Io, usageError } from '../output.js';
import { APPROVALS_USAGE } from '../usage.js';
import { answerOf, matches } from './answers.js';
import { ApiClient, type ApiResponse, CONNECTION_OPTIONS, connectionOf } from './client.js';
import { nodeText, textTable } from './format.js';
import { pagedItems } from './paging.js';

const APPROVALS_PATH = '/api/v1/approval-requests';

/** Requests listed when neither --limit nor --all is given. */
const REQUESTS_LISTED_DEFAULT = 50;

type Request = Static<typeof ApprovalRequest>;

/**
 * For an answer of an action that may wait for approval: when it is a 202, says so on standard
 * output (the request id and how to follow it) and answers true; otherwise false, and the
 * caller reads the answer as before.
 */
export function reportPendingApproval(io: Io, label: string, response: ApiResponse): boolean {
  if (response.status !== 202) return false;
  const request = answerOf(label, ApprovalRequest, response.body);
  io.out(`waits for approval by another user: request ${request.requestId}`);
  io.out(`follow it with: ledgerflow approvals show ${request.requestId}`);
  return true;
}

/** Paths of a configuration upload's changes shown in a line of `approvals list`. */
const CHANGE_PATHS_LISTED = 3;
/** Journals of a reversal's selection named in a line of `approvals list`. */
const SELECTION_JOURNALS_LISTED = 3;

/** The summary of a configuration upload: its changes from the stored configuration. */
const UploadSummary = Type.Object({
  added: Type.Integer(),
  removed: Type.Integer(),
  changed: Type.Integer(),
  truncated: Type.Boolean(),
  changes: Type.Array(Type.Object({ path: Type.String(), kind: Type.String() })),
});

/** The summary of a period reopening: the period and the maker's reason. */
const ReopenSummary = Type.Object({
  accountingConfig: Type.String(),
  node: Type.Record(Type.String(), Type.String()),
  firstDay: Type.String(),
  lastDay: Type.String(),
  reason: Type.String(),
});

/**
 * The summary of a reversal, when the service gives it: the selection and reason as the maker
 * sent them (the same fields as `POST /api/v1/reversals`).
 */
const ReversalSummary = Type.Object({
  selection: Type.Union([
    Type.Object({ journalIds: Type.Array(Type.String()) }),
    Type.Object({ ingestionId: Type.String() }),
    Type.Object({ originJournalId: Type.String() }),
    Type.Object({ accountingConfig: Type.String(), from: Type.String(), to: Type.String() }),
  ]),
  reason: Type.String(),
  postingDate: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

/** What a request says when the service's answer does not carry what would change. */
const CHANGE_NOT_GIVEN = 'not given by the service: ask the maker before deciding';

const CHANGE_MARKS: Record<string, string> = { added: '+', removed: '-', changed: '~' };

/** One change of an upload, marked as `config diff` marks it: `+ PATH`, `- PATH`, `~ PATH`. */
function changePath(change: { path: string; kind: string }): string {
  return `${CHANGE_MARKS[change.kind] ?? change.kind} ${change.path}`;
}

/** A reversal's selection in the words of `journals reverse`, naming at most `journalsMax` journals. */
function selectionText(selection: Static<typeof ReversalSummary>['selection'], journalsMax: number): string {
  if ('journalIds' in selection) {
    const named = selection.journalIds.slice(0, journalsMax).map((id) => `--journal ${id}`);
    const more = selection.journalIds.length - named.length;
    return [...named, ...(more > 0 ? [`(and ${more} more journals)`] : [])].join(' ');
  }
  if ('ingestionId' in selection) return `--ingestion ${selection.ingestionId}`;
  if ('originJournalId' in selection) return `--origin-journal ${selection.originJournalId}`;
  return `--accounting-config ${selection.accountingConfig} --from ${selection.from} --to ${selection.to}`;
}

/** A period being reopened: accounting configuration, node and days. */
function periodText(summary: Static<typeof ReopenSummary>): string {
  return `${summary.accountingConfig} ${nodeText(summary.node)} ${summary.firstDay} to ${summary.lastDay}`;
}

/**
 * What a request would change, in one line: which configuration an upload brings and its
 * changes counted, the deletion of the configuration, the selection and reason of a reversal,
 * the period of a reopening and why. Pure.
 */
export function changeHeadline(request: Request): string {
  const { dryRun, summary } = request;
  switch (request.kind) {
    case 'configuration.upload': {
      const keeping = dryRun.keepProcessingData === true ? ', keeping the processing data' : '';
      const counts = matches(UploadSummary, summary)
        ? `: ${summary.added} added, ${summary.removed} removed, ${summary.changed} changed${summary.truncated ? ' (at least)' : ''}`
        : '';
      return `upload of configuration ${String(dryRun.version)}${keeping}${counts}`;
    }
    case 'configuration.delete':
      return 'deletion of the configuration and of the processing data';
    case 'reversal':
      return matches(ReversalSummary, summary)
        ? `reversal of ${selectionText(summary.selection, SELECTION_JOURNALS_LISTED)}; reason: ${summary.reason}`
        : `reversal; its selection and reason are ${CHANGE_NOT_GIVEN}`;
    case 'period.reopen':
      return matches(ReopenSummary, summary)
        ? `reopening of ${periodText(summary)}; reason: ${summary.reason}`
        : `reopening of a period; the period and reason are ${CHANGE_NOT_GIVEN}`;
  }
}

/**
 * What a request would change, in a cell of `approvals list`: an upload's first changed paths
 * (and how many more), a reversal's selection and reason, a reopening's period and reason. Pure.
 */
export function changeCell(request: Request): string {
  const { summary } = request;
  if (request.kind !== 'configuration.upload') return changeHeadline(request);
  if (!matches(UploadSummary, summary)) return changeHeadline(request);
  const total = summary.added + summary.removed + summary.changed;
  if (total === 0) return `configuration ${String(request.dryRun.version)}: no change`;
  const listed = summary.changes.slice(0, CHANGE_PATHS_LISTED).map(changePath);
  const more = total - listed.length;
  return `${listed.join(', ')}${more > 0 ? ` (+${more}${summary.truncated ? ' or more' : ''})` : ''}`;
}

/**
 * The lines under `change` in `approvals show`: every change of an upload the request lists,
 * and how many it leaves out; the journals of a reversal's selection the headline left out, and
 * its posting date. Pure.
 */
export function changeDetailLines(request: Request): string[] {
  const { summary } = request;
  if (request.kind === 'reversal' && matches(ReversalSummary, summary)) {
    const { selection, postingDate } = summary;
    const lines =
      'journalIds' in selection && selection.journalIds.length > SELECTION_JOURNALS_LISTED
        ? [`selection ${selectionText(selection, Number.POSITIVE_INFINITY)}`]
        : [];
    if (postingDate !== undefined && postingDate !== null) lines.push(`posting date ${postingDate}`);
    return lines;
  }
  if (request.kind !== 'configuration.upload' || !matches(UploadSummary, summary)) return [];
  const lines = summary.changes.map(changePath);
  const unlisted = summary.added + summary.removed + summary.changed - summary.changes.length;
  if (unlisted > 0) lines.push(`(and ${unlisted} more changes, not listed by the service)`);
  if (summary.truncated) lines.push('(and more: the comparison stopped at its limit of changes)');
  return lines;
}

function numbersOf(value: unknown): string {
  if (value === null || typeof value !== 'object') return '';
  return Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => typeof v === 'number')
    .map(([k, v]) => `${k} ${String(v)}`)
    .join(', ');
}

/** A request's dry run in one line: what it deletes or reverses, or the period's state now. */
function dryRunLine(request: Request): string {
  const { dryRun } = request;
  if (request.kind === 'period.reopen') return `${String(dryRun.state)} (${String(dryRun.basis)}) now`;
  return 'wouldDelete' in dryRun
    ? `deletes ${numbersOf(dryRun.wouldDelete)}`
    : `reverses ${numbersOf(dryRun)}`;
}

/** One request, field per line: who made it and what it would change first. */
function printRequest(io: Io, request: Request): void {
  io.out(`request   ${request.requestId}`);
  io.out(`kind      ${request.kind}`);
  io.out(`status    ${request.status}`);
  io.out(`made by   ${request.makerEmail} (${request.makerClientId}) at ${request.createdAt}`);
  io.out(`change    ${changeHeadline(request)}`);
  for (const line of changeDetailLines(request)) io.out(`            ${line}`);
  io.out(`dry run   ${dryRunLine(request)}`);
  io.out(`document  sha256 ${request.documentSha256}, against revision ${request.revision}`);
  if (request.decidedBy !== null) io.out(`decided   by ${request.decidedBy} at ${request.decidedAt ?? ''}`);
  if (request.reason !== null) io.out(`reason    ${request.reason}`);
  if (request.outcome !== null) io.out(`outcome   ${JSON.stringify(request.outcome)}`);
  if (request.problem !== null) io.out(`problem   ${request.problem.code}: ${request.problem.detail}`);
}

/** What `approve`, `reject` and `cancel` say they did, before the request itself. */
const DECIDED: Record<string, string> = { approve: 'approved', reject: 'rejected', cancel: 'canceled' };

function parse(args: string[]) {
  return parseArgs({
    args,
    options: {
      ...CONNECTION_OPTIONS,
      json: { type: 'boolean' },
      status: { type: 'string' },
      limit: { type: 'string' },
      all: { type: 'boolean' },
      reason: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
}

type Values = ReturnType<typeof parse>['values'];

async function list(client: ApiClient, values: Values, io: Io): Promise<void> {
  const status = values.status ?? 'pending-approval';
  if (status !== 'all' && !(APPROVAL_STATUSES as readonly string[]).includes(status))
    throw usageError(`--status must be all or one of ${APPROVAL_STATUSES.join(', ')}, got ${status}`);
  if (values.all === true && values.limit !== undefined) throw usageError('give --limit or --all, not both');
  if (values.limit !== undefined && !/^[1-9]\d{0,8}$/.test(values.limit))
    throw usageError(`--limit must be a whole number from 1, got ${values.limit}`);
  const limit =
    values.all === true
      ? Number.POSITIVE_INFINITY
      : values.limit === undefined
        ? REQUESTS_LISTED_DEFAULT
        : Number(values.limit);
  const rows: Request[] = [];
  const query = status === 'all' ? {} : { status };
  for await (const request of pagedItems(client, APPROVALS_PATH, ApprovalRequest, query)) {
    if (rows.length >= limit) break;
    rows.push(request);
  }
  if (values.json === true) {
    for (const row of rows) io.out(JSON.stringify(row));
    return;
  }
  if (rows.length === 0) {
    io.out(status === 'all' ? 'no approval requests' : `no approval requests ${status}`);
    return;
  }
  for (const line of textTable(
    ['REQUEST', 'MADE', 'KIND', 'BY', 'STATUS', 'CHANGE', 'DRY RUN'],
    rows.map((r) => [r.requestId, r.createdAt, r.kind, r.makerEmail, r.status, changeCell(r), dryRunLine(r)]),
  ))
    io.out(line);
}

/**
 * `approvals list|show|approve|reject|cancel`: the four-eyes approval requests of the service
 * (docs/reference.md, Approvals). `list` shows those pending approval unless `--status` says
 * otherwise; `approve` runs a request (as the caller, on behalf of its maker), `reject` needs
 * `--reason`, `cancel` withdraws one's own. Refusals (the maker approving, a request no longer
 * pending, data that moved) exit 1 with the service's problem.
 */
export async function approvalsCommand(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parse(args);
  const [action, id, ...rest] = positionals;
  if (rest.length > 0 || action === undefined) throw usageError(APPROVALS_USAGE);
  const client = new ApiClient(connectionOf(values), { onRetry: (message) => io.err(`retry: ${message}`) });
  if (action === 'list') {
    if (id !== undefined) throw usageError(APPROVALS_USAGE);
    return list(client, values, io);
  }
  if (id === undefined || !['show', 'approve', 'reject', 'cancel'].includes(action))
    throw usageError(APPROVALS_USAGE);
  if (action === 'reject' && (values.reason === undefined || values.reason.trim() === ''))
    throw usageError('reject needs --reason TEXT: the maker reads why');
  const path = `${APPROVALS_PATH}/${encodeURIComponent(id)}`;
  const request =
    action === 'show'
      ? await client.json({ method: 'GET', path }, ApprovalRequest)
      : await client.json(
          {
            method: 'POST',
            path: `${path}/${action}`,
            ...(action === 'reject' ? { json: { reason: values.reason } } : {}),
          },
          ApprovalRequest,
        );
  if (values.json === true) {
    io.out(JSON.stringify(request, null, 2));
    return;
  }
  const decided = DECIDED[action];
  if (decided !== undefined)
    io.out(`${decided} the request of ${request.makerEmail}: ${changeHeadline(request)}`);
  printRequest(io, request);
}
