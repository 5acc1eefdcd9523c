/**
 * The outbox (docs/adr/0024-webhook-outbox.md): `recordEvent` inserts one event into `events`
 * inside the caller's transaction, so the event exists exactly when the change it reports was
 * committed: none is lost by a crash after the commit, and none is invented by a rollback.
 * Events are recorded whether or not a subscription wants them; a deliverer fans them out to
 * the subscriptions later (`delivery-store.ts`). One row per action or session, never per record.
 */
import type { Transaction } from 'kysely';
import { newTimeOrderedUuid } from '../../lib/ids.js';
import { type EventData, type EventType, eventOf } from '../../modules/events/store.js';
import type { Database } from '../schema.js';

/** Records the event `type` with `data`, occurred at `at`, in `trx`. Runs inside the caller's transaction. */
export async function recordEvent<T extends EventType>(
  trx: Transaction<Database>,
  type: T,
  data: EventData[T],
  at: string,
): Promise<void> {
  const event = eventOf(type, data, newTimeOrderedUuid(), at);
  await trx
    .insertInto('events')
    .values({
      event_id: event.eventId,
      type: event.type,
      version: event.version,
      occurred_at: event.occurredAt,
      body: event.body,
    })
    .execute();
}
