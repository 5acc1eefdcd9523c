/**
 * The deliveries as the events adapter (`event-store.ts`) lists them and puts them back to be
 * attempted again, each redelivery with its audit entry in its own transaction (`audit.ts`).
 */
import { type Kysely, sql } from 'kysely';
import type { EventAuditEntry, EventStore, StoredDelivery } from '../../modules/events/store.js';
import { countRows } from '../count.js';
import type { Database } from '../schema.js';
import type { DialectAdapter, Store } from '../store.js';
import { writeWebhookAudit } from './audit.js';

/** The columns of a delivery as listed, with its event's id, type and time. */
function deliveries(db: Kysely<Database>) {
  return db
    .selectFrom('event_deliveries as d')
    .innerJoin('events as e', 'e.seq', 'd.event_seq')
    .select([
      'd.id',
      'd.subscription_id',
      'e.event_id',
      'e.type',
      'e.occurred_at',
      'd.status',
      'd.attempts',
      'd.next_attempt_at',
      'd.last_attempt_at',
      'd.last_status_code',
      'd.last_error',
      'd.last_response',
      'd.last_duration_ms',
      'd.created_at',
      'd.delivered_at',
    ]);
}

type DeliveryRow = Awaited<ReturnType<ReturnType<typeof deliveries>['executeTakeFirstOrThrow']>>;

function deliveryOf(row: DeliveryRow): StoredDelivery {
  const waiting = row.status === 'pending' || row.status === 'delivering';
  return {
    id: Number(row.id),
    subscriptionId: Number(row.subscription_id),
    eventId: row.event_id,
    eventType: row.type,
    occurredAt: row.occurred_at,
    status: row.status,
    attempts: Number(row.attempts),
    nextAttemptAt: waiting ? row.next_attempt_at : null,
    lastAttemptAt: row.last_attempt_at,
    lastStatusCode: row.last_status_code === null ? null : Number(row.last_status_code),
    lastError: row.last_error,
    lastResponse: row.last_response,
    lastDurationMs: row.last_duration_ms === null ? null : Number(row.last_duration_ms),
    createdAt: row.created_at,
    deliveredAt: row.delivered_at,
  };
}

/** The reads and redeliveries of deliveries, part of the events adapter over `store`. */
export function createDeliveryReads(
  store: Store,
): Pick<EventStore, 'listDeliveries' | 'findDelivery' | 'redeliver' | 'redeliverSince'> {
  const { db, adapter } = store;
  return {
    async listDeliveries(filter, page, limit) {
      let query = deliveries(db);
      if (filter.subscriptionId !== undefined)
        query = query.where('d.subscription_id', '=', filter.subscriptionId);
      if (filter.status !== undefined) query = query.where('d.status', '=', filter.status);
      const rows = await query
        .orderBy('d.id', 'desc')
        .limit(limit)
        .offset(page * limit)
        .execute();
      return { rows: rows.map(deliveryOf), total: await countRows(query) };
    },

    async findDelivery(id) {
      const row = await deliveries(db).where('d.id', '=', id).executeTakeFirst();
      return row === undefined ? undefined : deliveryOf(row);
    },

    async redeliver(id, at, audit) {
      return db.transaction().execute(async (trx) => {
        const result = await trx
          .updateTable('event_deliveries')
          .set({ status: 'pending', attempts: 0, next_attempt_at: at, lease_until: null })
          .where('id', '=', id)
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) === 0) return false;
        await writeWebhookAudit(trx, adapter, audit);
        return true;
      });
    },

    redeliverSince: (subscriptionId, since, at, max, audit) =>
      redeliverSince(db, adapter, subscriptionId, since, at, max, audit),
  };
}

/** `EventStore.redeliverSince` in one transaction, with its audit entry. */
async function redeliverSince(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  subscriptionId: number,
  since: string,
  at: string,
  max: number,
  audit: EventAuditEntry,
): Promise<{ events: number; tooMany: boolean } | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('event_subscriptions')
      .select('event_types')
      .where('id', '=', subscriptionId)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    const types = JSON.parse(row.event_types) as string[];
    const selected = trx
      .selectFrom('events')
      .where('occurred_at', '>=', since)
      .where('type', 'in', types.length === 0 ? [''] : types);
    const events = await countRows(selected.select('seq'));
    if (events > max) return { events, tooMany: true };
    // Events with a delivery already are queued again; the others get one now. A delivery in
    // flight is left to its attempt.
    await trx
      .updateTable('event_deliveries')
      .set({ status: 'pending', attempts: 0, next_attempt_at: at, lease_until: null })
      .where('subscription_id', '=', subscriptionId)
      .where('status', 'in', ['delivered', 'failed'])
      .where('event_seq', 'in', selected.select('seq'))
      .execute();
    await trx
      .insertInto('event_deliveries')
      .columns(['subscription_id', 'event_seq', 'status', 'attempts', 'next_attempt_at', 'created_at'])
      .expression(
        selected.select([
          sql<number>`cast(${subscriptionId} as integer)`.as('subscription_id'),
          'seq',
          sql<string>`cast('pending' as text)`.as('status'),
          sql<number>`cast(0 as integer)`.as('attempts'),
          sql<string>`cast(${at} as text)`.as('next_attempt_at'),
          sql<string>`cast(${at} as text)`.as('created_at'),
        ]),
      )
      .onConflict((oc) => oc.columns(['subscription_id', 'event_seq']).doNothing())
      .execute();
    await writeWebhookAudit(trx, adapter, { ...audit, details: { ...audit.details, events } });
    return { events, tooMany: false };
  });
}
