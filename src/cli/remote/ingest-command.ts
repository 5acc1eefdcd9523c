/**
 * `ledgerflow ingest`: its options, the session it adds to, the end of that session and the
 * summary; the sending of the file's chunks is in `ingest-upload.ts`, and the chunker, record
 * sources and client are files of their own.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { EntityDetail, Session } from '../../http/api/answer-schemas.js';
import { CliError, EXIT_REFUSED, type Io, usageError } from '../output.js';
import { INGEST_USAGE } from '../usage.js';
import { ChunkBuilder } from './chunker.js';
import { ApiClient, CONNECTION_OPTIONS, connectionOf } from './client.js';
import { chunksOf, newUploadState, type UploadState, upload } from './ingest-upload.js';
import { closeSession, sessionPathOf } from './ingestions-command.js';
import { progressReporter } from './progress.js';
import {
  type AttributeType,
  csvRecords,
  type InputFormat,
  inputFormatOf,
  jsonRecords,
  ndjsonRecords,
} from './record-sources.js';

/** Parallel connections `--parallel` may ask for. */
export const PARALLEL_CONNECTIONS_MAX = 16;
/** Parallel connections without `--parallel`. */
export const PARALLEL_CONNECTIONS_DEFAULT = 4;
/** Characters of the chunk name prefix kept (the service takes names of 200 characters). */
const CHUNK_NAME_PREFIX_CHARS_MAX = 180;

/**
 * The session name and chunk name prefix without `--name`: the file's name, cut to
 * `CHUNK_NAME_PREFIX_CHARS_MAX` characters. Pure.
 */
function defaultNameOf(file: string): string {
  return basename(file).slice(0, CHUNK_NAME_PREFIX_CHARS_MAX);
}

interface IngestOptions {
  file: string;
  format: InputFormat;
  namespace: string | undefined;
  entity: string | undefined;
  name: string | undefined;
  timeout: string | undefined;
  parallel: number;
  partial: boolean;
  session: string | undefined;
  keepOpen: boolean;
}

function ingestOptionsOf(
  args: string[],
  onRetry: (message: string) => void,
): { options: IngestOptions; client: ApiClient } {
  const { values, positionals } = parseArgs({
    args,
    options: {
      ...CONNECTION_OPTIONS,
      namespace: { type: 'string' },
      entity: { type: 'string' },
      name: { type: 'string' },
      format: { type: 'string' },
      parallel: { type: 'string' },
      timeout: { type: 'string' },
      partial: { type: 'boolean' },
      session: { type: 'string' },
      'keep-open': { type: 'boolean' },
    },
    allowPositionals: true,
    strict: true,
  });
  const file = positionals[0];
  if (file === undefined || positionals.length !== 1) throw usageError(INGEST_USAGE);
  if (values.session === undefined && (values.namespace === undefined || values.entity === undefined))
    throw usageError(`ingest needs --namespace and --entity (or --session ID)\n${INGEST_USAGE}`);
  if (values.session !== undefined && values.timeout !== undefined)
    throw usageError('--timeout is the timeout of a new session; an open session (--session) keeps its own');
  const parallelText = values.parallel ?? String(PARALLEL_CONNECTIONS_DEFAULT);
  const parallel = Number(parallelText);
  if (!/^\d+$/.test(parallelText) || parallel < 1 || parallel > PARALLEL_CONNECTIONS_MAX)
    throw usageError(`--parallel must be a whole number from 1 to ${PARALLEL_CONNECTIONS_MAX}`);
  const options: IngestOptions = {
    file,
    format: inputFormatOf(file, values.format),
    namespace: values.namespace,
    entity: values.entity,
    name: values.name,
    timeout: values.timeout,
    parallel,
    partial: values.partial === true,
    session: values.session,
    keepOpen: values['keep-open'] === true,
  };
  return { options, client: new ApiClient(connectionOf(values), { onRetry }) };
}

