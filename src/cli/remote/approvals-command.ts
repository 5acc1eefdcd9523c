import { parseArgs } from 'node:util';
import type { Static } from '@sinclair/typebox';
import { ApprovalRequest } from '../../http/api/approval-answers.js';
import { APPROVAL_STATUSES } from '../../modules/approvals/store.js';
import { type Io, usageError } from '../output.js';
import { APPROVALS_USAGE } from '../usage.js';
import { answerOf } from './answers.js';
import { ApiClient, type ApiResponse, CONNECTION_OPTIONS, connectionOf } from './client.js';
import { textTable } from './format.js';
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

function numbersOf(value: unknown): string {
  if (value === null || typeof value !== 'object') return '';
  return Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => typeof v === 'number')
    .map(([k, v]) => `${k} ${String(v)}`)
    .join(', ');
}

/** A request's dry run in one line: what it deletes, reverses or reopens. */
function dryRunLine(request: Request): string {
  const { dryRun, summary } = request;
  if (request.kind === 'period.reopen')
    return `reopens ${String(summary.accountingConfig)} ${JSON.stringify(summary.node)} ${String(summary.firstDay)}, ${String(dryRun.state)} (${String(dryRun.basis)}) now; reason: ${String(summary.reason)}`;
  return 'wouldDelete' in dryRun
    ? `deletes ${numbersOf(dryRun.wouldDelete)}`
    : `reverses ${numbersOf(dryRun)}`;
}

/** One request, field per line. */
function printRequest(io: Io, request: Request): void {
  io.out(`request   ${request.requestId}`);
  io.out(`kind      ${request.kind}`);
  io.out(`status    ${request.status}`);
  io.out(`made by   ${request.makerEmail} (${request.makerClientId}) at ${request.createdAt}`);
  io.out(`document  sha256 ${request.documentSha256}, against revision ${request.revision}`);
  io.out(`dry run   ${dryRunLine(request)}`);
  const { summary } = request;
  if (Array.isArray(summary.changes))
    io.out(
      `changes   ${String(summary.added)} added, ${String(summary.removed)} removed, ${String(summary.changed)} changed`,
    );
  if (request.decidedBy !== null) io.out(`decided   by ${request.decidedBy} at ${request.decidedAt ?? ''}`);
  if (request.reason !== null) io.out(`reason    ${request.reason}`);
  if (request.outcome !== null) io.out(`outcome   ${JSON.stringify(request.outcome)}`);
  if (request.problem !== null) io.out(`problem   ${request.problem.code}: ${request.problem.detail}`);
}

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
    ['REQUEST', 'MADE', 'KIND', 'BY', 'STATUS', 'DRY RUN'],
    rows.map((r) => [r.requestId, r.createdAt, r.kind, r.makerEmail, r.status, dryRunLine(r)]),
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
  if (values.json === true) io.out(JSON.stringify(request, null, 2));
  else printRequest(io, request);
}
