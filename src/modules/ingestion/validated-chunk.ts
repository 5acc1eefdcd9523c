import type { RecordValidator } from '../entities/record-validator.js';
import { validateChunk } from '../entities/record-validator.js';
import { CHUNK_ERRORS_KEPT_MAX, parseChunkBody } from './chunk-body.js';
import type { FailedRecord } from './store.js';
import { type AcceptedRecords, acceptedRecordsOf } from './store.js';

/** A chunk parsed and validated: its records ready to store, serialised, and its failures. */
export interface ValidatedChunk {
  chunkName: string | null;
  totalRows: number;
  accepted: AcceptedRecords;
  /** The first {@link CHUNK_ERRORS_KEPT_MAX} failed records. */
  failed: FailedRecord[];
  /** Every failed record, listed or not. */
  failedCount: number;
}

/**
 * Parses a chunk body, validates every record with the entity's compiled validator and
 * serialises the converted records, keeping the first failed records only: all the CPU work of a chunk, with no I/O, so that it can
 * run on a worker thread (ADR 0010). Errors: `malformed-json`, `validation-failed` (AppError).
 */
export function validateChunkBody(raw: Uint8Array, validator: RecordValidator): ValidatedChunk {
  const chunk = parseChunkBody(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength));
  const { accepted, failed, failedCount } = validateChunk(validator, chunk.data, CHUNK_ERRORS_KEPT_MAX);
  return {
    chunkName: chunk.chunkName,
    totalRows: chunk.data.length,
    accepted: acceptedRecordsOf(accepted),
    failed,
    failedCount,
  };
}
