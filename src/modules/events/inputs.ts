/**
 * The rules of what a caller may send to manage webhooks (docs/reference.md, Webhooks), written
 * once: the REST schemas (`http/api/event-deliveries.ts`) are built from these fragments, and the
 * administration page reads its forms with the same ones. The address rules of a URL, which a
 * schema cannot state, are `address-rules.ts`'s.
 */
import { Type } from '@sinclair/typebox';
import { WEBHOOK_URL_LENGTH_MAX } from './address-rules.js';
import { EVENT_TYPES } from './types.js';

/** Longest subscription description, in code points. */
export const SUBSCRIPTION_DESCRIPTION_LENGTH_MAX = 500;
/** Longest overlap of a rotated secret with its successor. */
export const SECRET_OVERLAP_SECONDS_MAX = 7 * 86_400;
/** The overlap of a rotation that names none. */
export const SECRET_OVERLAP_SECONDS_DEFAULT = 86_400;
/** Most events one redelivery of a subscription may queue again. */
export const REDELIVER_EVENTS_MAX = 100_000;

export const SubscriptionUrlInput = Type.String({
  minLength: 1,
  maxLength: WEBHOOK_URL_LENGTH_MAX,
  description:
    'Where events are POSTed: an https:// URL (http:// and loopback only when the service allows them), whose host resolves to no private, link-local, metadata or reserved address.',
  examples: ['https://hooks.example.com/ledgerflow'],
});

export const EventTypeInput = Type.Union(
  EVENT_TYPES.map((type) => Type.Literal(type)),
  { description: 'An event type.' },
);

export const EventTypesInput = Type.Array(EventTypeInput, {
  minItems: 1,
  maxItems: EVENT_TYPES.length,
  uniqueItems: true,
  description: 'The event types delivered to the subscription.',
  examples: [['ingestion.processed', 'processing.failed']],
});

export const SubscriptionDescriptionInput = Type.String({
  maxLength: SUBSCRIPTION_DESCRIPTION_LENGTH_MAX,
  description: 'What the subscription is for.',
});

export const SecretOverlapInput = Type.Integer({
  minimum: 0,
  maximum: SECRET_OVERLAP_SECONDS_MAX,
  default: SECRET_OVERLAP_SECONDS_DEFAULT,
  description: `Seconds during which the replaced secret still signs beside the new one (a second \`v1\`), at most ${SECRET_OVERLAP_SECONDS_MAX}.`,
});

export const DeliveryStatusInput = Type.Union(
  [Type.Literal('pending'), Type.Literal('delivering'), Type.Literal('delivered'), Type.Literal('failed')],
  { description: 'Only deliveries in this state.' },
);

/** A new subscription, as `POST /api/v1/event-deliveries/subscriptions` and the administration form take it. */
export const SubscriptionBody = Type.Object(
  {
    url: SubscriptionUrlInput,
    eventTypes: EventTypesInput,
    description: Type.Optional(SubscriptionDescriptionInput),
  },
  { additionalProperties: false },
);
