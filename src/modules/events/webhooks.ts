/**
 * Webhook management (docs/reference.md, Webhooks): subscriptions, the signing secret and its
 * rotation, the deliveries and their redelivery; and the signer the deliverer uses. Every change
 * is written with its audit entry (`EventStore`). A secret is shown in clear only in the answers
 * of its creation, its rotation and its details, never logged.
 */
import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import type { AuditActor } from '../audit/entry.js';
import { type AddressPolicy, AddressRefused, checkWebhookUrl } from './address-rules.js';
import type { Signer } from './deliverer.js';
import { REDELIVER_EVENTS_MAX } from './inputs.js';
import { newSealingKey, newSigningSecret, openSecret, sealSecret, signatureHeader } from './signing.js';
import type {
  DeliveryFilter,
  EventAuditEntry,
  EventStore,
  EventType,
  StoredDelivery,
  StoredSubscription,
} from './store.js';

/** How long opened signing secrets are reused by the signer before being read again. */
const SIGNING_SECRETS_CACHE_MS = 2_000;

/** A subscription as the API gives it. */
export interface SubscriptionView {
  id: number;
  url: string;
  eventTypes: EventType[];
  description: string | null;
  status: StoredSubscription['status'];
  /** True after a delivery failed for good, until the next one succeeds. */
  flagged: boolean;
  flaggedAt: string | null;
  flagReason: string | null;
  createdAt: string;
  createdBy: string;
  updatedAt: string;
}

/** A signing secret as its details give it: in clear. */
export interface SecretView {
  id: number;
  secret: string;
  createdAt: string;
  /** Null for the current secret; the end of the overlap for one a rotation replaced. */
  expiresAt: string | null;
}

function viewOf(subscription: StoredSubscription): SubscriptionView {
  return { ...subscription, flagged: subscription.flaggedAt !== null };
}

function urlError(message: string, path = '/body/url'): AppError {
  return new AppError('validation-failed', `url ${message}`, { errors: [{ path, message }] });
}

export class WebhookService {
  readonly #store: EventStore;
  readonly #clock: Clock;
  readonly #policy: AddressPolicy;
  readonly #envKey: string | undefined;
  readonly #onChange: () => void;
  #sealingKey: Promise<string> | undefined;
  #signing: { secrets: Promise<string[]>; untilMs: number } | undefined;

  /**
   * `sealingKey` is WEBHOOK_SECRETS_KEY (base64 of 32 bytes) when set; otherwise a key made
   * once and kept in the store seals the secrets. `onChange` is called when deliveries may have
   * become due (a subscription resumed, a redelivery): the deliverer's wake.
   */
  constructor(
    store: EventStore,
    clock: Clock,
    policy: AddressPolicy,
    sealingKey: string | undefined,
    onChange: () => void = () => {},
  ) {
    this.#store = store;
    this.#clock = clock;
    this.#policy = policy;
    this.#envKey = sealingKey;
    this.#onChange = onChange;
  }

