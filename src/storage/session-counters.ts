/**
 * The session counters (migration 0016): sessions per UTC day of `opened_on`
 * (`session_day_counts`: sessions, closed, expired, chunks, API calls, rows) and per namespace
 * and entity (`session_entity_counts`: sessions, closed, expired). Together with the sessions not
 * yet counted, they equal a full count of the sessions at every instant.
 *
 * A session is counted once, when its state can no longer change: in the transaction that
 * closes it, or, for a session that expired without being closed, by the sweep
 * (`sweepEndedSessions`, run periodically beside the processor). Both set `ingestions.counted`
 * with a conditional update (`counted = 0`) in the same transaction as the counter upsert, so a
 * session is counted exactly once, whichever instance gets there first. Until then the session
 * is read from its own row through the partial index `ingestions_uncounted`, which holds only
 * the open sessions and the expired ones not yet swept, so the reads stay small. Nothing adds to
 * a counter row on the chunk path while a session is open: 64 clients writing chunks would
 * otherwise wait on the same day's row until each commit.
 *
 * What can still change once a session is counted: a chunk whose request arrived while the
 * session was open is admitted after the close or expiry (`sessionWasOpenAt`), and adds its call,
 * chunk and rows to the session row. Those late writes add the same numbers to the day counter
 * in their own transaction (`countLateSessionWork`); they are rare, so this is no hot row.
 * Processing numbers (`processed_rows`, `processing_failed_rows`) are not counted here. A counted
 * session's state is final: the close and the touch leave a counted session as it is, so an
 * instance whose clock is behind the sweep's cannot reopen or close a session counted as expired.
 *
 * The counters are taken after every other lock of their transaction (the session row, then the
 * entity record counters), day before entity, as `statistics-counters.ts` orders its own.
 */
import {
  type ExpressionBuilder,
  type Kysely,
  type QueryCreator,
  type Selectable,
  type SelectQueryBuilder,
  sql,
  type Transaction,
} from 'kysely';
import type { SessionFilter } from '../modules/ingestion/store.js';
import { counterStripe } from './counter-stripes.js';
import { reportSessionEnded } from './events/session-events.js';
import type { Database } from './schema.js';
import type { IngestionsTable } from './tables/ingestion.js';

/** The ended sessions a sweep reads at once; it reads again until none is left. */
export const SESSION_SWEEP_BATCH_MAX = 500;

/** The numbers of one session row that the counters sum. */
type CountedSession = Pick<
  Selectable<IngestionsTable>,
  | 'ingestion_id'
  | 'opened_on'
  | 'namespace'
  | 'entity'
  | 'state'
  | 'chunks'
  | 'api_calls'
  | 'total_rows'
  | 'success_rows'
  | 'failed_rows'
>;

/** The columns `countSession` needs, for the `returning` of the update that marks it counted. */
export const COUNTED_COLUMNS = [
  'ingestion_id',
  'opened_on',
  'namespace',
  'entity',
  'state',
  'chunks',
  'api_calls',
  'total_rows',
  'success_rows',
  'failed_rows',
] as const;

/**
 * Adds one session, just marked counted by the caller's conditional update in `trx`, to its day
 * and entity counters: as closed when stored closed, else as expired.
 */
export async function countSession(trx: Transaction<Database>, row: CountedSession): Promise<void> {
  const closed = row.state === 'closed' ? 1 : 0;
  const stripe = counterStripe(row.ingestion_id);
  await trx
    .insertInto('session_day_counts')
    .values({
      day: row.opened_on.slice(0, 10),
      stripe,
      sessions: 1,
      closed,
      expired: 1 - closed,
      chunks: Number(row.chunks),
      api_calls: Number(row.api_calls),
      total_rows: Number(row.total_rows),
      success_rows: Number(row.success_rows),
      failed_rows: Number(row.failed_rows),
    })
    .onConflict((oc) =>
      oc.columns(['day', 'stripe']).doUpdateSet({
        sessions: sql`session_day_counts.sessions + excluded.sessions`,
        closed: sql`session_day_counts.closed + excluded.closed`,
        expired: sql`session_day_counts.expired + excluded.expired`,
        chunks: sql`session_day_counts.chunks + excluded.chunks`,
        api_calls: sql`session_day_counts.api_calls + excluded.api_calls`,
        total_rows: sql`session_day_counts.total_rows + excluded.total_rows`,
        success_rows: sql`session_day_counts.success_rows + excluded.success_rows`,
        failed_rows: sql`session_day_counts.failed_rows + excluded.failed_rows`,
      }),
    )
    .execute();
  await trx
    .insertInto('session_entity_counts')
    .values({
      namespace: row.namespace,
      entity: row.entity,
      stripe,
      sessions: 1,
      closed,
      expired: 1 - closed,
    })
    .onConflict((oc) =>
      oc.columns(['namespace', 'entity', 'stripe']).doUpdateSet({
        sessions: sql`session_entity_counts.sessions + excluded.sessions`,
        closed: sql`session_entity_counts.closed + excluded.closed`,
        expired: sql`session_entity_counts.expired + excluded.expired`,
      }),
    )
    .execute();
}

/** What a late request adds to a session already counted. */
export interface LateSessionWork {
  chunks: number;
  apiCalls: number;
  totalRows: number;
  successRows: number;
  failedRows: number;
}

