import { type ColumnDefinitionBuilder, type Kysely, sql } from 'kysely';
import type { Dialect } from '../store.js';

/**
 * Events and their deliveries to webhooks (docs/adr/0024-webhook-outbox.md):
 * - `events`: the outbox. One row per business event, inserted in the transaction of the change
 *   it reports, with the exact body every delivery sends. `fanned_out` turns 1 once a deliverer
 *   made its deliveries; the partial index `events_unfanned` holds only the others.
 * - `event_subscriptions`: the receivers, their event types and state; `flagged_at` is set when a
 *   delivery failed for good, and cleared by the next success.
 * - `event_secrets`: the signing secrets, sealed (AES-256-GCM); `expires_at` is null for the
 *   current one and set on the one a rotation replaced, for the overlap.
 * - `event_deliveries`: one per event and subscription, its state, attempts, lease and last
 *   response; `event_deliveries_due` holds only those waiting or in flight.
 * - `event_keys`: the sealing key made on first use when WEBHOOK_SECRETS_KEY is not set.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const serial = dialect === 'postgres' ? 'bigserial' : 'integer';
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  const idColumn = (c: ColumnDefinitionBuilder) =>
    dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement();

  await db.schema
    .createTable('events')
    .addColumn('seq', serial, idColumn)
    .addColumn('event_id', 'text', (c) => c.notNull().unique())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('occurred_at', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('fanned_out', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('events_unfanned')
    .on('events')
    .column('seq')
    .where(sql.ref('fanned_out'), '=', 0)
    .execute();
  await db.schema.createIndex('events_occurred').on('events').columns(['occurred_at', 'seq']).execute();

  await db.schema
    .createTable('event_subscriptions')
    .addColumn('id', serial, idColumn)
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('event_types', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('flagged_at', 'text')
    .addColumn('flag_reason', 'text')
    .execute();

  await db.schema
    .createTable('event_secrets')
    .addColumn('id', serial, idColumn)
    .addColumn('sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .execute();
  // One current secret: of two creations or rotations at once, the second fails here.
  await sql`create unique index event_secrets_current on event_secrets ((expires_at is null)) where expires_at is null`.execute(
    db,
  );

  await db.schema
    .createTable('event_deliveries')
    .addColumn('id', serial, idColumn)
    .addColumn('subscription_id', bigint, (c) =>
      c.notNull().references('event_subscriptions.id').onDelete('cascade'),
    )
    .addColumn('event_seq', bigint, (c) => c.notNull().references('events.seq').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('lease_until', 'text')
    .addColumn('last_attempt_at', 'text')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('last_response', 'text')
    .addColumn('last_duration_ms', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('delivered_at', 'text')
    .addUniqueConstraint('event_deliveries_once', ['subscription_id', 'event_seq'])
    .execute();
  await db.schema
    .createIndex('event_deliveries_due')
    .on('event_deliveries')
    .columns(['next_attempt_at', 'id'])
    .where(sql.ref('status'), 'in', sql`('pending', 'delivering')`)
    .execute();
  await db.schema
    .createIndex('event_deliveries_subscription')
    .on('event_deliveries')
    .columns(['subscription_id', 'id'])
    .execute();
  await db.schema.createIndex('event_deliveries_event').on('event_deliveries').column('event_seq').execute();

  await db.schema
    .createTable('event_keys')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  // A finished session is reported as processed once (`storage/events/session-events.ts`).
  await db.schema
    .alterTable('ingestions')
    .addColumn('processed_reported', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // Sessions that ended and were processed before events existed are not reported now.
  await sql`
    update ingestions set processed_reported = 1 where counted = 1 and processed_rows >= success_rows
  `.execute(db);
}
