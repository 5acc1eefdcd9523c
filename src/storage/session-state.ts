import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { SessionState } from '../modules/ingestion/store.js';
import type { Database } from './schema.js';

/**
 * The SQL twin of `stateAt` (`modules/ingestion/session.ts`): true for the session rows that are
 * in `state` at `nowMs`. A session is `expired` when it is stored `pending` and its deadline
 * `expires_at_ms` is not after `nowMs`; every query that filters or counts sessions by state
 * (list, statistics, the guards of touch and close) uses this one expression.
 */
export function sessionStateIs(
  eb: ExpressionBuilder<Database, 'ingestions'>,
  state: SessionState,
  nowMs: number,
): Expression<SqlBool> {
  switch (state) {
    case 'closed':
      return eb('state', '=', 'closed');
    case 'pending':
      return eb.and([eb('state', '=', 'pending'), eb('expires_at_ms', '>', nowMs)]);
    case 'expired':
      return eb.and([eb('state', '=', 'pending'), eb('expires_at_ms', '<=', nowMs)]);
  }
}

/**
 * True for the session rows that were open (pending and not expired) at `atMs`, the arrival of
 * a request, whatever they are now: still pending with a deadline after that instant (a request
 * that arrived before the deadline counts, even if the deadline has passed since), or closed by
 * hand after it (`closed_on`, RFC 3339 UTC text with milliseconds, sorts as time). A session that
 * had expired before `atMs` can have been closed only before it too, as expiry is final.
 */
export function sessionWasOpenAt(
  eb: ExpressionBuilder<Database, 'ingestions'>,
  atMs: number,
): Expression<SqlBool> {
  return eb.or([
    eb.and([eb('state', '=', 'pending'), eb('expires_at_ms', '>', atMs)]),
    eb.and([eb('state', '=', 'closed'), eb('closed_on', '>', new Date(atMs).toISOString())]),
  ]);
}
