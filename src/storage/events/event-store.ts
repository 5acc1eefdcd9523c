/**
 * The events adapter (`modules/events/store.ts`, `EventStore`): subscriptions, secrets and the
 * reads and redeliveries of deliveries here; what the deliverer does (fan-out, claims, results)
 * in `delivery-store.ts`. Every change of a subscription or secret writes its audit entry in its
 * own transaction (`audit.ts`).
 */
import { type Kysely, type Selectable, sql } from 'kysely';
import type {
  DeliveryFilter,
  EventStore,
  EventType,
  StoredDelivery,
  StoredSubscription,
} from '../../modules/events/store.js';
import { countRows } from '../count.js';
import { errorCodeOf } from '../errors.js';
import type { Database } from '../schema.js';
import type { Store } from '../store.js';
import type { EventSubscriptionsTable } from '../tables/events.js';
import { writeWebhookAudit } from './audit.js';
import { createDeliveryStore } from './delivery-store.js';

function subscriptionOf(row: Selectable<EventSubscriptionsTable>): StoredSubscription {
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

/** A unique violation: a concurrent creation or rotation of the current secret won. */
function isUniqueViolation(error: unknown): boolean {
  const code = errorCodeOf(error);
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/** The events adapter over one store. */
export function createEventStore(store: Store): EventStore {
  const { db } = store;
  return {
    ...createDeliveryStore(store),

    async createSubscription(input, audit) {
      return db.transaction().execute(async (trx) => {
        const row = await trx
          .insertInto('event_subscriptions')
          .values({
            url: input.url,
            event_types: JSON.stringify(input.eventTypes),
            description: input.description,
            status: input.status,
            created_at: input.createdAt,
            created_by: input.createdBy,
            updated_at: input.createdAt,
            flagged_at: null,
            flag_reason: null,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        const subscription = subscriptionOf(row);
        await writeWebhookAudit(trx, store.adapter, {
          ...audit,
          details: { ...audit.details, subscriptionId: subscription.id },
        });
        return subscription;
      });
    },

    async updateSubscription(id, change, at, audit) {
      return db.transaction().execute(async (trx) => {
        const row = await trx
          .updateTable('event_subscriptions')
          .set({
            updated_at: at,
            ...(change.url === undefined ? {} : { url: change.url }),
            ...(change.eventTypes === undefined ? {} : { event_types: JSON.stringify(change.eventTypes) }),
            ...(change.description === undefined ? {} : { description: change.description }),
            ...(change.status === undefined ? {} : { status: change.status }),
          })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirst();
        if (row === undefined) return undefined;
        await writeWebhookAudit(trx, store.adapter, audit);
        return subscriptionOf(row);
      });
    },

    async deleteSubscription(id, audit) {
      return db.transaction().execute(async (trx) => {
        const result = await trx.deleteFrom('event_subscriptions').where('id', '=', id).executeTakeFirst();
        if (Number(result.numDeletedRows) === 0) return false;
        await writeWebhookAudit(trx, store.adapter, audit);
        return true;
      });
    },

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

    async addSecret(input, rotate, audit) {
      try {
        return await db.transaction().execute(async (trx) => {
          const current = await trx
            .selectFrom('event_secrets')
            .select('id')
            .where('expires_at', 'is', null)
            .executeTakeFirst();
          if (rotate === undefined && current !== undefined) return false;
          if (rotate !== undefined && current === undefined) return false;
          // Secrets whose overlap has ended sign nothing any more.
          await trx.deleteFrom('event_secrets').where('expires_at', '<=', input.at).execute();
          if (rotate !== undefined)
            await trx
              .updateTable('event_secrets')
              .set({ expires_at: rotate.overlapUntil })
              .where('expires_at', 'is', null)
              .execute();
          await trx
            .insertInto('event_secrets')
            .values({ sealed: input.sealed, created_at: input.at, created_by: input.actor, expires_at: null })
            .execute();
          await writeWebhookAudit(trx, store.adapter, audit);
          return true;
        });
      } catch (error) {
        if (isUniqueViolation(error)) return false;
        throw error;
      }
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

    async listDeliveries(filter: DeliveryFilter, page, limit) {
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
        await writeWebhookAudit(trx, store.adapter, audit);
        return true;
      });
    },

    async redeliverSince(subscriptionId, since, at, max, audit) {
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
        await writeWebhookAudit(trx, store.adapter, { ...audit, details: { ...audit.details, events } });
        return { events, tooMany: false };
      });
    },
  };
}
