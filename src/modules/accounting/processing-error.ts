import { storableTextOf } from '../../lib/storable-text.js';

/**
 * The processing errors of the accounting core (docs/domain/accounting.md, Processing errors). A
 * record that produces no journal is recorded with one of these codes and a message that names the
 * configuration item or field at fault. Codes name the rule that was broken and are stable once
 * published; they are listed in the order the engine checks them, so the first rule a record breaks
 * is the one reported.
 */

/** Every processing error code, in check order. */
export const PROCESSING_ERROR_CODES = [
  // Records of an entity a flow reads, before their business event reaches the engine
  // (docs/reference.md, Flows).
  'script-error',
  'script-timeout',
  'script-memory',
  'script-output',
  'invalid-business-event',
  // Business events and direct journal lines.
  'missing-field',
  'unknown-event-type',
  'unknown-node',
  'unknown-posting-component',
  'unknown-accounting-config',
  'accounting-config-not-assigned',
  'unknown-journal-type',
  'invalid-time-zone',
  'invalid-amount',
  'zero-amount',
  'invalid-currency',
  'invalid-date',
  'no-account',
  'inconsistent-journal',
  'journal-split-across-chunks',
  'duplicate-origin-journal',
  'too-many-lines',
  'no-journal',
  'unbalanced',
  'closed-period',
  // Rollback records (docs/domain/accounting.md, Rollback of business events): no identical event
  // was processed, or every identical one is rolled back already.
  'rollback-target-not-found',
  'already-rolled-back',
  // Not a rule of the engine: whatever else stopped the processing of the record's chunk (a
  // store error, a bug), recorded by the processor so that the chunk ends processed.
  'processing-failed',
] as const;

/** A stable, rule-named processing error code. */
export type ProcessingErrorCode = (typeof PROCESSING_ERROR_CODES)[number];

/** Why a record produced no journal. */
export interface ProcessingError {
  code: ProcessingErrorCode;
  /** Names the configuration item or field at fault, for a person to act on. */
  message: string;
}

/** A processing error value (a tiny constructor so call sites read as the rule they enforce). */
export function processingError(code: ProcessingErrorCode, message: string): ProcessingError {
  return { code, message };
}

/** Characters of an error's own message kept in a `processing-failed` message or log line. */
const PROCESSING_FAILURE_DETAIL_LENGTH_MAX_CHARS = 300;

/** The credentials of a URL (`scheme://user:password@`), which an error message may quote. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@]*@/gi;

/**
 * What an error says of itself, fit to store and to log: its name and message, without the
 * credentials of any URL it quotes, cut to PROCESSING_FAILURE_DETAIL_LENGTH_MAX_CHARS and made
 * storable (src/lib/storable-text.ts), so that recording it cannot fail the way the processing did.
 */
export function failureDetailOf(error: unknown): string {
  const raw = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const redacted = raw.replace(URL_CREDENTIALS, '$1[redacted]@');
  const detail =
    redacted.length > PROCESSING_FAILURE_DETAIL_LENGTH_MAX_CHARS
      ? `${redacted.slice(0, PROCESSING_FAILURE_DETAIL_LENGTH_MAX_CHARS)}…`
      : redacted;
  return storableTextOf(detail);
}

/** The `processing-failed` error of the records of a chunk whose processing threw. */
export function processingFailedError(error: unknown): ProcessingError {
  return processingError(
    'processing-failed',
    `The record's chunk could not be processed and was recorded as failed (${failureDetailOf(error)}); send the records again in a new session once the cause is fixed.`,
  );
}
