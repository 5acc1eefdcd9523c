/**
 * The sending half of `ingest` (`ingest-command.ts`): the file's records cut into chunks, each
 * sent with its idempotency key over parallel connections, and what the answers and the
 * unsendable input come to (`UploadState`), which the command's summary prints.
 */
import { createHash } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import { ChunkAccepted, ChunkRefused } from '../../http/api/answer-schemas.js';
import { answerOf, matches } from './answers.js';
import type { Chunk, ChunkBuilder } from './chunker.js';
import { type ApiClient, ApiError } from './client.js';
import { failedRecordLine } from './format.js';
import { sessionPathOf } from './ingestions-command.js';
import type { ProgressReporter, UploadStats } from './progress.js';
import type { Place, SourceItem } from './record-sources.js';

/** Errors listed at the end of an upload, from the service and from the file each. */
export const ERRORS_SHOWN_MAX = 10;
/** Hex characters of the chunk name prefix's hash in an idempotency key. */
const KEY_HASH_CHARS = 24;

/** A failed record located in the file, kept for the summary. */
interface FailedLine {
  at: number;
  line: string;
}

/** What an upload has come to so far, for its progress and its summary. */
export interface UploadState {
  stats: UploadStats;
  /** Records the service reported invalid (from the chunk answers of this run). */
  invalid: number;
  /** The first failed records by place in the file, at most ERRORS_SHOWN_MAX. */
  firstFailed: FailedLine[];
  /** Input that could not be sent, as `where: reason`, in file order. */
  unsent: string[];
  unsentCount: number;
  /** Chunks refused whole (an invalid record, no --partial) and their valid records. */
  refusedChunks: number;
  validNotStored: number;
  /** Chunks the service answered from an earlier request (a retry, or an earlier run). */
  replayed: number;
}

/** The state of an upload that has sent nothing yet, of a file of `fileBytesTotal` bytes. */
export function newUploadState(fileBytesTotal: number): UploadState {
  return {
    stats: {
      recordsSent: 0,
      recordsFailed: 0,
      chunksSent: 0,
      bytesSent: 0,
      fileBytesDone: 0,
      fileBytesTotal,
      retries: 0,
    },
    invalid: 0,
    firstFailed: [],
    unsent: [],
    unsentCount: 0,
    refusedChunks: 0,
    validNotStored: 0,
    replayed: 0,
  };
}

/** Keeps `failed` among the first ERRORS_SHOWN_MAX failed records by place. */
function noteFailed(state: UploadState, failed: FailedLine): void {
  const list = state.firstFailed;
  if (list.length >= ERRORS_SHOWN_MAX && (list.at(-1)?.at ?? 0) < failed.at) return;
  list.push(failed);
  list.sort((a, b) => a.at - b.at);
  if (list.length > ERRORS_SHOWN_MAX) list.pop();
}

/** The chunks of the file, in order; invalid input is counted in `state` and skipped. */
export async function* chunksOf(
  items: AsyncIterable<SourceItem>,
  builder: ChunkBuilder,
  state: UploadState,
  fileBytesRead: () => number,
): AsyncGenerator<Chunk & { fileBytes: number }> {
  const reject = (place: Place, message: string) => {
    state.unsentCount += 1;
    state.stats.recordsFailed += 1;
    if (state.unsent.length < ERRORS_SHOWN_MAX) state.unsent.push(`${place.where}: ${message}`);
  };
  for await (const item of items) {
    if (item.kind === 'invalid') {
      reject(item.place, item.message);
      continue;
    }
    let chunk: Chunk | undefined;
    try {
      chunk = builder.add(item.text, item.place);
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      reject(item.place, error.message);
      continue;
    }
    if (chunk !== undefined) yield { ...chunk, fileBytes: fileBytesRead() };
  }
  const last = builder.finish();
  if (last !== undefined) yield { ...last, fileBytes: fileBytesRead() };
}

/**
 * The idempotency key of a chunk: the same for the same chunk of the same file (name prefix and
 * chunk number), so that sending a file again to the same session stores none of its chunks
 * twice. A refused chunk sent again with --partial needs a key of its own, since its first key
 * would replay the refusal. Keys are scoped to their session by the service.
 */
