import { parseArgs } from 'node:util';
import { type Io, usageError } from '../output.js';
import { INGESTIONS_USAGE } from '../usage.js';
import { ApiClient, type ApiResponse, CONNECTION_OPTIONS, connectionOf, isRecord } from './client.js';
import { failedRecordLine } from './format.js';
import { pagedItems } from './paging.js';

/** Errors listed by `ingestions show`; `ingestions errors` lists them all. */
export const SHOWN_ERRORS_MAX = 10;

/** The path of one session. */
export function sessionPathOf(ingestionId: string): string {
  return `/api/v1/ingestions/${encodeURIComponent(ingestionId)}`;
}

/**
 * One entry of GET /api/v1/ingestions/{id}/errors as a line. Without the file, a record is
 * placed by the service's chunk sequence number and its index in that chunk (from 0).
 */
export function sessionErrorLine(entry: Record<string, unknown>): string {
  const kind = typeof entry.kind === 'string' ? ` (${entry.kind})` : '';
  return failedRecordLine(`chunk ${String(entry.chunkSeq)}, index ${String(entry.index)}${kind}`, entry);
}

/** Closes a session; closing a closed session returns it unchanged, so a retry is safe. */
export function closeSession(client: ApiClient, ingestionId: string): Promise<ApiResponse> {
  return client.request({
    method: 'PATCH',
    path: sessionPathOf(ingestionId),
    json: { state: 'closed' },
    contentType: 'application/merge-patch+json',
    idempotent: true,
  });
}

function value(session: Record<string, unknown>, name: string): string {
  const field = session[name];
  return field === null || field === undefined ? '-' : String(field);
}

/** The lines of a session object: state, counters, who and when. Pure. */
export function sessionLines(session: Record<string, unknown>): string[] {
  const closeReason =
    session.closeReason === null || session.closeReason === undefined
      ? ''
      : ` (${value(session, 'closeReason')})`;
  const rows: [string, string][] = [
    ['name', value(session, 'ingestionName')],
    ['entity', `${value(session, 'namespace')}/${value(session, 'entity')}`],
    ['state', `${value(session, 'state')}${closeReason}`],
    ['processing', value(session, 'processingStatus')],
    ['timeout', value(session, 'timeout')],
    ['opened', `${value(session, 'openedOn')} by ${value(session, 'openedBy')}`],
    [
      'closed',
      session.closedOn === null || session.closedOn === undefined
        ? '-'
        : `${value(session, 'closedOn')} by ${value(session, 'closedBy')}`,
    ],
    ['lastActivity', value(session, 'lastActivityOn')],
    ['chunks', value(session, 'chunks')],
    ['totalRows', value(session, 'totalRows')],
    ['successRows', value(session, 'successRows')],
    ['failedRows', value(session, 'failedRows')],
  ];
  return [
    `ingestion ${value(session, 'ingestionId')}`,
    ...rows.map(([name, text]) => `  ${name.padEnd(12)} ${text}`),
  ];
}

/**
 * `ingestions show ID` (the session and its first errors), `ingestions errors ID` (every failed
 * record of the session, validation and processing, page by page), `ingestions close ID`.
 * Exit 1 on a refused request (404 for an unknown session), 2 on bad usage.
 */
export async function ingestionsCommand(args: string[], io: Io): Promise<void> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    options: CONNECTION_OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  const ingestionId = positionals[0];
  if (
    ingestionId === undefined ||
    positionals.length !== 1 ||
    !['show', 'errors', 'close'].includes(action ?? '')
  )
    throw usageError(INGESTIONS_USAGE);
  const client = new ApiClient(connectionOf(values), { onRetry: (message) => io.err(`retry: ${message}`) });
  const path = sessionPathOf(ingestionId);
  if (action === 'close') {
    const answer = await closeSession(client, ingestionId);
    const session = isRecord(answer.body) ? answer.body : {};
    io.out(`ingestion ${ingestionId} ${value(session, 'state')}`);
    return;
  }
  if (action === 'errors') {
    let count = 0;
    for await (const entry of pagedItems(client, `${path}/errors`)) {
      if (!isRecord(entry)) continue;
      count += 1;
      io.out(sessionErrorLine(entry));
    }
    io.err(`${count} failed records`);
    return;
  }
  const session = await client.json({ method: 'GET', path });
  for (const line of sessionLines(session)) io.out(line);
  const errors = await client.json({
    method: 'GET',
    path: `${path}/errors`,
    query: { page: 0, limit: SHOWN_ERRORS_MAX },
  });
  const entries = Array.isArray(errors.data) ? errors.data.filter(isRecord) : [];
  if (entries.length === 0) return;
  const total = typeof errors.totalSize === 'number' ? errors.totalSize : entries.length;
  io.out(
    `errors (first ${entries.length} of ${total}; ledgerflow ingestions errors ${ingestionId} lists them all):`,
  );
  for (const entry of entries) io.out(`  ${sessionErrorLine(entry)}`);
}
