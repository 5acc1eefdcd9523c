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
