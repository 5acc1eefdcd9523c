/**
 * The storage port of events and webhooks (`storage/events/`): the outbox the other adapters
 * write into inside their own transactions, the subscriptions and secrets, the deliveries a
 * deliverer claims by lease and settles, and the tables an operator's changes write.
 */

import type { EventType } from './types.js';

export {
  EVENT_TYPES,
  type EventData,
  type EventType,
  eventOf,
  type RecordedEvent,
} from './types.js';

export type SubscriptionStatus = 'active' | 'paused';
export type DeliveryStatus = 'pending' | 'delivering' | 'delivered' | 'failed';

/** A subscription as stored. */
export interface StoredSubscription {
  id: number;
  url: string;
  eventTypes: EventType[];
  description: string | null;
  status: SubscriptionStatus;
  createdAt: string;
  createdBy: string;
  updatedAt: string;
  flaggedAt: string | null;
  flagReason: string | null;
}

/** A signing secret as stored: sealed, never in clear. */
export interface StoredSecret {
  id: number;
  sealed: string;
  createdAt: string;
  createdBy: string;
  /** Null for the current secret. */
  expiresAt: string | null;
}

/** A delivery as listed. */
export interface StoredDelivery {
  id: number;
  subscriptionId: number;
  eventId: string;
  eventType: string;
  occurredAt: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  lastResponse: string | null;
  lastDurationMs: number | null;
  createdAt: string;
  deliveredAt: string | null;
}

/** A delivery claimed for one attempt, with what the attempt sends. */
export interface ClaimedDelivery {
  id: number;
  subscriptionId: number;
  url: string;
  eventId: string;
  body: string;
  /** Attempts made before this one. */
  attempts: number;
  /** The lease this attempt holds: its result is kept only while it still holds it. */
  leaseUntil: string;
}

/** The result of one attempt, to be settled under the attempt's lease. */
export interface AttemptResult {
  id: number;
  subscriptionId: number;
  leaseUntil: string;
  /** `delivered`; `retry` at `nextAttemptAt`; `failed` for good. */
  outcome: 'delivered' | 'retry' | 'failed';
  at: string;
  nextAttemptAt: string;
  statusCode: number | null;
  error: string | null;
  response: string | null;
  durationMs: number;
}

/** A change of a subscription; absent members stay as they are. */
export interface SubscriptionChange {
  url?: string;
  eventTypes?: EventType[];
  description?: string | null;
  status?: SubscriptionStatus;
}

export interface DeliveryFilter {
  subscriptionId?: number;
  status?: DeliveryStatus;
}

/**
 * The webhook tables an operator's change writes, inside the change runner's transaction
 * (`modules/changes/`), which writes the audit entry.
 */
export interface WebhookTables {
  createSubscription(
    input: Omit<StoredSubscription, 'id' | 'flaggedAt' | 'flagReason' | 'updatedAt'>,
  ): Promise<StoredSubscription>;
  /** Undefined when there is no such subscription. */
  updateSubscription(
    id: number,
    change: SubscriptionChange,
    at: string,
  ): Promise<StoredSubscription | undefined>;
  /** False when there is no such subscription. Its deliveries go with it. */
  deleteSubscription(id: number): Promise<boolean>;
  /**
   * Adds `sealed` as the current secret. With `rotate`, the current one (if any) ends at
   * `rotate.overlapUntil`; without it, nothing is added when a current secret exists (false),
   * and a rotation adds nothing when there is none (undefined). Secret changes wait for each other.
   */
  addSecret(
    input: { sealed: string; at: string; actor: string },
    rotate: { overlapUntil: string } | undefined,
  ): Promise<StoredSecret | undefined>;
  /** Whether there is a current signing secret (there is one from the first creation on). */
  hasSecret(): Promise<boolean>;
  /** Puts a delivery back to be attempted at `at` with a fresh budget; undefined when there is none. */
  redeliver(id: number, at: string): Promise<StoredDelivery | undefined>;
  /**
   * Queues again every event of the subscription's types since `since`: a new delivery where it
   * had none, the others back to pending. Refuses (`tooMany`) more than `max` events, changing
   * nothing. Undefined when there is no such subscription.
   */
  redeliverSince(
    subscriptionId: number,
    since: string,
    at: string,
    max: number,
  ): Promise<{ events: number; tooMany: boolean } | undefined>;
}

/** Subscriptions, secrets and deliveries as read, and the deliverer's work. */
export interface EventStore {
  findSubscription(id: number): Promise<StoredSubscription | undefined>;
  listSubscriptions(page: number, limit: number): Promise<{ rows: StoredSubscription[]; total: number }>;

  /** The secrets that sign now: the current one and those still in their overlap at `now`. */
  signingSecrets(now: string): Promise<StoredSecret[]>;
  /** The sealing key kept in the store, made by `make` on first use (once across instances). */
  storedSealingKey(make: () => string, at: string): Promise<string>;

  listDeliveries(
    filter: DeliveryFilter,
    page: number,
    limit: number,
  ): Promise<{ rows: StoredDelivery[]; total: number }>;
  findDelivery(id: number): Promise<StoredDelivery | undefined>;
  /** Makes the deliveries of up to `limit` events not fanned out yet; returns how many events. */
  fanOut(limit: number, at: string): Promise<number>;
  /**
   * Takes up to `limit` deliveries due at `now` (waiting, or in flight under a lease that ended)
   * of active subscriptions, at most `perSubscription` of each and none of `skipSubscriptions`,
   * oldest first, under a lease until `leaseUntil`: each is taken by one claim only.
   */
  claim(
    now: string,
    leaseUntil: string,
    limit: number,
    perSubscription: number,
    skipSubscriptions: readonly number[],
  ): Promise<ClaimedDelivery[]>;
  /**
   * Keeps the results whose lease is still held, in one transaction, and flags or clears their
   * subscriptions; returns how many were kept.
   */
  settle(results: readonly AttemptResult[]): Promise<number>;
  /** Deletes the events (and their deliveries) that occurred before `before`; how many. */
  purge(before: string): Promise<number>;
}
