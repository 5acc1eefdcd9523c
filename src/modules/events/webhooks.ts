/**
 * Webhook management (docs/reference.md, Webhooks): subscriptions, the signing secret and its
 * rotation, the deliveries and their redelivery; and the signer the deliverer uses. Every change
 * runs through the change runner (`webhook-changes.ts`), with its audit entry, its
 * `Idempotency-Key` and its dry run. A secret is shown in clear only in the answers of its
 * creation, its rotation and its details, never logged.
 */
import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import type { ChangeOptions, ChangeRunner, Outcome } from '../changes/runner.js';
import { type AddressPolicy, AddressRefused, checkWebhookUrl } from './address-rules.js';
import type { Signer } from './deliverer.js';
import { newSealingKey, openSecret, signatureHeader } from './signing.js';
import type { DeliveryFilter, EventStore, StoredDelivery } from './store.js';
import {
  type SecretView,
  type SubscriptionInput,
  type SubscriptionUpdate,
  type SubscriptionView,
  viewOf,
  type WebhookChangeTables,
  webhookChanges,
} from './webhook-changes.js';

/** How long opened signing secrets are reused by the signer before being read again. */
const SIGNING_SECRETS_CACHE_MS = 2_000;

export type {
  SecretView,
  SubscriptionInput,
  SubscriptionUpdate,
  SubscriptionView,
} from './webhook-changes.js';

function urlError(message: string): AppError {
  return new AppError('validation-failed', `url ${message}`, { errors: [{ path: '/body/url', message }] });
}

export class WebhookService {
  readonly #store: EventStore;
  readonly #runner: ChangeRunner<WebhookChangeTables>;
  readonly #changes: ReturnType<typeof webhookChanges>;
  readonly #clock: Clock;
  readonly #policy: AddressPolicy;
  readonly #envKey: string | undefined;
  #sealingKey: Promise<string> | undefined;
  #signing: { secrets: Promise<string[]>; untilMs: number } | undefined;

  /**
   * `sealingKey` is WEBHOOK_SECRETS_KEY (base64 of 32 bytes) when set; otherwise a key made
   * once and kept in the store seals the secrets. `onChange` is called when deliveries may have
   * become due (a subscription resumed, a redelivery): the deliverer's wake.
   */
  constructor(
    store: EventStore,
    runner: ChangeRunner<WebhookChangeTables>,
    clock: Clock,
    policy: AddressPolicy,
    sealingKey: string | undefined,
    onChange: () => void = () => {},
  ) {
    this.#store = store;
    this.#runner = runner;
    this.#clock = clock;
    this.#policy = policy;
    this.#envKey = sealingKey;
    this.#changes = webhookChanges({
      checkedUrl: (url) => this.#checkedUrl(url),
      wake: onChange,
      secretsChanged: () => {
        this.#signing = undefined;
      },
    });
  }

  #now(): string {
    return this.#clock.now().toISOString();
  }

  /**
   * Whether signing secrets exist while WEBHOOK_SECRETS_KEY is unset: they are sealed under the
   * key kept in the store, as safe as the database itself (the start says so).
   */
  async secretsSealedInStore(): Promise<boolean> {
    return this.#envKey === undefined && (await this.#store.signingSecrets(this.#now())).length > 0;
  }

  /**
   * The key that seals the signing secrets (WEBHOOK_SECRETS_KEY, or the one kept in the store),
   * which also seals other answers kept with a secret in them (a new credential's, for a repeat
   * of its `Idempotency-Key`), each under a use of its own (`modules/auth/sealed-answer.ts`).
   */
  sealingKey(): Promise<string> {
    return this.#key();
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

  /**
   * Subscribes `url` to `eventTypes`. Errors: `validation-failed` naming `url` and the address
   * rule it breaks; `conflict` while there is no signing secret (create it first).
   */
  createSubscription(input: SubscriptionInput, options: ChangeOptions): Promise<Outcome<SubscriptionView>> {
    return this.#runner.run(this.#changes.createSubscription, input, options);
  }

  /**
   * Changes a subscription's URL, event types or description. Errors: `validation-failed` as
   * `createSubscription`; `not-found`.
   */
  updateSubscription(
    id: number,
    change: SubscriptionUpdate,
    options: ChangeOptions,
  ): Promise<Outcome<SubscriptionView>> {
    return this.#runner.run(this.#changes.updateSubscription, { id, ...change }, options);
  }

  /**
   * Pauses or resumes a subscription: while paused, its events are kept as deliveries and sent
   * once it is resumed. Errors: `not-found`.
   */
  setStatus(
    id: number,
    status: 'active' | 'paused',
    options: ChangeOptions,
  ): Promise<Outcome<SubscriptionView>> {
    const change = status === 'paused' ? this.#changes.pauseSubscription : this.#changes.resumeSubscription;
    return this.#runner.run(change, { id }, options);
  }

  /** Deletes a subscription with its deliveries. Errors: `not-found`. */
  deleteSubscription(id: number, options: ChangeOptions): Promise<Outcome<{ id: number }>> {
    return this.#runner.run(this.#changes.deleteSubscription, { id }, options);
  }

  /** Creates the signing secret and shows it. Errors: `conflict` when one exists (rotate it). */
  async createSecret(options: ChangeOptions): Promise<Outcome<SecretView>> {
    return this.#runner.run(this.#changes.createSecret(await this.#key()), {}, options);
  }

  /**
   * Replaces the signing secret with a new one, shown; the replaced one goes on signing beside
   * it for `overlapSeconds`. Errors: `conflict` when there is none yet.
   */
  async rotateSecret(options: ChangeOptions, overlapSeconds: number): Promise<Outcome<SecretView>> {
    return this.#runner.run(this.#changes.rotateSecret(await this.#key()), { overlapSeconds }, options);
  }

  /** Attempts a delivery again now, with a fresh budget of attempts. Errors: `not-found`. */
  redeliver(id: number, options: ChangeOptions): Promise<Outcome<StoredDelivery>> {
    return this.#runner.run(this.#changes.redeliver, { id }, options);
  }

  /**
   * Delivers again every event of the subscription's types recorded since `since`, including
   * those from before it existed, as long as they are kept; returns how many. Errors:
   * `not-found`; `redelivery-too-large` above `REDELIVER_EVENTS_MAX` events.
   */
  redeliverSince(
    subscriptionId: number,
    since: string,
    options: ChangeOptions,
  ): Promise<Outcome<{ events: number }>> {
    return this.#runner.run(this.#changes.redeliverSince, { subscriptionId, since }, options);
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
