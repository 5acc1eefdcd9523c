import type { RecordValidator } from '../entities/record-validator.js';
import { validateChunk } from '../entities/record-validator.js';
import {
  FAILED_RECORD_ERRORS_BYTES_MAX,
  FAILED_RECORD_KEPT_BYTES_MAX,
  parseChunkBody,
  SESSION_ERRORS_KEPT_MAX,
} from './chunk-body.js';
import type { FailedRecord, FieldErrorView } from './store.js';
import { type AcceptedRecords, acceptedRecordsOf } from './store.js';

/** A chunk parsed and validated: its records ready to store, serialised, and its failures. */
export interface ValidatedChunk {
  chunkName: string | null;
  totalRows: number;
  accepted: AcceptedRecords;
  /**
   * The first {@link SESSION_ERRORS_KEPT_MAX} failed records (as many as the session's error
   * list could take of one chunk), each as an answer lists it ({@link listedFailure}).
   */
  failed: FailedRecord[];
  /** The same failed records, each as the session's error list keeps it ({@link keptFailure}). */
  kept: FailedRecord[];
  /** Every failed record, listed or not. */
  failedCount: number;
}

/** The size of a text as the stores keep it, in UTF-8. */
function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * At most the UTF-8 bytes of a text written as a JSON string: 6 per UTF-16 unit (the escape of a
 * control character, `\u001f`; no other unit takes more than 3), and the quotes.
 */
function jsonTextBytesAtMost(text: string): number {
  return 6 * text.length + 2;
}

/** The punctuation of an error's JSON around its three texts: `{"field":,"code":,"message":}`. */
const ERROR_JSON_PUNCTUATION_BYTES = 29;

/**
 * At most the UTF-8 bytes of the JSON of a list of errors, without serialising it: enough to
 * tell that the usual few errors of a record fit, so that 5,000 failed records of a chunk cost
 * no serialisation here (the store serialises what it keeps once).
 */
function errorsBytesAtMost(errors: readonly FieldErrorView[]): number {
  let bytes = 2;
  for (const error of errors) {
    bytes +=
      ERROR_JSON_PUNCTUATION_BYTES +
      jsonTextBytesAtMost(error.field) +
      jsonTextBytesAtMost(error.code) +
      jsonTextBytesAtMost(error.message) +
      1;
  }
  return bytes;
}

/**
 * A failed record as a chunk's answer lists it: the record as sent, and its first errors while
 * their JSON takes at most {@link FAILED_RECORD_ERRORS_BYTES_MAX} bytes, then, when some were
 * left out, one `too-many-errors` error (field `''`) that counts them. Past the bound the errors
 * are measured one by one and no further, so a record of 85,000 unknown members costs no more
 * than one of a hundred.
 */
export function listedFailure(failed: FailedRecord): FailedRecord {
  if (errorsBytesAtMost(failed.errors) <= FAILED_RECORD_ERRORS_BYTES_MAX) return failed;
  // The brackets of the list, then each error with the comma that follows it.
  let bytes = 2;
  let listed = 0;
  for (const error of failed.errors) {
    const size = utf8Bytes(JSON.stringify(error)) + 1;
    if (bytes + size > FAILED_RECORD_ERRORS_BYTES_MAX) break;
    bytes += size;
    listed += 1;
  }
  if (listed === failed.errors.length) return failed;
  const left = failed.errors.length - listed;
  const note = {
    field: '',
    code: 'too-many-errors',
    message: `The record has ${left.toLocaleString('en-US')} more errors; only the first ${listed.toLocaleString('en-US')} are listed (at most ${FAILED_RECORD_ERRORS_BYTES_MAX.toLocaleString('en-US')} bytes of them).`,
  };
  return { index: failed.index, record: failed.record, errors: [...failed.errors.slice(0, listed), note] };
}

/**
 * A failed record as the session's error list keeps it: as listed ({@link listedFailure}), but
 * when the JSON of the record and its errors takes more than
 * {@link FAILED_RECORD_KEPT_BYTES_MAX} bytes, the record is kept as `null` with one more error,
 * `record-too-large` (field `''`), which gives its size. A kept row so takes a bounded number
 * of bytes whatever was sent, and a session keeps a bounded number of rows.
 */
export function keptFailure(listed: FailedRecord): FailedRecord {
  // A listed record is a parsed JSON value nesting at most RECORD_NESTING_DEPTH_MAX levels
  // (deeper ones are listed as null), so it serialises without fail.
  const recordBytes = utf8Bytes(JSON.stringify(listed.record) ?? 'null');
  if (recordBytes + errorsBytesAtMost(listed.errors) <= FAILED_RECORD_KEPT_BYTES_MAX) return listed;
  if (recordBytes + utf8Bytes(JSON.stringify(listed.errors)) <= FAILED_RECORD_KEPT_BYTES_MAX) return listed;
  const note = {
    field: '',
    code: 'record-too-large',
    message: `The record takes ${recordBytes.toLocaleString('en-US')} bytes as JSON, more than the error list keeps of a failed record with its errors (${FAILED_RECORD_KEPT_BYTES_MAX.toLocaleString('en-US')}); it is not repeated here.`,
  };
  return { index: listed.index, record: null, errors: [...listed.errors, note] };
}

/**
 * Parses a chunk body, validates every record with the entity's compiled validator and
 * serialises the converted records, keeping the first failed records only, as an answer lists
 * them and as the session's error list keeps them: all the CPU work of a chunk, with no I/O, so
 * that it can run on a worker thread (ADR 0010). Errors: `malformed-json`, `validation-failed`
 * (AppError).
 */
export function validateChunkBody(raw: Uint8Array, validator: RecordValidator): ValidatedChunk {
  const chunk = parseChunkBody(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength));
  const { accepted, failed, failedCount } = validateChunk(validator, chunk.data, SESSION_ERRORS_KEPT_MAX);
  const listed = failed.map(listedFailure);
  return {
    chunkName: chunk.chunkName,
    totalRows: chunk.data.length,
    accepted: acceptedRecordsOf(accepted),
    failed: listed,
    kept: listed.map(keptFailure),
    failedCount,
  };
}
