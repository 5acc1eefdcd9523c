import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { CliError, EXIT_REFUSED, type Io, usageError } from '../output.js';
import { type Chunk, ChunkBuilder } from './chunker.js';
import {
  ApiClient,
  ApiError,
  CONNECTION_OPTIONS,
  connectionOf,
  formatProblemEntry,
  isRecord,
} from './client.js';
import { type ProgressReporter, progressReporter, type UploadStats } from './progress.js';
import {
  type AttributeType,
  csvRecords,
  type InputFormat,
  inputFormatOf,
  jsonRecords,
  ndjsonRecords,
  type SourceItem,
} from './record-sources.js';

/** Parallel connections `--parallel` may ask for. */
export const PARALLEL_CONNECTIONS_MAX = 16;
/** Parallel connections without `--parallel`. */
export const PARALLEL_CONNECTIONS_DEFAULT = 4;
/** Errors listed at the end of an upload, from the service and from the file each. */
export const ERRORS_SHOWN_MAX = 10;
/** Characters of the chunk name prefix kept (the service takes names of 200 characters). */
const CHUNK_NAME_PREFIX_CHARS_MAX = 180;
/** Characters of a failed record quoted in an error line. */
const RECORD_QUOTE_CHARS_MAX = 200;

const INGEST_USAGE =
  'usage: ledgerflow ingest FILE --namespace NS --entity E [--name N] [--format json|ndjson|csv] ' +
  `[--parallel ${PARALLEL_CONNECTIONS_DEFAULT}] [--timeout PT15M] [--partial]`;

interface IngestOptions {
  file: string;
  format: InputFormat;
  namespace: string;
  entity: string;
  name: string | undefined;
  timeout: string | undefined;
  parallel: number;
  partial: boolean;
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
    },
    allowPositionals: true,
    strict: true,
  });
  const file = positionals[0];
  if (file === undefined || positionals.length !== 1) throw usageError(INGEST_USAGE);
  if (values.namespace === undefined || values.entity === undefined)
    throw usageError(`ingest needs --namespace and --entity\n${INGEST_USAGE}`);
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
  };
  return { options, client: new ApiClient(connectionOf(values), { onRetry }) };
}

