import { parseArgs } from 'node:util';
import { type Static, Type } from '@sinclair/typebox';
import { Page, Session, SessionError } from '../../http/api/answer-schemas.js';
import { type Io, usageError } from '../output.js';
import { INGESTIONS_USAGE } from '../usage.js';
import { ApiClient, CONNECTION_OPTIONS, connectionOf } from './client.js';
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
export function sessionErrorLine(entry: Static<typeof SessionError>): string {
  return failedRecordLine(`chunk ${entry.chunkSeq}, index ${entry.index} (${entry.kind})`, entry);
}

/** Closes a session; closing a closed session returns it unchanged, so a retry is safe. */
export function closeSession(client: ApiClient, ingestionId: string): Promise<Static<typeof Session>> {
  return client.json(
    {
      method: 'PATCH',
      path: sessionPathOf(ingestionId),
      json: { state: 'closed' },
      contentType: 'application/merge-patch+json',
      idempotent: true,
    },
    Session,
  );
}

function value(session: Static<typeof Session>, name: keyof Static<typeof Session>): string {
  const field = session[name];
  return field === null ? '-' : String(field);
}

/** The lines of a session object: state, counters, who and when. Pure. */
export function sessionLines(session: Static<typeof Session>): string[] {
  const closeReason = session.closeReason === null ? '' : ` (${value(session, 'closeReason')})`;
  const rows: [string, string][] = [
    ['name', value(session, 'ingestionName')],
    ['entity', `${value(session, 'namespace')}/${value(session, 'entity')}`],
    ['state', `${value(session, 'state')}${closeReason}`],
    ['processing', value(session, 'processingStatus')],
    ['timeout', value(session, 'timeout')],
    ['opened', `${value(session, 'openedOn')} by ${value(session, 'openedBy')}`],
    [
      'closed',
      session.closedOn === null ? '-' : `${value(session, 'closedOn')} by ${value(session, 'closedBy')}`,
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
    const session = await closeSession(client, ingestionId);
    io.out(`ingestion ${ingestionId} ${session.state}`);
    return;
  }
  if (action === 'errors') {
    let count = 0;
    for await (const entry of pagedItems(client, `${path}/errors`, SessionError)) {
      count += 1;
      io.out(sessionErrorLine(entry));
    }
    io.err(`${count} failed records`);
    return;
  }
  const session = await client.json({ method: 'GET', path }, Session);
  for (const line of sessionLines(session)) io.out(line);
  const errors = await client.json(
    { method: 'GET', path: `${path}/errors`, query: { page: 0, limit: SHOWN_ERRORS_MAX } },
    Type.Composite([
      Type.Pick(Page(SessionError), ['data']),
      Type.Partial(Type.Pick(Page(SessionError), ['totalSize'])),
    ]),
  );
  const entries = errors.data;
  if (entries.length === 0) return;
  io.out(
    `errors (first ${entries.length} of ${errors.totalSize ?? entries.length}; ledgerflow ingestions errors ${ingestionId} lists them all):`,
  );
  for (const entry of entries) io.out(`  ${sessionErrorLine(entry)}`);
}
