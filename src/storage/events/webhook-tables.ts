/**
 * The webhook tables an operator's change writes (`WebhookTables`), over the change runner's
 * transaction (`storage/changes/change-store.ts`): subscriptions, the signing secrets and the
 * redeliveries. Rows only; the runner writes the audit entry and keeps the answer.
 */
import { type Kysely, sql } from 'kysely';
import type { StoredSecret, WebhookTables } from '../../modules/events/store.js';
import { countRows } from '../count.js';
import type { Database } from '../schema.js';
import type { DialectAdapter } from '../store.js';
import { deliveries, deliveryOf } from './delivery-reads.js';
import { subscriptionOf } from './event-store.js';

/** The webhook tables in the transaction `trx`. */
export function webhookTablesIn(trx: Kysely<Database>, adapter: DialectAdapter): WebhookTables {
  return {
    async createSubscription(input) {
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
      return subscriptionOf(row);
    },

    async updateSubscription(id, change, at) {
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
      return row === undefined ? undefined : subscriptionOf(row);
    },

    async deleteSubscription(id) {
      const result = await trx.deleteFrom('event_subscriptions').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    addSecret: (input, rotate) => addSecret(trx, adapter, input, rotate),

    async hasSecret() {
      const row = await trx
        .selectFrom('event_secrets')
        .select('id')
        .where('expires_at', 'is', null)
        .executeTakeFirst();
      return row !== undefined;
    },

    async redeliver(id, at) {
      const result = await trx
        .updateTable('event_deliveries')
        .set({ status: 'pending', attempts: 0, next_attempt_at: at, lease_until: null })
        .where('id', '=', id)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return undefined;
      return deliveryOf(await deliveries(trx).where('d.id', '=', id).executeTakeFirstOrThrow());
    },

    redeliverSince: (subscriptionId, since, at, max) => redeliverSince(trx, subscriptionId, since, at, max),
  };
}

/** `WebhookTables.addSecret`: secret changes take the secrets' table lock first, so one waits for another. */
async function addSecret(
  trx: Kysely<Database>,
  adapter: DialectAdapter,
  input: Parameters<WebhookTables['addSecret']>[0],
  rotate: { overlapUntil: string } | undefined,
): Promise<StoredSecret | undefined> {
  await adapter.lockTables(trx, ['event_secrets']);
  const current = await trx
    .selectFrom('event_secrets')
    .select('id')
    .where('expires_at', 'is', null)
    .executeTakeFirst();
  if ((rotate === undefined) !== (current === undefined)) return undefined;
  // Secrets whose overlap has ended sign nothing any more.
  await trx.deleteFrom('event_secrets').where('expires_at', '<=', input.at).execute();
  if (rotate !== undefined)
    await trx
      .updateTable('event_secrets')
      .set({ expires_at: rotate.overlapUntil })
      .where('expires_at', 'is', null)
      .execute();
  const row = await trx
    .insertInto('event_secrets')
    .values({ sealed: input.sealed, created_at: input.at, created_by: input.actor, expires_at: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  return {
    id: Number(row.id),
    sealed: input.sealed,
    createdAt: input.at,
    createdBy: input.actor,
    expiresAt: null,
  };
}

/** `WebhookTables.redeliverSince`. */
async function redeliverSince(
  trx: Kysely<Database>,
  subscriptionId: number,
  since: string,
  at: string,
  max: number,
): Promise<{ events: number; tooMany: boolean } | undefined> {
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
  return { events, tooMany: false };
}
