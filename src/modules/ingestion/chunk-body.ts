import { AppError } from '../../lib/errors.js';
import { isStorableText } from '../../lib/storable-text.js';

/** A chunk as sent: at most 1 MiB of JSON (docs/reference.md, Chunks). */
export const CHUNK_BODY_BYTES_MAX = 1024 * 1024;
export const CHUNK_NAME_LENGTH_MAX = 200;
/** Records one chunk may carry. 1 MiB of real records is a few thousand. */
export const CHUNK_RECORDS_MAX = 20_000;
/**
 * Failed records a chunk's answer lists: the first ones, in chunk order; the answer counts the
 * rest. Without it 20,000 empty records in 60 KB answered with 12 MB.
 */
export const CHUNK_ERRORS_SHOWN_MAX = 100;
/**
 * Failed records of one chunk kept for the session's error list (`GET …/errors`), the first
 * ones in chunk order, so that those the answer leaves out can still be read; the rest are only
 * counted. More records than 1 MiB of real records holds (about 4,000 of the loan records of
 * the tests); a chunk of 20,000 empty records, which all fail, stores this many error rows
 * (0.2-0.4 s more than keeping 100, SQLite and PostgreSQL, on a loaded two-core machine).
 */
export const CHUNK_ERRORS_KEPT_MAX = 5_000;

export interface ChunkBody {
  chunkName: string | null;
  data: unknown[];
}

/**
 * Parses a chunk body: JSON with a `data` array and an optional `chunkName` string (storable
 * text, src/lib/storable-text.ts), nothing else. Errors: `malformed-json` (not JSON) and `validation-failed` (wrong shape), each naming
 * the member at fault.
 */
export function parseChunkBody(raw: Buffer | string): ChunkBody {
  let body: unknown;
  try {
    body = JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8'));
  } catch (error) {
    throw new AppError('malformed-json', `the body is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid('', 'must be a JSON object with a data array');
  }
  const errors: { path: string; message: string }[] = [];
  const record = body as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (key !== 'data' && key !== 'chunkName')
      errors.push({ path: `/${key}`, message: 'is not a known member' });
  }
  if (!Array.isArray(record.data)) {
    errors.push({ path: '/data', message: record.data === undefined ? 'is required' : 'must be an array' });
  } else if (record.data.length > CHUNK_RECORDS_MAX) {
    errors.push({
      path: '/data',
      message: `must have at most ${CHUNK_RECORDS_MAX.toLocaleString('en-US')} records per chunk (it has ${record.data.length.toLocaleString('en-US')}); split the data over more chunks`,
    });
  }
  const name = record.chunkName;
  if (
    name !== undefined &&
    name !== null &&
    (typeof name !== 'string' || name.length > CHUNK_NAME_LENGTH_MAX)
  ) {
    errors.push({
      path: '/chunkName',
      message: `must be a string of at most ${CHUNK_NAME_LENGTH_MAX} characters`,
    });
  } else if (typeof name === 'string' && !isStorableText(name)) {
    // The name is stored with the chunk; the nul guard of other bodies does not read this one.
    errors.push({
      path: '/chunkName',
      message: 'must not contain NUL characters or unpaired UTF-16 surrogates',
    });
  }
  if (errors.length > 0) {
    const first = errors[0];
    throw new AppError('validation-failed', `the chunk ${first?.path} ${first?.message}`, { errors });
  }
  return { chunkName: typeof name === 'string' ? name : null, data: record.data as unknown[] };
}

function invalid(path: string, message: string): AppError {
  return new AppError('validation-failed', `the chunk ${message}`, { errors: [{ path, message }] });
}
