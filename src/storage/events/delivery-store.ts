/**
 * What the deliverer asks of the store (`modules/events/deliverer.ts`), in few and small
 * statements, so that on SQLite, whose calls hold the event loop, each is short:
 * - **fan-out**: events not fanned out yet become one delivery per subscription of their type,
 *   a batch of events per transaction; on PostgreSQL the events are locked `SKIP LOCKED`, so two
 *   instances fan out different events, and the unique key (subscription, event) makes a
 *   delivery at most once whatever happens.
 * - **claim**: one statement takes due deliveries under a lease, at most so many per
 *   subscription, on PostgreSQL skipping rows another instance is taking; the lease is also the
 *   next attempt's time, so a delivery whose instance died is due again when its lease ends.
 * - **settle**: the results of a batch of attempts in one transaction, each kept only while its
 *   attempt still holds the lease, so each attempt's result is written by the instance that made it.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { AttemptResult, ClaimedDelivery, EventStore } from '../../modules/events/store.js';
import type { Database } from '../schema.js';
import type { DialectAdapter, Store } from '../store.js';

/** Rows of the due index a claim reads before keeping at most so many per subscription. */
const CLAIM_WINDOW_FACTOR = 4;

/** The deliverer's part of the events adapter. */
export function createDeliveryStore(store: Store): Pick<EventStore, 'fanOut' | 'claim' | 'settle' | 'purge'> {
  const { db, adapter } = store;
  return {
    fanOut: (limit, at) => fanOut(db, adapter, limit, at),

    async claim(now, leaseUntil, limit, perSubscription, skipSubscriptions) {
      const claimed = await takeDue(db, adapter, now, leaseUntil, limit, perSubscription, skipSubscriptions);
      return claimed.length === 0 ? [] : claimedDeliveries(db, claimed, leaseUntil);
    },

    settle: (results) => settle(db, results),

    async purge(before) {
      const result = await db
        .deleteFrom('events')
        .where('occurred_at', '<', before)
        .where('fanned_out', '=', 1)
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('event_deliveries')
                .select('id')
                .whereRef('event_deliveries.event_seq', '=', 'events.seq')
                .where('event_deliveries.status', 'in', ['pending', 'delivering']),
            ),
          ),
        )
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

/** `EventStore.fanOut`: a batch of events not fanned out yet, in one transaction (see the header). */
async function fanOut(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  limit: number,
  at: string,
): Promise<number> {
  const { skipLocked } = adapter;
  return db.transaction().execute(async (trx) => {
    const { rows: events } = await sql<{ seq: number | string; type: string }>`
      select seq, type from events where fanned_out = 0 order by seq limit ${limit} ${skipLocked}
    `.execute(trx);
    if (events.length === 0) return 0;
    const subscriptions = await trx.selectFrom('event_subscriptions').select(['id', 'event_types']).execute();
    const wanted = subscriptions.map((s) => ({
      id: Number(s.id),
      types: new Set(JSON.parse(s.event_types) as string[]),
    }));
    const rows = events.flatMap((event) =>
      wanted
        .filter((s) => s.types.has(event.type))
        .map((s) => ({
          subscription_id: s.id,
          event_seq: Number(event.seq),
          status: 'pending' as const,
          attempts: 0,
          next_attempt_at: at,
          created_at: at,
        })),
    );
    if (rows.length > 0)
      await trx
        .insertInto('event_deliveries')
        .values(rows)
        .onConflict((oc) => oc.columns(['subscription_id', 'event_seq']).doNothing())
        .execute();
    await trx
      .updateTable('events')
      .set({ fanned_out: 1 })
      .where(
        'seq',
        'in',
        events.map((e) => Number(e.seq)),
      )
      .execute();
    return events.length;
  });
}

/** A delivery as `takeDue` took it. */
interface TakenDelivery {
  id: number | string;
  subscription_id: number | string;
  event_seq: number | string;
  attempts: number;
}

