/**
 * The events adapter (`modules/events/store.ts`, `EventStore`): the reads of subscriptions and
 * secrets here; the reads of deliveries in `delivery-reads.ts`; what the deliverer does (fan-out,
 * claims, results) in `delivery-store.ts`. The changes an operator makes (subscriptions,
 * secrets, redeliveries) are the change runner's, in `webhook-tables.ts`.
 */
import type { Selectable } from 'kysely';
import type { EventStore, EventType, StoredSubscription } from '../../modules/events/store.js';
import { countRows } from '../count.js';
import type { Store } from '../store.js';
import type { EventSubscriptionsTable } from '../tables/events.js';
import { createDeliveryReads } from './delivery-reads.js';
import { createDeliveryStore } from './delivery-store.js';

/** A subscription row as the port gives it. */
export function subscriptionOf(row: Selectable<EventSubscriptionsTable>): StoredSubscription {
  return {
    id: Number(row.id),
    url: row.url,
    eventTypes: JSON.parse(row.event_types) as EventType[],
    description: row.description,
    status: row.status,
    createdAt: row.created_at,
    createdBy: row.created_by,
    updatedAt: row.updated_at,
    flaggedAt: row.flagged_at,
    flagReason: row.flag_reason,
  };
}

/** The events adapter over one store. */
export function createEventStore(store: Store): EventStore {
  return {
    ...createSubscriptionStore(store),
    ...createSecretStore(store),
    ...createDeliveryReads(store),
    ...createDeliveryStore(store),
  };
}

/** The subscriptions of the events adapter over `store`. */
function createSubscriptionStore(store: Store): Pick<EventStore, 'findSubscription' | 'listSubscriptions'> {
  const { db } = store;
  return {
    async findSubscription(id) {
      const row = await db
        .selectFrom('event_subscriptions')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst();
      return row === undefined ? undefined : subscriptionOf(row);
    },

    async listSubscriptions(page, limit) {
      const query = db.selectFrom('event_subscriptions');
      const rows = await query
        .selectAll()
        .orderBy('id')
        .limit(limit)
        .offset(page * limit)
        .execute();
      return { rows: rows.map(subscriptionOf), total: await countRows(query.selectAll()) };
    },
  };
}

/** The signing secrets and the sealing key of the events adapter over `store`. */
function createSecretStore(store: Store): Pick<EventStore, 'signingSecrets' | 'storedSealingKey'> {
  const { db } = store;
  return {
    async signingSecrets(now) {
      const rows = await db
        .selectFrom('event_secrets')
        .selectAll()
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .orderBy('id', 'desc')
        .execute();
      return rows.map((row) => ({
        id: Number(row.id),
        sealed: row.sealed,
        createdAt: row.created_at,
        createdBy: row.created_by,
        expiresAt: row.expires_at,
      }));
    },

    async storedSealingKey(make, at) {
      await db
        .insertInto('event_keys')
        .values({ id: 1, key: make(), created_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      const row = await db
        .selectFrom('event_keys')
        .select('key')
        .where('id', '=', 1)
        .executeTakeFirstOrThrow();
      return row.key;
    },
  };
}
