import { parseArgs } from 'node:util';
import { type Static, Type } from '@sinclair/typebox';
import { ConfigurationRevision, RevisionDiff } from '../../http/api/answer-schemas.js';
import { type Io, usageError } from '../output.js';
import { CONFIG_USAGE } from '../usage.js';
import { ApiClient, CONNECTION_OPTIONS, connectionOf } from './client.js';
import { quoteRecord, textTable } from './format.js';
import { pagedItems } from './paging.js';

const REVISIONS_PATH = '/api/v1/configuration/revisions';

/** Revisions listed when neither --limit nor --all is given. */
const REVISIONS_LISTED_DEFAULT = 20;

/** Characters of a hash shown in the table: enough to tell revisions apart by eye. */
const HASH_SHOWN_CHARS = 12;

/** A positive whole number given to an option, or a usage error naming it. */
function positive(name: string, value: string): number {
  const n = Number(value);
  if (!/^\d{1,15}$/.test(value) || n < 1)
    throw usageError(`${name} must be a whole number from 1, got ${value}`);
  return n;
}

function parse(args: string[], options: { limit?: true }) {
  return parseArgs({
    args,
    options: {
      ...CONNECTION_OPTIONS,
      json: { type: 'boolean' },
      ...(options.limit === undefined ? {} : { limit: { type: 'string' }, all: { type: 'boolean' } }),
    },
    allowPositionals: true,
    strict: true,
  });
}

function clientOf(values: Parameters<typeof connectionOf>[0], io: Io): ApiClient {
  return new ApiClient(connectionOf(values), { onRetry: (message) => io.err(`retry: ${message}`) });
}

/**
 * `config revisions [--limit N | --all] [--json]`: the configuration revisions, newest first,
 * as a table (revision, when, who, upload or delete, the start of the hash), or as one JSON
 * object per line with --json.
 */
export async function revisionsCommand(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parse(args, { limit: true });
  if (positionals.length > 0) throw usageError(CONFIG_USAGE);
  if (values.all === true && values.limit !== undefined) throw usageError('give --limit or --all, not both');
  const limit =
    values.all === true
      ? Number.POSITIVE_INFINITY
      : values.limit === undefined
        ? REVISIONS_LISTED_DEFAULT
        : positive('--limit', String(values.limit));
  const client = clientOf(values, io);
  const rows: Static<typeof ConfigurationRevision>[] = [];
  for await (const revision of pagedItems(client, REVISIONS_PATH, ConfigurationRevision)) {
    if (rows.length >= limit) break;
    rows.push(revision);
  }
  if (values.json === true) {
    for (const row of rows) io.out(JSON.stringify(row));
    return;
  }
  if (rows.length === 0) {
    io.out('no revisions');
    return;
  }
  const table = textTable(
    ['REVISION', 'AT', 'BY', 'ACTION', 'SHA256'],
    rows.map((r) => [
      String(r.revision),
      r.at,
      r.actor ?? '-',
      r.action,
      r.sha256.slice(0, HASH_SHOWN_CHARS),
    ]),
    new Set([0]),
  );
  for (const line of table) io.out(line);
}

/** One change as one line: `+ PATH: NEW`, `- PATH: OLD` or `~ PATH: OLD -> NEW`. Pure. */
export function changeLine(change: Static<typeof RevisionDiff>['changes'][number]): string {
  if (change.kind === 'added') return `+ ${change.path}: ${quoteRecord(change.new)}`;
  if (change.kind === 'removed') return `- ${change.path}: ${quoteRecord(change.old)}`;
  return `~ ${change.path}: ${quoteRecord(change.old)} -> ${quoteRecord(change.new)}`;
}

/**
 * `config diff N M [--json]`: the changes from revision N to revision M, one line each
 * ({@link changeLine}), or the service's answer as JSON with --json.
 */
export async function diffCommand(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parse(args, {});
  const [from, to] = positionals;
  if (positionals.length !== 2 || from === undefined || to === undefined) throw usageError(CONFIG_USAGE);
  const client = clientOf(values, io);
  const diff = await client.json(
    {
      method: 'GET',
      path: `${REVISIONS_PATH}/${positive('M', to)}/diff`,
      query: { from: positive('N', from) },
    },
    Type.Pick(RevisionDiff, ['changes', 'truncated']),
  );
  if (values.json === true) {
    io.out(JSON.stringify(diff, null, 2));
    return;
  }
  if (diff.changes.length === 0) io.out(`revisions ${from} and ${to} hold the same configuration`);
  for (const change of diff.changes) io.out(changeLine(change));
  if (diff.truncated) io.out(`(more changes than the ${diff.changes.length} listed)`);
}