/** The claim's one statement (see the header): due deliveries taken under a lease until `leaseUntil`. */
async function takeDue(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  now: string,
  leaseUntil: string,
  limit: number,
  perSubscription: number,
  skipSubscriptions: readonly number[],
): Promise<TakenDelivery[]> {
  const { skipLocked } = adapter;
  const skip =
    skipSubscriptions.length === 0 ? sql`` : sql`and subscription_id not in (${sql.join(skipSubscriptions)})`;
  const { rows } = await sql<TakenDelivery>`
    update event_deliveries
    set status = 'delivering', lease_until = ${leaseUntil}, next_attempt_at = ${leaseUntil}, attempts = attempts + 1
    where id in (
      select id from (
        select id, row_number() over (partition by subscription_id order by next_attempt_at, id) as n
        from (
          select id, subscription_id, next_attempt_at from event_deliveries
          where status in ('pending', 'delivering') and next_attempt_at <= ${now}
            -- The unary plus keeps SQLite on the due index: by the subscription's index
            -- it read every delivery of a busy subscription, then sorted them.
            and +subscription_id in (select id from event_subscriptions where status = 'active')
            ${skip}
          order by next_attempt_at, id
          limit ${limit * CLAIM_WINDOW_FACTOR}
          ${skipLocked}
        ) due
      ) ranked
      where n <= ${perSubscription}
      order by id
      limit ${limit}
    )
    and status in ('pending', 'delivering') and next_attempt_at <= ${now}
    returning id, subscription_id, event_seq, attempts
  `.execute(db);
  return rows;
}

/** The `claimed` deliveries with their address and event, oldest first. */
async function claimedDeliveries(
  db: Kysely<Database>,
  claimed: readonly TakenDelivery[],
  leaseUntil: string,
): Promise<ClaimedDelivery[]> {
  const details = await db
    .selectFrom('event_deliveries as d')
    .innerJoin('events as e', 'e.seq', 'd.event_seq')
    .innerJoin('event_subscriptions as s', 's.id', 'd.subscription_id')
    .select(['d.id', 's.url', 'e.event_id', 'e.body'])
    .where(
      'd.id',
      'in',
      claimed.map((c) => Number(c.id)),
    )
    .execute();
  const byId = new Map(details.map((d) => [Number(d.id), d]));
  const out: ClaimedDelivery[] = [];
  // Oldest first, as they were claimed: first attempts start in the order events were recorded.
  for (const c of [...claimed].sort((a, b) => Number(a.id) - Number(b.id))) {
    const detail = byId.get(Number(c.id));
    if (detail === undefined) continue;
    out.push({
      id: Number(c.id),
      subscriptionId: Number(c.subscription_id),
      url: detail.url,
      eventId: detail.event_id,
      body: detail.body,
      attempts: Number(c.attempts) - 1,
      leaseUntil,
    });
  }
  return out;
}

/** `EventStore.settle`: the results whose attempt still holds its lease, then their subscriptions' flags, in one transaction. */
async function settle(db: Kysely<Database>, results: readonly AttemptResult[]): Promise<number> {
  if (results.length === 0) return 0;
  return db.transaction().execute(async (trx) => {
    let kept = 0;
    const cleared = new Set<number>();
    const flagged = new Map<number, AttemptResult>();
    for (const result of results) {
      const done = result.outcome !== 'retry';
      const updated = await trx
        .updateTable('event_deliveries')
        .set({
          status: result.outcome === 'retry' ? 'pending' : result.outcome,
          next_attempt_at: result.nextAttemptAt,
          lease_until: null,
          last_attempt_at: result.at,
          last_status_code: result.statusCode,
          last_error: result.error,
          last_response: result.response,
          last_duration_ms: result.durationMs,
          ...(result.outcome === 'delivered' ? { delivered_at: result.at } : {}),
        })
        .where('id', '=', result.id)
        .where('status', '=', 'delivering')
        .where('lease_until', '=', result.leaseUntil)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) continue;
      kept += 1;
      if (result.outcome === 'delivered') cleared.add(result.subscriptionId);
      else if (done) flagged.set(result.subscriptionId, result);
    }
    await flagSubscriptions(trx, cleared, flagged);
    return kept;
  });
}

/**
 * Inside `trx`: clears the flag of the `cleared` subscriptions (a delivery went through), then
 * flags each of `flagged` with the delivery that failed after its last attempt.
 */
async function flagSubscriptions(
  trx: Transaction<Database>,
  cleared: ReadonlySet<number>,
  flagged: ReadonlyMap<number, AttemptResult>,
): Promise<void> {
  if (cleared.size > 0)
    await trx
      .updateTable('event_subscriptions')
      .set({ flagged_at: null, flag_reason: null })
      .where('id', 'in', [...cleared])
      .where('flagged_at', 'is not', null)
      .execute();
  for (const [subscriptionId, result] of flagged)
    await trx
      .updateTable('event_subscriptions')
      .set({
        flagged_at: result.at,
        flag_reason: `delivery ${result.id} failed after its last attempt: ${result.error ?? `status ${result.statusCode}`}`,
      })
      .where('id', '=', subscriptionId)
      .execute();
}