/** The attribute types of the target entity, which type the cells of a CSV file. */
async function attributeTypesOf(
  client: ApiClient,
  namespace: string,
  entity: string,
): Promise<Map<string, AttributeType>> {
  const detail = await client.json({
    method: 'GET',
    path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/entities/${encodeURIComponent(entity)}`,
  });
  const types = new Map<string, AttributeType>();
  for (const attribute of Array.isArray(detail.attributes) ? detail.attributes : []) {
    if (isRecord(attribute) && typeof attribute.name === 'string' && typeof attribute.type === 'string') {
      types.set(attribute.name, {
        name: attribute.name,
        type: attribute.type,
        elementType: typeof attribute.elementType === 'string' ? attribute.elementType : undefined,
      });
    }
  }
  return types;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function quote(record: unknown): string {
  const text = JSON.stringify(record) ?? String(record);
  return text.length > RECORD_QUOTE_CHARS_MAX ? `${text.slice(0, RECORD_QUOTE_CHARS_MAX)}...` : text;
}

/** One failed record as one line: where it is, each field error, and the record itself. */
function failedRecordLine(prefix: string, entry: Record<string, unknown>): string {
  const errors = Array.isArray(entry.errors) ? entry.errors.map(formatProblemEntry).join('; ') : '';
  const record = entry.record === undefined ? '' : ` -- ${quote(entry.record)}`;
  return `${prefix}: ${errors}${record}`;
}

interface UploadState {
  stats: UploadStats;
  /** Error lines from chunk answers, in case the service's error list cannot be read. */
  chunkErrors: string[];
  /** Input that could not be sent, as `where: reason`. */
  unsent: string[];
  unsentCount: number;
  replayed: number;
}

/** The chunks of the file, in order; invalid input is counted in `state` and skipped. */
async function* chunksOf(
  items: AsyncIterable<SourceItem>,
  builder: ChunkBuilder,
  state: UploadState,
  fileBytesRead: () => number,
): AsyncGenerator<Chunk & { fileBytes: number }> {
  const reject = (where: string, message: string) => {
    state.unsentCount += 1;
    state.stats.recordsFailed += 1;
    if (state.unsent.length < ERRORS_SHOWN_MAX) state.unsent.push(`${where}: ${message}`);
  };
  for await (const item of items) {
    if (item.kind === 'invalid') {
      reject(item.where, item.message);
      continue;
    }
    let chunk: Chunk | undefined;
    try {
      chunk = builder.add(item.text, item.where);
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      reject(item.where, error.message);
      continue;
    }
    if (chunk !== undefined) yield { ...chunk, fileBytes: fileBytesRead() };
  }
  const last = builder.finish();
  if (last !== undefined) yield { ...last, fileBytes: fileBytesRead() };
}

async function sendChunk(
  client: ApiClient,
  ingestionId: string,
  chunk: Chunk,
  partial: boolean,
  state: UploadState,
): Promise<void> {
  const response = await client.request({
    method: 'POST',
    path: `/api/v1/ingestions/${encodeURIComponent(ingestionId)}`,
    query: partial ? { partial: 'true' } : undefined,
    body: chunk.body,
    idempotencyKey: `${ingestionId}:${chunk.no}`,
    accept: [400],
  });
  const body = isRecord(response.body) ? response.body : {};
  const errors = Array.isArray(body.errors) ? body.errors : [];
  if (response.status === 400) {
    // Only an atomic chunk refused for its records is data; any other 400 (not JSON, no
    // data array) means this client is wrong, and the upload stops.
    if (errors.length === 0 || !errors.every((entry) => isRecord(entry) && entry.index !== undefined)) {
      throw new ApiError(
        `chunk ${chunk.no} (${chunk.name}) was refused:\n${JSON.stringify(body)}`,
        400,
        response.body,
      );
    }
    state.stats.recordsFailed += chunk.records;
  } else {
    state.stats.recordsFailed += count(body.failedRows);
  }
  if (response.headers.get('idempotent-replayed') === 'true') state.replayed += 1;
  for (const entry of errors) {
    if (state.chunkErrors.length >= ERRORS_SHOWN_MAX || !isRecord(entry)) break;
    const where = typeof entry.index === 'number' ? chunk.where[entry.index] : undefined;
    state.chunkErrors.push(
      failedRecordLine(`chunk ${chunk.no}, ${where ?? `record ${String(entry.index)}`}`, entry),
    );
  }
  state.stats.recordsSent += chunk.records;
  state.stats.chunksSent += 1;
  state.stats.bytesSent += chunk.bytes;
}

/** Sends every chunk over `parallel` connections; the first fatal error stops the reading. */
async function upload(
  client: ApiClient,
  ingestionId: string,
  chunks: AsyncGenerator<Chunk & { fileBytes: number }>,
  options: IngestOptions,
  state: UploadState,
  progress: ProgressReporter,
): Promise<void> {
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (failure === undefined) {
      try {
        const next = await chunks.next();
        if (next.done === true) return;
        await sendChunk(client, ingestionId, next.value, options.partial, state);
        state.stats.fileBytesDone = Math.max(state.stats.fileBytesDone, next.value.fileBytes);
        state.stats.retries = client.retries;
        progress.update(state.stats);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: options.parallel }, worker));
  if (failure !== undefined) {
    await chunks.return(undefined);
    throw failure.error;
  }
}

/**
 * `ingest FILE --namespace NS --entity E [--name N] [--format F] [--parallel 4] [--timeout D]
 * [--partial]` (contract sections 4 and 7): opens an ingestion session, streams the file (JSON,
 * NDJSON or CSV) into chunks under 1 MiB, sends them over parallel connections with an
 * idempotency key each (so a retried chunk is stored once), closes the session, and prints its
 * counters and first errors. Exit 1 when any record failed or the service refused the upload,
 * 2 on bad usage or an unreadable file.
 */
export async function ingestCommand(args: string[], io: Io): Promise<void> {
  // Retries are told on standard error, through the progress bar once there is one.
  let log = (line: string) => io.err(line);
  const { options, client } = ingestOptionsOf(args, (message) => log(`retry: ${message}`));
  let fileBytesTotal: number;
  try {
    const info = await stat(options.file);
    if (!info.isFile()) throw new Error('not a file');
    fileBytesTotal = info.size;
  } catch (error) {
    throw usageError(
      `cannot read ${options.file}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const attributes =
    options.format === 'csv' ? await attributeTypesOf(client, options.namespace, options.entity) : new Map();

  const session = await client.json({
    method: 'POST',
    path: '/api/v1/ingestions',
    json: {
      namespace: options.namespace,
      entity: options.entity,
      ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
      ...(options.name === undefined ? {} : { ingestionName: options.name }),
    },
  });
  const { ingestionId } = session;
  if (typeof ingestionId !== 'string')
    throw new CliError('the service answered without an ingestionId', EXIT_REFUSED);
  io.err(`ingestion ${ingestionId} opened for ${options.namespace}/${options.entity}`);

  const state: UploadState = {
    stats: {
      recordsSent: 0,
      recordsFailed: 0,
      chunksSent: 0,
      bytesSent: 0,
      fileBytesDone: 0,
      fileBytesTotal,
      retries: 0,
    },
    chunkErrors: [],
    unsent: [],
    unsentCount: 0,
    replayed: 0,
  };
  const progress = progressReporter(io, fileBytesTotal);
  log = progress.log;
  const input = createReadStream(options.file);
  const items =
    options.format === 'csv'
      ? csvRecords(input, attributes)
      : options.format === 'ndjson'
        ? ndjsonRecords(input)
        : jsonRecords(input);
  const builder = new ChunkBuilder(
    (options.name ?? basename(options.file)).slice(0, CHUNK_NAME_PREFIX_CHARS_MAX),
  );
  const chunks = chunksOf(items, builder, state, () => input.bytesRead);

  let uploadError: unknown;
  try {
    await upload(client, ingestionId, chunks, options, state, progress);
  } catch (error) {
    uploadError = error;
  } finally {
    input.destroy();
    state.stats.retries = client.retries;
    progress.stop(state.stats);
  }

  const sessionPath = `/api/v1/ingestions/${encodeURIComponent(ingestionId)}`;
  let closeError: unknown;
  try {
    await client.request({
      method: 'PATCH',
      path: sessionPath,
      json: { state: 'closed' },
      contentType: 'application/merge-patch+json',
      // Closing a closed session returns it unchanged (contract 4.1), so a retry is safe.
      idempotent: true,
    });
  } catch (error) {
    if (uploadError === undefined) throw error;
    closeError = error;
  }
  if (uploadError !== undefined) {
    const { chunksSent, recordsSent } = state.stats;
    const closing =
      closeError === undefined
        ? `ingestion ${ingestionId} closed`
        : `ingestion ${ingestionId} left open (${messageOf(closeError)})`;
    throw new CliError(
      `upload stopped after ${chunksSent} chunks (${recordsSent} records); ${closing}:\n${messageOf(uploadError)}`,
      uploadError instanceof CliError ? uploadError.exitCode : EXIT_REFUSED,
    );
  }
  await printSummary(client, sessionPath, state, io);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Prints the session's counters and first errors, and the input that could not be sent.
 * Throws CliError (exit 1) when any record failed.
 */
async function printSummary(
  client: ApiClient,
  sessionPath: string,
  state: UploadState,
  io: Io,
): Promise<void> {
  const final = await client.json({ method: 'GET', path: sessionPath });
  io.out(`ingestion ${String(final.ingestionId)} ${String(final.state)}`);
  for (const name of ['chunks', 'totalRows', 'successRows', 'failedRows'] as const) {
    io.out(`  ${name.padEnd(12)} ${count(final[name])}`);
  }
  if (state.replayed > 0)
    io.out(`  (${state.replayed} chunks were retried and answered from the first attempt)`);
  const failedRows = count(final.failedRows);
  if (failedRows > 0 || state.chunkErrors.length > 0) await printErrors(client, sessionPath, state, io);
  if (state.unsentCount > 0) {
    io.out(`not sent (first ${state.unsent.length} of ${state.unsentCount}):`);
    for (const line of state.unsent) io.out(`  ${line}`);
  }
  // Locally, every record of a chunk refused as a whole counts as failed: none of it was stored.
  const failed = Math.max(failedRows + state.unsentCount, state.stats.recordsFailed);
  if (failed > 0) throw new CliError(`${failed} records failed and were not stored`, EXIT_REFUSED);
}

async function printErrors(
  client: ApiClient,
  sessionPath: string,
  state: UploadState,
  io: Io,
): Promise<void> {
  let page: Record<string, unknown> | undefined;
  try {
    page = await client.json({
      method: 'GET',
      path: `${sessionPath}/errors`,
      query: { limit: ERRORS_SHOWN_MAX },
    });
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
  }
  const entries = page !== undefined && Array.isArray(page.data) ? page.data.filter(isRecord) : [];
  if (entries.length === 0) {
    io.out(`errors (first ${state.chunkErrors.length}):`);
    for (const line of state.chunkErrors) io.out(`  ${line}`);
    return;
  }
  io.out(`errors (first ${entries.length} of ${count(page?.totalSize)}):`);
  for (const entry of entries) {
    const where =
      typeof entry.chunkSeq === 'number'
        ? `chunk ${entry.chunkSeq}, record ${String(entry.index)}`
        : `${String(entry.kind ?? 'processing')} error`;
    io.out(`  ${failedRecordLine(where, entry)}`);
  }
}