/** No work: the base of a late request that adds only some of it. */
export const NO_WORK: LateSessionWork = {
  chunks: 0,
  apiCalls: 0,
  totalRows: 0,
  successRows: 0,
  failedRows: 0,
};

/**
 * The update that adds a late request's work to the day counters of its session's stripe, for
 * the caller to narrow to the session's day: alone (`countLateSessionWork`) or inside a statement
 * that has just updated the session row (`touchSession` and the chunk's write on PostgreSQL).
 */
export function lateSessionWorkUpdate(
  qc: QueryCreator<Database>,
  ingestionId: string,
  work: LateSessionWork,
) {
  return qc
    .updateTable('session_day_counts')
    .set((eb) => ({
      chunks: eb('chunks', '+', work.chunks),
      api_calls: eb('api_calls', '+', work.apiCalls),
      total_rows: eb('total_rows', '+', work.totalRows),
      success_rows: eb('success_rows', '+', work.successRows),
      failed_rows: eb('failed_rows', '+', work.failedRows),
    }))
    .where('stripe', '=', counterStripe(ingestionId));
}

/**
 * Adds a late request's work to the day counter of a session already counted (its id and
 * `opened_on`), in the transaction that added it to the session row, after that update.
 */
export async function countLateSessionWork(
  trx: Transaction<Database>,
  session: { ingestion_id: string; opened_on: string },
  work: LateSessionWork,
): Promise<void> {
  await lateSessionWorkUpdate(trx, session.ingestion_id, work)
    .where('day', '=', session.opened_on.slice(0, 10))
    .execute();
}

/**
 * Counts the sessions that have ended (closed, or expired at `nowMs`) and are not counted yet,
 * each in a transaction of its own, a batch of `SESSION_SWEEP_BATCH_MAX` at a time until none is
 * left (after an upgrade, or a long stop, many may wait); returns how many it counted. Any number
 * of sweeps may run at once, on any number of instances: the conditional update lets exactly one
 * count each session, and one session per transaction keeps the row locks of two sweeps from
 * crossing.
 */
export async function sweepEndedSessions(db: Kysely<Database>, nowMs: number): Promise<number> {
  const ended = (eb: ExpressionBuilder<Database, 'ingestions'>) =>
    eb.or([eb('state', '=', 'closed'), eb('expires_at_ms', '<=', nowMs)]);
  let counted = 0;
  for (;;) {
    const batch = await db
      .selectFrom('ingestions')
      .where('counted', '=', sql.lit(0))
      .where(ended)
      .select('ingestion_id')
      .limit(SESSION_SWEEP_BATCH_MAX)
      .execute();
    for (const { ingestion_id: id } of batch) {
      const done = await db.transaction().execute(async (trx) => {
        const row = await trx
          .updateTable('ingestions')
          .set({ counted: 1 })
          .where('ingestion_id', '=', id)
          .where('counted', '=', 0)
          .where(ended)
          .returning([...COUNTED_COLUMNS, 'ingestion_name', 'expires_at_ms'])
          .executeTakeFirst();
        if (row === undefined) return false;
        await countSession(trx, row);
        // A session the close did not count expired: its end is reported here, once.
        if (row.state !== 'closed')
          await reportSessionEnded(
            trx,
            row,
            { expiredOn: new Date(Number(row.expires_at_ms)).toISOString() },
            nowMs,
          );
        return true;
      });
      if (done) counted += 1;
    }
    if (batch.length < SESSION_SWEEP_BATCH_MAX) return counted;
  }
}

/**
 * The number of sessions `filter` selects: the entity counters of the sessions counted (a
 * counted session is closed or expired, never pending), and the sessions not counted yet among
 * `matching` (the sessions `filter` selects, state included), on `ingestions_uncounted`. One
 * statement, so a session counted meanwhile is seen exactly once.
 */
export async function countSessionsMatching(
  db: Kysely<Database>,
  filter: SessionFilter,
  matching: SelectQueryBuilder<Database, 'ingestions', object>,
): Promise<number> {
  const uncounted = matching.where('counted', '=', sql.lit(0)).select(sql<number>`count(*)`.as('n'));
  const column =
    filter.state === undefined ? 'sessions' : filter.state === 'pending' ? undefined : filter.state;
  let parts = uncounted;
  if (column !== undefined) {
    let counters = db.selectFrom('session_entity_counts');
    if (filter.namespace !== undefined) counters = counters.where('namespace', '=', filter.namespace);
    if (filter.entity !== undefined) counters = counters.where('entity', '=', filter.entity);
    parts = parts.unionAll(counters.select(sql<number>`coalesce(sum(${sql.ref(column)}), 0)`.as('n')));
  }
  const row = await db
    .selectFrom(parts.as('parts'))
    .select(sql<number | string>`sum(n)`.as('total'))
    .executeTakeFirstOrThrow();
  return Number(row.total ?? 0);
}

/** Deletes the session counters: the configuration wipe deletes every session they count. */
export async function clearSessionCounters(trx: Transaction<Database>): Promise<void> {
  await trx.deleteFrom('session_day_counts').execute();
  await trx.deleteFrom('session_entity_counts').execute();
}
