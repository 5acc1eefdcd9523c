/**
 * The store's errors and the classification of the transient ones: what http may import from
 * storage besides the `Store` type (`storage/store.ts`).
 */

/**
 * The store cannot be reached, opened or created. Its message is one line that says what is
 * wrong and what to do, with no password and no stack, for start-up to print as it is.
 */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/**
 * Error codes of faults that may pass, so the same work may succeed when tried again: a
 * serialization failure or deadlock (PostgreSQL `40001`, `40P01`), a lock not available
 * (`55P03`), a unique violation on PostgreSQL (`23505`: a concurrent writer won, and the next
 * attempt sees its rows), SQLite's lock held too long (`SQLITE_BUSY`, `SQLITE_LOCKED`). On
 * SQLite one writer holds the lock at a time, so a unique violation there is no race and is
 * not retried.
 */
const RETRYABLE_ERROR_CODES: ReadonlySet<string> = new Set([
  '40001',
  '40P01',
  '55P03',
  '23505',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
]);

/** Whether work that failed with `error` may succeed when tried again: the store was unreachable, or one of RETRYABLE_ERROR_CODES. */
export function isRetryableStoreError(error: unknown): boolean {
  if (error instanceof StoreUnavailableError) return true;
  const code = errorCodeOf(error);
  return code !== undefined && RETRYABLE_ERROR_CODES.has(code);
}

/** The `code` of a driver error (a SQLSTATE, a SQLite result code or a Node socket code), if it has one. */
export function errorCodeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

/** The first line of an error's message, for a one-line `StoreUnavailableError`. */
export function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}
