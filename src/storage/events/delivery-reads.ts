/**
 * The deliveries as the events adapter (`event-store.ts`) lists them; their redeliveries are
 * changes (`webhook-tables.ts`).
 */
import type { Kysely } from 'kysely';
import type { EventStore, StoredDelivery } from '../../modules/events/store.js';
import { countRows } from '../count.js';
import type { Database } from '../schema.js';
import type { Store } from '../store.js';

/** The columns of a delivery as listed, with its event's id, type and time. */
export function deliveries(db: Kysely<Database>) {
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

export function deliveryOf(row: DeliveryRow): StoredDelivery {
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

/** The reads of deliveries, part of the events adapter over `store`. */
export function createDeliveryReads(store: Store): Pick<EventStore, 'listDeliveries' | 'findDelivery'> {
  const { db } = store;
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
  };
}
