import { parseArgs } from 'node:util';
import type { Static } from '@sinclair/typebox';
import { Page, ProcessingError, Session } from '../../http/api/answer-schemas.js';
import { CliError, EXIT_REFUSED, type Io, usageError } from '../output.js';
import { CORRECT_USAGE } from '../usage.js';
import { ApiClient, CONNECTION_OPTIONS, connectionOf } from './client.js';
import { quoteRecord } from './format.js';
import { ingestFile } from './ingest-command.js';
import { sessionPathOf } from './ingestions-command.js';

/** How often the command asks whether a session's records are processed. */
const PROCESSING_POLL_INTERVAL_MS = 500;
/** How long it waits for a session's processing before it stops and says so. */
const PROCESSING_WAIT_MS_MAX = 30 * 60_000;
/** Processing errors of a session the command names when it stops. */
const ERRORS_NAMED_MAX = 10;

/** The namespace of the ledger entities, and the two the command sends. */
const LEDGER = 'ledger';
const ROLLBACK_ENTITY = 'businessEventRollback';
const EVENT_ENTITY = 'businessEvent';

type SessionAnswer = Static<typeof Session>;

/** Polls the session until its records are processed; throws when that takes too long. */
async function processed(client: ApiClient, ingestionId: string, what: string): Promise<SessionAnswer> {
  const deadline = Date.now() + PROCESSING_WAIT_MS_MAX;
  for (;;) {
    const session = await client.json({ method: 'GET', path: sessionPathOf(ingestionId) }, Session);
    if (session.processingStatus === 'completed' || session.processingStatus === 'completed_with_errors')
      return session;
    if (Date.now() >= deadline) {
      throw new CliError(
        `the ${what} of ingestion ${ingestionId} is not processed after ${PROCESSING_WAIT_MS_MAX / 60_000} minutes ` +
          `(processing status ${session.processingStatus}); see ledgerflow ingestions show ${ingestionId}`,
        EXIT_REFUSED,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, PROCESSING_POLL_INTERVAL_MS));
  }
}

/** The first processing errors of a session, one line each: code, message, the record. */
async function errorLines(client: ApiClient, ingestionId: string): Promise<string[]> {
  const page = await client.json(
    {
      method: 'GET',
      path: '/api/v1/processing-errors',
      query: { ingestionId, page: 0, limit: ERRORS_NAMED_MAX },
    },
    Page(ProcessingError),
  );
  return page.data.map((e) => `  record ${e.recordId} ${e.code}: ${e.message} -- ${quoteRecord(e.record)}`);
}

/**
 * `correct --rollback OLD --post NEW [--format F]`: the correction recipe in one command
 * (docs/reference.md, Rollback of business events). Sends OLD as a session of
 * `ledger/businessEventRollback`, waits until it is processed and stops (exit 1, naming each
 * failed record with its code, NEW not sent) unless every record rolled back its event; then
 * sends NEW as a session of `ledger/businessEvent` and waits for it too. Files are read as
 * `ingest` reads them (JSON, NDJSON or CSV). Exit 1 when a record failed validation or
 * processing or the service refused a request, 2 on bad usage.
 */
export async function correctCommand(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      ...CONNECTION_OPTIONS,
      rollback: { type: 'string' },
      post: { type: 'string' },
      format: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length > 0 || values.rollback === undefined || values.post === undefined)
    throw usageError(CORRECT_USAGE);
  const client = new ApiClient(connectionOf(values), { onRetry: (message) => io.err(`retry: ${message}`) });
  const passed = [
    ...(values.format === undefined ? [] : ['--format', values.format]),
    ...(['url', 'client-id', 'client-secret'] as const).flatMap((name) => {
      const value = values[name];
      return value === undefined ? [] : [`--${name}`, value];
    }),
  ];

  io.out(`rollback: ${values.rollback}`);
  let rollbackId: string;
  try {
    rollbackId = await ingestFile(
      [values.rollback, '--namespace', LEDGER, '--entity', ROLLBACK_ENTITY, ...passed],
      io,
    );
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    throw new CliError(
      `${error.message}\nthe rollback was not sent whole; ${values.post} was not sent`,
      error.exitCode,
    );
  }
  const rolledBack = await processed(client, rollbackId, 'rollback');
  if (rolledBack.processingStatus === 'completed_with_errors') {
    const lines = await errorLines(client, rollbackId);
    throw new CliError(
      `the rollback failed for some records of ingestion ${rollbackId}; ${values.post} was not sent:\n${lines.join('\n')}\n` +
        `fix them and reprocess (ledgerflow errors reprocess --ingestion ${rollbackId}), then send ${values.post} with ledgerflow ingest`,
      EXIT_REFUSED,
    );
  }
  io.out(`rollback: ${rolledBack.successRows} business events rolled back (ingestion ${rollbackId})`);

  io.out(`post: ${values.post}`);
  const postId = await ingestFile(
    [values.post, '--namespace', LEDGER, '--entity', EVENT_ENTITY, ...passed],
    io,
  );
  const posted = await processed(client, postId, 'post');
  if (posted.processingStatus === 'completed_with_errors') {
    const lines = await errorLines(client, postId);
    throw new CliError(
      `the rollback is done, but some corrected events of ingestion ${postId} did not post:\n${lines.join('\n')}`,
      EXIT_REFUSED,
    );
  }
  io.out(`post: ${posted.successRows} business events posted (ingestion ${postId})`);
}
