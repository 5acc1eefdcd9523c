/**
 * The answers of the webhook routes (`event-deliveries.ts`), as TypeBox schemas free of Fastify,
 * so that the CLI can check what it reads against them.
 */
import { Type } from '@sinclair/typebox';
import { WEBHOOK_URL_LENGTH_MAX } from '../../modules/events/address-rules.js';
import {
  DeliveryStatusInput,
  EventTypeInput,
  SUBSCRIPTION_DESCRIPTION_LENGTH_MAX,
} from '../../modules/events/inputs.js';
import { RESPONSE_KEPT_BYTES } from '../../modules/events/sender.js';

const Instant = Type.String({ format: 'date-time' });
const OrNull = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(
  schema: T,
  description: string,
) => Type.Union([schema, Type.Null()], { description });

/** A webhook subscription. */
export const SubscriptionAnswer = Type.Object({
  id: Type.Integer({ minimum: 1 }),
  url: Type.String({ maxLength: WEBHOOK_URL_LENGTH_MAX }),
  eventTypes: Type.Array(EventTypeInput),
  description: OrNull(Type.String({ maxLength: SUBSCRIPTION_DESCRIPTION_LENGTH_MAX }), 'What it is for.'),
  status: Type.Union([Type.Literal('active'), Type.Literal('paused')], {
    description: '`paused`: its events wait as deliveries and are sent once it is resumed.',
  }),
  flagged: Type.Boolean({
    description: 'True after a delivery failed for good, until the next one succeeds.',
  }),
  flaggedAt: OrNull(Instant, 'When a delivery failed for good.'),
  flagReason: OrNull(Type.String(), 'Which delivery failed, and how.'),
  createdAt: Instant,
  createdBy: Type.String(),
  updatedAt: Instant,
});

/** A signing secret, in clear: only in the answers of its creation, rotation and details. */
export const SecretAnswer = Type.Object({
  id: Type.Integer({ minimum: 1 }),
  secret: Type.String({
    pattern: '^whsec_[A-Za-z0-9_-]+$',
    description: 'The HMAC-SHA256 key: the UTF-8 bytes of this whole text. Keep it secret.',
  }),
  createdAt: Instant,
  expiresAt: OrNull(
    Instant,
    'Null for the current secret; the end of the overlap of one a rotation replaced.',
  ),
});

/** The secrets that sign now. */
export const SecretDetailsAnswer = Type.Object({
  data: Type.Array(SecretAnswer, {
    description: 'The current secret first, then those still in their overlap after a rotation.',
  }),
});

/** A delivery of one event to one subscription. */
export const DeliveryAnswer = Type.Object({
  id: Type.Integer({ minimum: 1 }),
  subscriptionId: Type.Integer({ minimum: 1 }),
  eventId: Type.String({ description: 'The event’s id, sent as `Idempotency-Key` on every attempt.' }),
  eventType: Type.String(),
  occurredAt: Instant,
  status: DeliveryStatusInput,
  attempts: Type.Integer({ minimum: 0, description: 'Attempts made since it was (re)queued.' }),
  nextAttemptAt: OrNull(Instant, 'When it is attempted next; null once delivered or failed.'),
  lastAttemptAt: OrNull(Instant, 'When it was last attempted.'),
  lastStatusCode: OrNull(Type.Integer({ minimum: 100, maximum: 999 }), 'The HTTP status of the last answer.'),
  lastError: OrNull(Type.String(), 'Why the last attempt failed.'),
  lastResponse: OrNull(Type.String(), `The first ${RESPONSE_KEPT_BYTES} bytes of the last answer's body.`),
  lastDurationMs: OrNull(Type.Integer({ minimum: 0 }), 'How long the last attempt took.'),
  createdAt: Instant,
  deliveredAt: OrNull(Instant, 'When a 2xx answer was received.'),
});

/** What a redelivery since a time queued. */
export const RedeliveryAnswer = Type.Object({
  events: Type.Integer({ minimum: 0, description: 'Events queued to be delivered again.' }),
});

/** The event types and the version of the shape each is written in now. */
export const EventTypesAnswer = Type.Object({
  data: Type.Array(Type.Object({ type: EventTypeInput, version: Type.Integer({ minimum: 1 }) })),
});
