/**
 * The rows of business events and their webhook deliveries: the outbox, subscriptions, signing
 * secrets and keys.
 */
import type { Generated } from 'kysely';

/** The outbox: one business event, with the body its deliveries send (migration 0025). */
export interface EventsTable {
  seq: Generated<number>;
  event_id: string;
  type: string;
  version: number;
  occurred_at: string;
  body: string;
  /** 1 once its deliveries were made. */
  fanned_out: Generated<number>;
}

/** A webhook receiver (migration 0025). */
export interface EventSubscriptionsTable {
  id: Generated<number>;
  url: string;
  /** JSON array of event type names. */
  event_types: string;
  description: string | null;
  status: 'active' | 'paused';
  created_at: string;
  created_by: string;
  updated_at: string;
  /** When a delivery failed for good; cleared by the next success. */
  flagged_at: string | null;
  flag_reason: string | null;
}

/** A signing secret, sealed (migration 0025). */
export interface EventSecretsTable {
  id: Generated<number>;
  sealed: string;
  created_at: string;
  created_by: string;
  /** Null for the current secret; the end of the overlap for one a rotation replaced. */
  expires_at: string | null;
}

/** One event's delivery to one subscription (migration 0025). */
export interface EventDeliveriesTable {
  id: Generated<number>;
  subscription_id: number;
  event_seq: number;
  status: 'pending' | 'delivering' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: string;
  /** Until when the instance attempting it holds it; another may attempt it after. */
  lease_until: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  /** The first bytes of the receiver's last answer. */
  last_response: string | null;
  last_duration_ms: number | null;
  created_at: string;
  delivered_at: string | null;
}

/** The key that seals signing secrets when WEBHOOK_SECRETS_KEY is not set (migration 0025). */
export interface EventKeysTable {
  id: number;
  key: string;
  created_at: string;
}