  #now(): string {
    return this.#clock.now().toISOString();
  }

  #audit(
    actor: AuditActor,
    action: EventAuditEntry['action'],
    details: Record<string, unknown>,
  ): EventAuditEntry {
    return { at: this.#now(), actor, action, details };
  }

  /**
   * Whether signing secrets exist while WEBHOOK_SECRETS_KEY is unset: they are sealed under the
   * key kept in the store, as safe as the database itself (the start says so).
   */
  async secretsSealedInStore(): Promise<boolean> {
    return this.#envKey === undefined && (await this.#store.signingSecrets(this.#now())).length > 0;
  }

  #key(): Promise<string> {
    this.#sealingKey ??=
      this.#envKey === undefined
        ? this.#store.storedSealingKey(newSealingKey, this.#now())
        : Promise.resolve(this.#envKey);
    return this.#sealingKey;
  }

  #checkedUrl(url: string): string {
    try {
      return checkWebhookUrl(url, this.#policy).href;
    } catch (error) {
      if (error instanceof AddressRefused) throw urlError(error.message);
      throw error;
    }
  }

  /**
   * Subscribes `url` to `eventTypes`. Errors: `validation-failed` naming `url` and the address
   * rule it breaks; `conflict` while there is no signing secret (create it first).
   */
  async createSubscription(
    input: { url: string; eventTypes: EventType[]; description?: string | undefined },
    actor: AuditActor,
  ): Promise<SubscriptionView> {
    const url = this.#checkedUrl(input.url);
    if ((await this.#store.signingSecrets(this.#now())).length === 0)
      throw new AppError(
        'conflict',
        'there is no signing secret yet: create one (POST /api/v1/event-deliveries/secrets) before the first subscription',
      );
    const at = this.#now();
    const subscription = await this.#store.createSubscription(
      {
        url,
        eventTypes: input.eventTypes,
        description: input.description ?? null,
        status: 'active',
        createdAt: at,
        createdBy: actor.user,
      },
      this.#audit(actor, 'webhooks.subscription-create', { url, eventTypes: input.eventTypes }),
    );
    return viewOf(subscription);
  }

  /** A page of subscriptions, oldest first. */
  async listSubscriptions(page: number, limit: number): Promise<{ rows: SubscriptionView[]; total: number }> {
    const { rows, total } = await this.#store.listSubscriptions(page, limit);
    return { rows: rows.map(viewOf), total };
  }

  /** One subscription. Errors: `not-found`. */
  async getSubscription(id: number): Promise<SubscriptionView> {
    const subscription = await this.#store.findSubscription(id);
    if (subscription === undefined) throw new AppError('not-found', `no webhook subscription ${id}`);
    return viewOf(subscription);
  }

  /**
   * Changes a subscription's URL, event types or description. Errors: `validation-failed` as
   * `createSubscription`; `not-found`.
   */
  async updateSubscription(
    id: number,
    change: {
      url?: string | undefined;
      eventTypes?: EventType[] | undefined;
      description?: string | null | undefined;
    },
    actor: AuditActor,
  ): Promise<SubscriptionView> {
    const url = change.url === undefined ? undefined : this.#checkedUrl(change.url);
    const stored = await this.#store.updateSubscription(
      id,
      {
        ...(url === undefined ? {} : { url }),
        ...(change.eventTypes === undefined ? {} : { eventTypes: change.eventTypes }),
        ...(change.description === undefined ? {} : { description: change.description }),
      },
      this.#now(),
      this.#audit(actor, 'webhooks.subscription-update', {
        subscriptionId: id,
        ...(url === undefined ? {} : { url }),
        ...(change.eventTypes === undefined ? {} : { eventTypes: change.eventTypes }),
      }),
    );
    if (stored === undefined) throw new AppError('not-found', `no webhook subscription ${id}`);
    return viewOf(stored);
  }

  /**
   * Pauses or resumes a subscription: while paused, its events are kept as deliveries and sent
   * once it is resumed. Errors: `not-found`.
   */
  async setStatus(id: number, status: 'active' | 'paused', actor: AuditActor): Promise<SubscriptionView> {
    const stored = await this.#store.updateSubscription(
      id,
      { status },
      this.#now(),
      this.#audit(
        actor,
        status === 'paused' ? 'webhooks.subscription-pause' : 'webhooks.subscription-resume',
        {
          subscriptionId: id,
        },
      ),
    );
    if (stored === undefined) throw new AppError('not-found', `no webhook subscription ${id}`);
    if (status === 'active') this.#onChange();
    return viewOf(stored);
  }

  /** Deletes a subscription with its deliveries. Errors: `not-found`. */
  async deleteSubscription(id: number, actor: AuditActor): Promise<void> {
    const deleted = await this.#store.deleteSubscription(
      id,
      this.#audit(actor, 'webhooks.subscription-delete', { subscriptionId: id }),
    );
    if (!deleted) throw new AppError('not-found', `no webhook subscription ${id}`);
  }

  /** Creates the signing secret and shows it. Errors: `conflict` when one exists (rotate it). */
  async createSecret(actor: AuditActor): Promise<SecretView> {
    const secret = newSigningSecret();
    const added = await this.#store.addSecret(
      { sealed: sealSecret(await this.#key(), secret), at: this.#now(), actor: actor.user },
      undefined,
      this.#audit(actor, 'webhooks.secret-create', {}),
    );
    if (!added)
      throw new AppError('conflict', 'a signing secret exists already: rotate it (POST …/secrets/rotate)');
    this.#signing = undefined;
    return this.#current();
  }

  /**
   * Replaces the signing secret with a new one, shown; the replaced one goes on signing beside
   * it for `overlapSeconds`. Errors: `conflict` when there is none yet, or another rotation won.
   */
  async rotateSecret(actor: AuditActor, overlapSeconds: number): Promise<SecretView> {
    const secret = newSigningSecret();
    const now = this.#clock.now();
    const overlapUntil = new Date(now.getTime() + overlapSeconds * 1000).toISOString();
    const added = await this.#store.addSecret(
      { sealed: sealSecret(await this.#key(), secret), at: now.toISOString(), actor: actor.user },
      { overlapUntil },
      this.#audit(actor, 'webhooks.secret-rotate', { overlapSeconds, overlapUntil }),
    );
    if (!added)
      throw new AppError(
        'conflict',
        'there is no signing secret to rotate (create one), or another rotation happened at the same moment',
      );
    this.#signing = undefined;
    return this.#current();
  }

  /** The secrets that sign now, current first, in clear. Errors: `not-found` when there is none. */
  async secretDetails(): Promise<SecretView[]> {
    const key = await this.#key();
    const stored = await this.#store.signingSecrets(this.#now());
    if (stored.length === 0) throw new AppError('not-found', 'there is no signing secret yet');
    return stored.map((s) => ({
      id: s.id,
      secret: openSecret(key, s.sealed),
      createdAt: s.createdAt,
      expiresAt: s.expiresAt,
    }));
  }

  async #current(): Promise<SecretView> {
    const [current] = await this.secretDetails();
    if (current === undefined) throw new AppError('not-found', 'there is no signing secret yet');
    return current;
  }

  /** A page of deliveries, newest first. Errors: `not-found` for an unknown subscription. */
  async listDeliveries(
    filter: DeliveryFilter,
    page: number,
    limit: number,
  ): Promise<{ rows: StoredDelivery[]; total: number }> {
    if (filter.subscriptionId !== undefined) await this.getSubscription(filter.subscriptionId);
    return this.#store.listDeliveries(filter, page, limit);
  }

  /** One delivery. Errors: `not-found`. */
  async getDelivery(id: number): Promise<StoredDelivery> {
    const delivery = await this.#store.findDelivery(id);
    if (delivery === undefined) throw new AppError('not-found', `no event delivery ${id}`);
    return delivery;
  }

  /** Attempts a delivery again now, with a fresh budget of attempts. Errors: `not-found`. */
  async redeliver(id: number, actor: AuditActor): Promise<StoredDelivery> {
    const done = await this.#store.redeliver(
      id,
      this.#now(),
      this.#audit(actor, 'webhooks.redeliver', { deliveryId: id }),
    );
    if (!done) throw new AppError('not-found', `no event delivery ${id}`);
    // Read before the deliverer is woken: the answer is the delivery as queued again, not as
    // this instance's next round may already have claimed it.
    const queued = await this.getDelivery(id);
    this.#onChange();
    return queued;
  }

  /**
   * Delivers again every event of the subscription's types recorded since `since`, including
   * those from before it existed, as long as they are kept; returns how many. Errors:
   * `not-found`; `redelivery-too-large` above `REDELIVER_EVENTS_MAX` events.
   */
  async redeliverSince(
    subscriptionId: number,
    since: string,
    actor: AuditActor,
  ): Promise<{ events: number }> {
    const result = await this.#store.redeliverSince(
      subscriptionId,
      since,
      this.#now(),
      REDELIVER_EVENTS_MAX,
      this.#audit(actor, 'webhooks.redeliver', { subscriptionId, since }),
    );
    if (result === undefined) throw new AppError('not-found', `no webhook subscription ${subscriptionId}`);
    if (result.tooMany)
      throw new AppError(
        'redelivery-too-large',
        `${result.events} events were recorded since ${since}; at most ${REDELIVER_EVENTS_MAX} are delivered again at once: choose a later time`,
        { events: result.events, eventsMax: REDELIVER_EVENTS_MAX },
      );
    this.#onChange();
    return { events: result.events };
  }

  /**
   * The deliverer's signer: signs with every secret that signs now, opened once per
   * `SIGNING_SECRETS_CACHE_MS`. Throws when there is no secret (the attempt is then retried).
   */
  signer(): Signer {
    return async (body, unixSeconds) => {
      const nowMs = this.#clock.now().getTime();
      if (this.#signing === undefined || this.#signing.untilMs <= nowMs) {
        const secrets = this.secretDetails().then((views) => views.map((v) => v.secret));
        this.#signing = { secrets, untilMs: nowMs + SIGNING_SECRETS_CACHE_MS };
        secrets.catch(() => {
          this.#signing = undefined;
        });
      }
      return signatureHeader(body, unixSeconds, await this.#signing.secrets);
    };
  }
}
