import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { Static } from '@sinclair/typebox';
import {
  PeriodChangeAnswer,
  PeriodListingAnswer,
  PeriodSnapshotsAnswer,
  PeriodSnapshotWithBalances,
} from '../../http/api/period-answers.js';
import { type Io, usageError } from '../output.js';
import { PERIODS_USAGE } from '../usage.js';
import { answerOf } from './answers.js';
import { reportPendingApproval } from './approvals-command.js';
import { ApiClient, CONNECTION_OPTIONS, connectionOf } from './client.js';
import { checkDateOption } from './report-commands.js';

const PERIODS_PATH = '/api/v1/periods';

const OPTIONS = {
  ...CONNECTION_OPTIONS,
  'accounting-config': { type: 'string' },
  node: { type: 'string', multiple: true },
  period: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  reason: { type: 'string' },
  snapshot: { type: 'string' },
  json: { type: 'boolean' },
} as const;

type Values = ReturnType<
  typeof parseArgs<{ args: string[]; options: typeof OPTIONS; allowPositionals: true; strict: true }>
>['values'];

/** The node of `--node FIELD=VALUE` options (repeated per field), or undefined when none is given. */
function nodeOf(values: Values): Record<string, string> | undefined {
  if (values.node === undefined || values.node.length === 0) return undefined;
  const node: Record<string, string> = {};
  for (const pair of values.node) {
    const at = pair.indexOf('=');
    if (at <= 0) throw usageError(`--node takes FIELD=VALUE, got ${pair}\n${PERIODS_USAGE}`);
    node[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return node;
}

function required(values: Values, name: 'accounting-config' | 'period'): string {
  const value = values[name];
  if (value === undefined) throw usageError(`--${name} is required\n${PERIODS_USAGE}`);
  return value;
}

function requiredNode(values: Values): Record<string, string> {
  const node = nodeOf(values);
  if (node === undefined)
    throw usageError(`--node FIELD=VALUE is required (once per node field)\n${PERIODS_USAGE}`);
  return node;
}

function describePeriod(p: Static<typeof PeriodListingAnswer>['periods'][number]): string {
  const byHand = p.actedBy === null ? '' : ` by ${p.actedBy} at ${p.actedAt ?? ''}`;
  const reason = p.reason === null ? '' : ` (${p.reason})`;
  const current = p.current ? ' current' : '';
  return `${p.firstDay}..${p.lastDay}  ${JSON.stringify(p.node)}  ${p.state} (${p.basis}${byHand}${reason})${current}  snapshots ${p.snapshots}`;
}

function printSnapshot(io: Io, s: Static<typeof PeriodSnapshotsAnswer>['data'][number]): void {
  io.out(
    `snapshot ${s.snapshotId}: ${s.action} by ${s.takenBy} at ${s.takenAt}, ${s.lines} balances, sha256 ${s.hash}`,
  );
}

/**
 * `periods list|close|lock|reopen|snapshots`: the periods of an accounting configuration per node
 * with their state and why (GET /api/v1/periods), a change of one period's state (POST
 * /api/v1/periods/close|lock|reopen), and the trial-balance snapshots of a period or one with its
 * balances (GET /api/v1/periods/snapshots). Exit 1 on a refused request (a close refused while work
 * is pending prints the counts), 2 on bad usage.
 */
export async function periodsCommand(args: string[], io: Io): Promise<void> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    options: OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length > 0) throw usageError(PERIODS_USAGE);
  checkDateOption('from', values.from);
  checkDateOption('to', values.to);
  checkDateOption('period', values.period);
  const client = new ApiClient(connectionOf(values), { onRetry: (message) => io.err(`retry: ${message}`) });
  switch (action) {
    case 'list':
      return listPeriods(client, values, io);
    case 'close':
    case 'lock':
    case 'reopen':
      return changePeriod(client, action, values, io);
    case 'snapshots':
      return values.snapshot === undefined
        ? listSnapshots(client, values, io)
        : showSnapshot(client, values.snapshot, values, io);
    default:
      throw usageError(PERIODS_USAGE);
  }
}

/** `periods list`: the periods of an accounting configuration, of one node or all, a line each. */
async function listPeriods(client: ApiClient, values: Values, io: Io): Promise<void> {
  const node = nodeOf(values);
  const listing = await client.json(
    {
      method: 'GET',
      path: PERIODS_PATH,
      query: {
        accountingConfig: required(values, 'accounting-config'),
        ...(node === undefined ? {} : { node: JSON.stringify(node) }),
        ...(values.from === undefined ? {} : { from: values.from }),
        ...(values.to === undefined ? {} : { to: values.to }),
      },
    },
    PeriodListingAnswer,
  );
  if (values.json === true) io.out(JSON.stringify(listing, null, 2));
  else for (const p of listing.periods) io.out(describePeriod(p));
}

/**
 * `periods close|lock|reopen`: the period's new state, and the snapshot the change took; a
 * reopening needs `--reason` and may wait for approval instead.
 */
async function changePeriod(
  client: ApiClient,
  action: 'close' | 'lock' | 'reopen',
  values: Values,
  io: Io,
): Promise<void> {
  const reason = values.reason?.trim();
  if (action === 'reopen' && (reason === undefined || reason === ''))
    throw usageError(`--reason is required: why the period is reopened\n${PERIODS_USAGE}`);
  const path = `${PERIODS_PATH}/${action}`;
  const answer = await client.request({
    method: 'POST',
    path,
    json: {
      accountingConfig: required(values, 'accounting-config'),
      node: requiredNode(values),
      firstDay: required(values, 'period'),
      ...(reason === undefined || reason === '' ? {} : { reason }),
    },
    // A reopening may wait for approval; its key makes a retry answer the same request.
    ...(action === 'reopen' ? { idempotencyKey: randomUUID() } : {}),
  });
  if (reportPendingApproval(io, `POST ${path}`, answer)) return;
  const change = answerOf(`POST ${path}`, PeriodChangeAnswer, answer.body);
  io.out(describePeriod(change.period));
  if (change.snapshot !== null) printSnapshot(io, change.snapshot);
}

/** `periods snapshots --snapshot ID`: one snapshot with its balances. */
async function showSnapshot(client: ApiClient, snapshotId: string, values: Values, io: Io): Promise<void> {
  const one = await client.json(
    { method: 'GET', path: `${PERIODS_PATH}/snapshots/${encodeURIComponent(snapshotId)}` },
    PeriodSnapshotWithBalances,
  );
  if (values.json === true) io.out(JSON.stringify(one, null, 2));
  else {
    printSnapshot(io, one);
    for (const b of one.balances) io.out(`  ${b.account}  ${b.balance} ${b.currency}`);
  }
}

/** `periods snapshots` without `--snapshot`: the snapshots of one period of one node. */
async function listSnapshots(client: ApiClient, values: Values, io: Io): Promise<void> {
  const list = await client.json(
    {
      method: 'GET',
      path: `${PERIODS_PATH}/snapshots`,
      query: {
        accountingConfig: required(values, 'accounting-config'),
        node: JSON.stringify(requiredNode(values)),
        firstDay: required(values, 'period'),
      },
    },
    PeriodSnapshotsAnswer,
  );
  if (values.json === true) io.out(JSON.stringify(list.data, null, 2));
  else for (const s of list.data) printSnapshot(io, s);
}
