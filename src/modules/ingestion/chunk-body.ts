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
 * Failed records a session keeps for its error list (`GET …/errors`): the session's first ones,
 * in the order their chunks were written, stored or rejected; the others are only counted. Per
 * session, not per chunk: when each chunk kept its first 5,000, a client sending a rejected
 * 60 KB chunk of 20,000 empty records again and again added 5.5 MB to the store each time
 * (55 MB for ten, SQLite and PostgreSQL alike). As many as 1 MiB of real records holds (about
 * 4,000 of the loan records of the tests), so every failure of a session's first full chunk
 * can be read beyond the first {@link CHUNK_ERRORS_SHOWN_MAX} its answer lists.
 */
export const SESSION_ERRORS_KEPT_MAX = 5_000;
/**
 * Bytes of JSON the errors of one failed record take at most where a chunk's answer lists it
 * and where the session's error list keeps it; the errors past them are counted in one last
 * `too-many-errors` error. An error is written per unknown member of a record, with its name
 * twice: before the bound, a 0.9 MB chunk of one record of 85,000 short unknown members was
 * answered with 11.4 MB and grew the store by 22.9 MB. 8 KiB lists about 90 errors of
 * mandatory fields missing.
 */
export const FAILED_RECORD_ERRORS_BYTES_MAX = 8 * 1024;
/**
 * Bytes of JSON a failed record kept in a session's error list takes at most, the record as
 * sent and its errors (a row of the list); a larger one is kept without the record, which a
 * `record-too-large` error says. Together with {@link SESSION_ERRORS_KEPT_MAX} it bounds what
 * a session's failed records take in the store whatever their shape, about 40 MiB at worst; a
 * real record is a few hundred bytes. A chunk's answer lists its records as sent whatever
 * their size: the body bounds them.
 */
export const FAILED_RECORD_KEPT_BYTES_MAX = 8 * 1024;

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
