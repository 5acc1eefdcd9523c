import { errorCodeOf, messageOf, StoreUnavailableError } from '../errors.js';

/** SQLSTATEs that say the server is going away, refuses connections, or gave up waiting. */
const SERVER_UNAVAILABLE_STATES = new Set([
  '57P01', // admin_shutdown: terminated by an administrator or a fast shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or in recovery
  '53300', // too_many_connections
  '57014', // query_canceled: only our statement_timeout cancels statements
  '25P03', // idle_in_transaction_session_timeout
]);
/** Node socket error codes of a connection that cannot be made or was lost. */
const CONNECTION_LOST_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
/**
 * The messages of the errors node-postgres raises itself, without a code: a connection ended
 * or timed out, the pool waited too long, no answer within `query_timeout`, a client that
 * already failed.
 */
const DRIVER_UNAVAILABLE_MESSAGE =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Client was closed)/;

/** Whether a driver error means the store cannot be reached or did not answer in time. */
function isUnavailableError(error: unknown): boolean {
  const code = errorCodeOf(error);
  if (code !== undefined && (code.startsWith('08') || SERVER_UNAVAILABLE_STATES.has(code))) return true;
  if (code !== undefined && CONNECTION_LOST_CODES.has(code)) return true;
  return error instanceof Error && DRIVER_UNAVAILABLE_MESSAGE.test(error.message);
}

/** The error a query or a connection attempt fails with: unavailability as StoreUnavailableError. */
export function storeErrorOf(error: unknown): unknown {
  if (!isUnavailableError(error)) return error;
  return new StoreUnavailableError(
    `PostgreSQL is unreachable or did not answer in time (${messageOf(error)})`,
    { cause: error },
  );
}