function chunkKeyOf(namePrefix: string, chunkNo: number, partialRetry: boolean): string {
  const hash = createHash('sha256').update(namePrefix).digest('hex').slice(0, KEY_HASH_CHARS);
  return `${hash}-${chunkNo}${partialRetry ? '-partial' : ''}`;
}

async function postChunk(
  client: ApiClient,
  ingestionId: string,
  chunk: Chunk,
  namePrefix: string,
  partial: boolean,
  partialRetry: boolean,
) {
  try {
    return await client.request({
      method: 'POST',
      path: sessionPathOf(ingestionId),
      query: partial ? { partial: 'true' } : undefined,
      body: chunk.body,
      idempotencyKey: chunkKeyOf(namePrefix, chunk.no, partialRetry),
      accept: [400],
    });
  } catch (error) {
    if (error instanceof ApiError && error.status === 422) {
      throw new ApiError(
        `${error.message}\nchunk ${chunk.no} (${chunk.name}) differs from the chunk of that name sent to this session before: ` +
          'send a changed file under another name (or --name), or to a new session',
        error.status,
        error.body,
      );
    }
    throw error;
  }
}

async function sendChunk(
  client: ApiClient,
  ingestionId: string,
  chunk: Chunk,
  namePrefix: string,
  partial: boolean,
  state: UploadState,
): Promise<void> {
  let response = await postChunk(client, ingestionId, chunk, namePrefix, partial, false);
  const replayed = response.headers.get('idempotent-replayed') === 'true';
  if (response.status === 400 && replayed && partial) {
    // Refused whole by an earlier run without --partial: sent again under a key of its own, its
    // valid records are stored now, for the first time; no earlier answer stands for it.
    response = await postChunk(client, ingestionId, chunk, namePrefix, true, true);
  } else if (replayed) state.replayed += 1;
  let errors: Static<typeof ChunkAccepted>['errors'];
  let errorsOmitted: number;
  if (response.status === 400) {
    // Only an atomic chunk refused for its records is data; any other 400 (not JSON, no
    // failed records) means this client is wrong, and the upload stops.
    if (!matches(ChunkRefused, response.body)) {
      throw new ApiError(
        `chunk ${chunk.no} (${chunk.name}) was refused:\n${JSON.stringify(response.body ?? {})}`,
        400,
        response.body,
      );
    }
    errors = response.body.errors;
    errorsOmitted = response.body.errorsOmitted ?? 0;
    state.stats.recordsFailed += chunk.records;
    state.refusedChunks += 1;
    state.validNotStored += chunk.records - errors.length - errorsOmitted;
  } else {
    const accepted = answerOf(`POST ${sessionPathOf(ingestionId)}`, ChunkAccepted, response.body);
    errors = accepted.errors;
    errorsOmitted = accepted.errorsOmitted ?? 0;
    state.stats.recordsFailed += accepted.failedRows;
  }
  state.invalid += errors.length + errorsOmitted;
  for (const entry of errors) {
    const place = chunk.places[entry.index];
    // A place is always known for an index the chunk has; the fallback names the chunk.
    const where = place?.where ?? `chunk ${chunk.no}, index ${entry.index}`;
    noteFailed(state, { at: place?.at ?? Number.MAX_SAFE_INTEGER, line: failedRecordLine(where, entry) });
  }
  state.stats.recordsSent += chunk.records;
  state.stats.chunksSent += 1;
  state.stats.bytesSent += chunk.bytes;
}

/** Sends every chunk over `parallel` connections; the first fatal error stops the reading. */
export async function upload(
  client: ApiClient,
  ingestionId: string,
  chunks: AsyncGenerator<Chunk & { fileBytes: number }>,
  namePrefix: string,
  options: { parallel: number; partial: boolean },
  state: UploadState,
  progress: ProgressReporter,
): Promise<void> {
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (failure === undefined) {
      try {
        const next = await chunks.next();
        if (next.done === true) return;
        await sendChunk(client, ingestionId, next.value, namePrefix, options.partial, state);
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
