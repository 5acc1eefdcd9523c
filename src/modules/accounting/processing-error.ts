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
