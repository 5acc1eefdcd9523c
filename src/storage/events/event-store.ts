/**
 * The events adapter (`modules/events/store.ts`, `EventStore`): subscriptions and secrets here;
 * the reads and redeliveries of deliveries in `delivery-reads.ts`; what the deliverer does
 * (fan-out, claims, results) in `delivery-store.ts`. Every change of a subscription or secret
 * writes its audit entry in its own transaction (`audit.ts`).
 */
import type { Kysely, Selectable } from 'kysely';
import type {
  EventAuditEntry,
  EventStore,
  EventType,
  StoredSubscription,
} from '../../modules/events/store.js';
import { countRows } from '../count.js';
import { errorCodeOf } from '../errors.js';
import type { Database } from '../schema.js';
import type { DialectAdapter, Store } from '../store.js';
import type { EventSubscriptionsTable } from '../tables/events.js';
import { writeWebhookAudit } from './audit.js';
import { createDeliveryReads } from './delivery-reads.js';
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

/** A unique violation: a concurrent creation or rotation of the current secret won. */
function isUniqueViolation(error: unknown): boolean {
  const code = errorCodeOf(error);
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE';
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
function createSubscriptionStore(
  store: Store,
): Pick<
  EventStore,
  | 'createSubscription'
  | 'updateSubscription'
  | 'deleteSubscription'
  | 'findSubscription'
  | 'listSubscriptions'
> {
  const { db, adapter } = store;
  return {
    createSubscription: (input, audit) => insertSubscription(db, adapter, input, audit),

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
        await writeWebhookAudit(trx, adapter, audit);
        return subscriptionOf(row);
      });
    },

    async deleteSubscription(id, audit) {
      return db.transaction().execute(async (trx) => {
        const result = await trx.deleteFrom('event_subscriptions').where('id', '=', id).executeTakeFirst();
        if (Number(result.numDeletedRows) === 0) return false;
        await writeWebhookAudit(trx, adapter, audit);
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
  };
}

/** `EventStore.createSubscription`: the subscription and its audit entry, which names it, in one transaction. */
async function insertSubscription(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  input: Parameters<EventStore['createSubscription']>[0],
  audit: EventAuditEntry,
): Promise<StoredSubscription> {
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
    await writeWebhookAudit(trx, adapter, {
      ...audit,
      details: { ...audit.details, subscriptionId: subscription.id },
    });
    return subscription;
  });
}

/** The signing secrets and the sealing key of the events adapter over `store`. */
function createSecretStore(
  store: Store,
): Pick<EventStore, 'signingSecrets' | 'addSecret' | 'storedSealingKey'> {
  const { db, adapter } = store;
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

    addSecret: (input, rotate, audit) => addSecret(db, adapter, input, rotate, audit),

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

/**
 * `EventStore.addSecret` in one transaction with its audit entry; false when a concurrent
 * creation or rotation of the current secret won.
 */
async function addSecret(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  input: Parameters<EventStore['addSecret']>[0],
  rotate: { overlapUntil: string } | undefined,
  audit: EventAuditEntry,
): Promise<boolean> {
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
      await writeWebhookAudit(trx, adapter, audit);
      return true;
    });
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}