/** The attribute types of the target entity, which type the cells of a CSV file. */
async function attributeTypesOf(
  client: ApiClient,
  namespace: string,
  entity: string,
): Promise<Map<string, AttributeType>> {
  const detail = await client.json(
    {
      method: 'GET',
      path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/entities/${encodeURIComponent(entity)}`,
    },
    EntityDetail,
  );
  return new Map(
    detail.attributes.map((attribute) => [
      attribute.name,
      { name: attribute.name, type: attribute.type, elementType: attribute.elementType },
    ]),
  );
}

/**
 * The session to add to: a new one, or with `--session` the open session of that id, whose
 * namespace and entity must match `--namespace` and `--entity` when they are given.
 */
async function sessionFor(
  client: ApiClient,
  options: IngestOptions,
  io: Io,
): Promise<{ ingestionId: string; namespace: string; entity: string }> {
  if (options.session !== undefined) {
    const session = await client.json({ method: 'GET', path: sessionPathOf(options.session) }, Session);
    const { namespace, entity } = session;
    if (
      (options.namespace !== undefined && options.namespace !== namespace) ||
      (options.entity !== undefined && options.entity !== entity)
    ) {
      throw usageError(
        `session ${options.session} is for ${namespace}/${entity}, not ${options.namespace ?? namespace}/${options.entity ?? entity}`,
      );
    }
    if (session.state !== 'pending')
      throw new CliError(
        `session ${options.session} is ${session.state} and takes no more records; leave out --session to open a new one`,
        EXIT_REFUSED,
      );
    io.err(`ingestion ${options.session} (open) takes the records for ${namespace}/${entity}`);
    return { ingestionId: options.session, namespace, entity };
  }
  const namespace = options.namespace ?? '';
  const entity = options.entity ?? '';
  const session = await client.json(
    {
      method: 'POST',
      path: '/api/v1/ingestions',
      json: {
        namespace,
        entity,
        ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
        ingestionName: options.name ?? defaultNameOf(options.file),
      },
    },
    Session,
  );
  io.err(`ingestion ${session.ingestionId} opened for ${namespace}/${entity}`);
  return { ingestionId: session.ingestionId, namespace, entity };
}

/**
 * `ingest FILE --namespace NS --entity E [--name N] [--format F] [--parallel 4] [--timeout D]
 * [--partial] [--session ID] [--keep-open]`: opens an ingestion session (or adds to the open
 * session `--session`), streams the file (JSON, NDJSON or CSV) into chunks under 1 MiB, sends
 * them over parallel connections with an idempotency key each (so a retried chunk, or a chunk
 * of the same file sent to the same session again, is stored once), and prints the session's
 * counters and the first failed records by their place in the file. The session is closed at
 * the end, except with `--keep-open` or when chunks were refused whole (then it is left open
 * so that `--partial --session ID` can complete it). Exit 1 when any record failed or the
 * service refused the upload, 2 on bad usage or an unreadable file.
 */
export async function ingestCommand(args: string[], io: Io): Promise<void> {
  await ingestFile(args, io);
}

/**
 * What `ingest` does (see {@link ingestCommand}), answering the id of the session the file went
 * to, for commands that go on with it (`correct` waits for its processing).
 */
export async function ingestFile(args: string[], io: Io): Promise<string> {
  // Retries are told on standard error, through the progress bar once there is one.
  let log = (line: string) => io.err(line);
  const { options, client } = ingestOptionsOf(args, (message) => log(`retry: ${message}`));
  const fileBytesTotal = await fileBytesOf(options.file);
  const { ingestionId, namespace, entity } = await sessionFor(client, options, io);
  const attributes = options.format === 'csv' ? await attributeTypesOf(client, namespace, entity) : new Map();

  const state = newUploadState(fileBytesTotal);
  const progress = progressReporter(io, fileBytesTotal);
  log = progress.log;
  const input = createReadStream(options.file);
  const items =
    options.format === 'csv'
      ? csvRecords(input, attributes)
      : options.format === 'ndjson'
        ? ndjsonRecords(input)
        : jsonRecords(input);
  const namePrefix = (options.name ?? defaultNameOf(options.file)).slice(0, CHUNK_NAME_PREFIX_CHARS_MAX);
  const chunks = chunksOf(items, new ChunkBuilder(namePrefix), state, () => input.bytesRead);

  let uploadError: unknown;
  try {
    await upload(client, ingestionId, chunks, namePrefix, options, state, progress);
  } catch (error) {
    uploadError = error;
  } finally {
    input.destroy();
    state.stats.retries = client.retries;
    progress.stop(state.stats);
  }
  await endSession(client, ingestionId, options, state, uploadError);
  await printSummary(client, ingestionId, options, state, io);
  return ingestionId;
}

/** The size of the file to send, in bytes; bad usage when it is no file that can be read. */
async function fileBytesOf(file: string): Promise<number> {
  try {
    const info = await stat(file);
    if (!info.isFile()) throw new Error('not a file');
    return info.size;
  } catch (error) {
    throw usageError(`cannot read ${file}: ${messageOf(error)}`);
  }
}

/**
 * Closes the session after the upload unless it stays open (`--keep-open`, or chunks refused
 * whole); when the upload stopped on `uploadError`, throws it as a CliError that says how far it
 * got and what became of the session.
 */
async function endSession(
  client: ApiClient,
  ingestionId: string,
  options: IngestOptions,
  state: UploadState,
  uploadError: unknown,
): Promise<void> {
  // Left open to be completed: a chunk refused whole has valid records that --partial keeps.
  const keepOpen = options.keepOpen || (uploadError === undefined && state.refusedChunks > 0);
  let closeError: unknown;
  if (!keepOpen) {
    try {
      await closeSession(client, ingestionId);
    } catch (error) {
      if (uploadError === undefined) throw error;
      closeError = error;
    }
  }
  if (uploadError !== undefined) {
    const { chunksSent, recordsSent } = state.stats;
    const closing = keepOpen
      ? `ingestion ${ingestionId} left open`
      : closeError === undefined
        ? `ingestion ${ingestionId} closed`
        : `ingestion ${ingestionId} left open (${messageOf(closeError)})`;
    throw new CliError(
      `upload stopped after ${chunksSent} chunks (${recordsSent} records); ${closing}:\n${messageOf(uploadError)}`,
      uploadError instanceof CliError ? uploadError.exitCode : EXIT_REFUSED,
    );
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Prints the session's counters, the first failed records by place in the file, the input that
 * could not be sent, and for chunks refused whole the valid records they held and how to store
 * them. Throws CliError (exit 1) when any record failed or was not stored.
 */
async function printSummary(
  client: ApiClient,
  ingestionId: string,
  options: IngestOptions,
  state: UploadState,
  io: Io,
): Promise<void> {
  const final = await client.json({ method: 'GET', path: sessionPathOf(ingestionId) }, Session);
  io.out(`ingestion ${final.ingestionId} ${final.state}`);
  for (const name of ['chunks', 'totalRows', 'successRows', 'failedRows'] as const) {
    io.out(`  ${name.padEnd(12)} ${final[name]}`);
  }
  if (state.replayed > 0)
    io.out(
      `  (${chunksWere(state.replayed)} answered from an earlier request of the same chunk: stored once, not twice)`,
    );
  if (state.firstFailed.length > 0) {
    const lines = options.format === 'json' ? 'index in the JSON array, from 0' : 'line, from 1';
    const header = options.format === 'csv' ? '; the CSV header is line 1' : '';
    io.out(`failed records (first ${state.firstFailed.length} of ${state.invalid}, by ${lines}${header}):`);
    for (const failed of state.firstFailed) io.out(`  ${failed.line}`);
  }
  if (state.unsentCount > 0) {
    io.out(`not sent (first ${state.unsent.length} of ${state.unsentCount}):`);
    for (const line of state.unsent) io.out(`  ${line}`);
  }
  if (state.refusedChunks > 0) {
    io.out(
      `${state.validNotStored} valid records were not stored: ${chunksWere(state.refusedChunks)} refused whole for their invalid records.`,
    );
    io.out(
      `To store them, run the same command again with --partial --session ${ingestionId} (chunks stored already are not stored twice);`,
    );
    io.out(
      `ingestion ${ingestionId} stays open until then (it expires after ${final.timeout} without a request), or close it: ledgerflow ingestions close ${ingestionId}`,
    );
  } else if (options.keepOpen) {
    io.out(`ingestion ${ingestionId} left open (--keep-open); add to it with --session ${ingestionId}`);
  }
  const failed = state.invalid + state.unsentCount;
  if (failed > 0 || state.validNotStored > 0) {
    const valid = state.validNotStored > 0 ? `, and ${state.validNotStored} valid records with them` : '';
    throw new CliError(`${failed} records failed and were not stored${valid}`, EXIT_REFUSED);
  }
}

/** `1 chunk was` or `N chunks were`, for the summary lines. */
function chunksWere(count: number): string {
  return count === 1 ? '1 chunk was' : `${count} chunks were`;
}
