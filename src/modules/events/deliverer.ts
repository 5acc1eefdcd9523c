/**
 * The deliverer (docs/reference.md, Webhooks; docs/adr/0024-webhook-outbox.md): on every
 * instance, it fans recorded events out to the subscriptions that want them, claims due
 * deliveries under a lease (so each attempt is made by one instance), sends them, and settles
 * the results in batches. It runs on the event loop of the instance's main thread: sending is
 * I/O, and every store call is a small batch (`EVENT_CLAIM_BATCH` deliveries, results settled
 * `EVENT_SETTLE_BATCH` at a time). At most `EVENT_DELIVERY_CONCURRENCY_PER_SUBSCRIPTION`
 * attempts of one subscription are in flight on an instance, so a slow receiver holds only its
 * own slots, each for at most its timeout.
 *
 * Delivery is at least once: the same body and `Idempotency-Key` (the event id) on every
 * attempt. A failed attempt is tried again after an exponential delay with jitter, for about a
 * day (`EVENT_DELIVERY_ATTEMPTS_MAX`), then the delivery is `failed` and its subscription
 * flagged. Ordering: first attempts of a subscription's deliveries start in the order the events
 * were recorded; with several in flight and retries, receivers may get them in another order.
 */
import type { Clock } from '../../lib/clock.js';
import type { Sender, SendResult } from './sender.js';
import type { AttemptResult, ClaimedDelivery, EventStore } from './store.js';

/** Attempts of one delivery before it is failed: the delays between them add up to about a day. */
export const EVENT_DELIVERY_ATTEMPTS_MAX = 15;
/** The delay after a first failed attempt; it doubles after each. */
export const EVENT_RETRY_DELAY_MS_MIN = 30_000;
/** The longest delay between two attempts. */
export const EVENT_RETRY_DELAY_MS_MAX = 4 * 3_600_000;
/** How long a receiver has to answer an attempt, the whole exchange. */
export const EVENT_DELIVERY_TIMEOUT_MS = 10_000;
/** Attempts of one subscription in flight at once on one instance. */
export const EVENT_DELIVERY_CONCURRENCY_PER_SUBSCRIPTION = 16;
/**
 * Rounds of attempts of one subscription claimed at once: a slot that frees starts the next
 * attempt without a claim, and each claim (a commit, on SQLite a sync of the file) serves many
 * attempts. The deliveries waiting for a slot are covered by the lease.
 */
const CLAIMED_ROUNDS = 4;
const CLAIMED_PER_SUBSCRIPTION = CLAIMED_ROUNDS * EVENT_DELIVERY_CONCURRENCY_PER_SUBSCRIPTION;
/** Attempts in flight at once on one instance. */
export const EVENT_DELIVERIES_IN_FLIGHT_MAX = 256;
/** Deliveries claimed per claim. */
export const EVENT_CLAIM_BATCH = 200;
/** Events fanned out per transaction. */
export const EVENT_FAN_OUT_BATCH = 500;
/** Results settled per transaction. */
export const EVENT_SETTLE_BATCH = 200;
/** How long results wait to be settled with others: each settle is a commit. */
const SETTLE_DELAY_MS = 50;
/** How often the deliverer looks for work besides being woken (events recorded by other threads and instances). */
export const EVENT_POLL_MS = 500;
/** How long recorded events are kept once nothing waits to deliver them. */
export const EVENT_RETENTION_DAYS = 30;
/** How often old events are purged. */
const PURGE_INTERVAL_MS = 3_600_000;

/** The delays and limits of delivery; tests shorten them. */
export interface DeliverySchedule {
  attemptsMax: number;
  retryDelayMsMin: number;
  retryDelayMsMax: number;
  timeoutMs: number;
  pollMs: number;
}

export const DEFAULT_SCHEDULE: DeliverySchedule = {
  attemptsMax: EVENT_DELIVERY_ATTEMPTS_MAX,
  retryDelayMsMin: EVENT_RETRY_DELAY_MS_MIN,
  retryDelayMsMax: EVENT_RETRY_DELAY_MS_MAX,
  timeoutMs: EVENT_DELIVERY_TIMEOUT_MS,
  pollMs: EVENT_POLL_MS,
};

/** One attempt's outcome, for the metrics. */
export interface AttemptObservation {
  outcome: AttemptResult['outcome'];
  seconds: number;
}

/**
 * The delay before attempt `attempt + 1` after `attempt` failed: `retryDelayMsMin` doubled per
 * attempt, at most `retryDelayMsMax`, then a random point in its upper half (jitter, so that the
 * deliveries of a receiver that was down do not all come back at once).
 */
export function retryDelayMs(
  attempt: number,
  schedule: DeliverySchedule,
  random: () => number = Math.random,
): number {
  const nominal = Math.min(
    schedule.retryDelayMsMax,
    schedule.retryDelayMsMin * 2 ** Math.min(attempt - 1, 30),
  );
  return Math.round(nominal / 2 + (nominal / 2) * random());
}

/** Signs a delivery's body: the headers of an attempt made at `unixSeconds`. */
export type Signer = (body: string, unixSeconds: number) => Promise<string>;

export class EventDeliverer {
  readonly #store: EventStore;
  readonly #clock: Clock;
  readonly #sender: Sender;
  readonly #sign: Signer;
  readonly #schedule: DeliverySchedule;
  readonly #onError: (error: unknown) => void;
  readonly #observers: ((observation: AttemptObservation) => void)[] = [];
  readonly #inFlight = new Map<number, number>();
  #inFlightTotal = 0;
  #results: AttemptResult[] = [];
  #settleTimer: NodeJS.Timeout | undefined;
  #settling: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  #working: Promise<void> | undefined;
  #again = false;
  /** Whether the round asked for after the one in progress fans out too, or only claims. */
  #againFansOut = false;
  #closed = false;
  #lastPurgeMs = 0;
  readonly #attempts = new Set<Promise<void>>();

  constructor(
    store: EventStore,
    clock: Clock,
    sender: Sender,
    sign: Signer,
    onError: (error: unknown) => void,
    schedule: DeliverySchedule = DEFAULT_SCHEDULE,
  ) {
    this.#store = store;
    this.#clock = clock;
    this.#sender = sender;
    this.#sign = sign;
    this.#onError = onError;
    this.#schedule = schedule;
  }

  /** Calls `observer` after every attempt (the metrics). */
  observe(observer: (observation: AttemptObservation) => void): void {
    this.#observers.push(observer);
  }

  /** Looks for work every `pollMs` from now on, and at once. */
  start(): void {
    if (this.#timer !== undefined || this.#closed) return;
    this.#timer = setInterval(() => this.wake(), this.#schedule.pollMs);
    this.#timer.unref();
    this.wake();
  }

  /** Fans out, claims and sends now; a call while working asks for one more round after. */
  wake(): void {
    this.#round(true);
  }

  /**
   * A round: fan out new events (when `fanOut`; the poll and `wake` do, a freed slot only
   * claims), then claim and send while there is room. One at a time.
   */
  #round(fanOut: boolean): void {
    if (this.#closed) return;
    if (this.#working !== undefined) {
      this.#again = true;
      this.#againFansOut ||= fanOut;
      return;
    }
    this.#working = this.#work(fanOut)
      .catch(this.#onError)
      .finally(() => {
        this.#working = undefined;
        if (this.#again) {
          const next = this.#againFansOut;
          this.#again = false;
          this.#againFansOut = false;
          this.#round(next);
        }
      });
  }

  /** Waits until nothing is being claimed, sent or settled (tests, the benchmark). */
  async idle(): Promise<void> {
    for (;;) {
      if (this.#working !== undefined) await this.#working;
      else if (this.#attempts.size > 0) await Promise.all(this.#attempts);
      else if (this.#results.length > 0) await this.#flush();
      else {
        await this.#settling;
        if (this.#working === undefined && this.#attempts.size === 0 && this.#results.length === 0) return;
      }
    }
  }

  /** Stops claiming, waits for the attempts in flight and settles their results. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    await this.#working;
    await Promise.all(this.#attempts);
    await this.#flush();
    this.#sender.close();
  }

  #now(): Date {
    return this.#clock.now();
  }

  async #work(fanOut: boolean): Promise<void> {
    const nowMs = this.#now().getTime();
    if (nowMs - this.#lastPurgeMs > PURGE_INTERVAL_MS) {
      this.#lastPurgeMs = nowMs;
      await this.#store.purge(new Date(nowMs - EVENT_RETENTION_DAYS * 86_400_000).toISOString());
    }
    while (fanOut && !this.#closed) {
      const fanned = await this.#store.fanOut(EVENT_FAN_OUT_BATCH, this.#now().toISOString());
      if (fanned < EVENT_FAN_OUT_BATCH) break;
    }
    while (!this.#closed) {
      const free = EVENT_DELIVERIES_IN_FLIGHT_MAX - this.#inFlightTotal;
      if (free <= 0) return;
      // A subscription with deliveries waiting for a slot has enough for now.
      const busy = [...this.#waiting].filter(([, waiting]) => waiting.length > 0).map(([id]) => id);
      const now = this.#now();
      // The lease covers the wait for a slot of the subscription (the rounds claimed ahead) and
      // the attempt itself.
      const leaseUntil = new Date(
        now.getTime() + (CLAIMED_ROUNDS + 1) * this.#schedule.timeoutMs + 10_000,
      ).toISOString();
      const limit = Math.min(free, EVENT_CLAIM_BATCH);
      const claimed = await this.#store.claim(
        now.toISOString(),
        leaseUntil,
        limit,
        CLAIMED_PER_SUBSCRIPTION,
        busy,
      );
      for (const delivery of claimed) this.#queue(delivery);
      if (claimed.length < limit) return;
    }
  }

  /** Per subscription, the claimed deliveries waiting for one of its slots. */
  readonly #waiting = new Map<number, ClaimedDelivery[]>();

  #queue(delivery: ClaimedDelivery): void {
    this.#inFlightTotal += 1;
    const running = this.#inFlight.get(delivery.subscriptionId) ?? 0;
    if (running >= EVENT_DELIVERY_CONCURRENCY_PER_SUBSCRIPTION) {
      const waiting = this.#waiting.get(delivery.subscriptionId) ?? [];
      waiting.push(delivery);
      this.#waiting.set(delivery.subscriptionId, waiting);
      return;
    }
    this.#inFlight.set(delivery.subscriptionId, running + 1);
    const attempt = this.#attempt(delivery).finally(() => {
      this.#attempts.delete(attempt);
      this.#inFlightTotal -= 1;
      const left = (this.#inFlight.get(delivery.subscriptionId) ?? 1) - 1;
      if (left === 0) this.#inFlight.delete(delivery.subscriptionId);
      else this.#inFlight.set(delivery.subscriptionId, left);
      const next = this.#waiting.get(delivery.subscriptionId)?.shift();
      if (next !== undefined) {
        this.#inFlightTotal -= 1;
        this.#queue(next);
      } else if (!this.#closed) this.#round(false);
    });
    this.#attempts.add(attempt);
  }

  async #attempt(delivery: ClaimedDelivery): Promise<void> {
    let sent: SendResult;
    try {
      const at = this.#now();
      const signature = await this.#sign(delivery.body, Math.floor(at.getTime() / 1000));
      sent = await this.#sender.send(delivery.url, delivery.body, {
        'content-type': 'application/json',
        'user-agent': 'Ledgerflow-Webhooks/1',
        'idempotency-key': delivery.eventId,
        'webhook-signature': signature,
      });
    } catch (error) {
      sent = {
        statusCode: null,
        response: null,
        error: error instanceof Error ? error.message : String(error),
        refused: false,
        durationMs: 0,
      };
    }
    const at = this.#now();
    const attempt = delivery.attempts + 1;
    const ok = sent.statusCode !== null && sent.statusCode >= 200 && sent.statusCode < 300;
    const outcome: AttemptResult['outcome'] = ok
      ? 'delivered'
      : sent.refused || attempt >= this.#schedule.attemptsMax
        ? 'failed'
        : 'retry';
    this.#results.push({
      id: delivery.id,
      subscriptionId: delivery.subscriptionId,
      leaseUntil: delivery.leaseUntil,
      outcome,
      at: at.toISOString(),
      nextAttemptAt:
        outcome === 'retry'
          ? new Date(at.getTime() + retryDelayMs(attempt, this.#schedule)).toISOString()
          : at.toISOString(),
      statusCode: sent.statusCode,
      error: sent.error,
      response: sent.response,
      durationMs: sent.durationMs,
    });
    for (const observer of this.#observers) observer({ outcome, seconds: sent.durationMs / 1000 });
    if (this.#results.length >= EVENT_SETTLE_BATCH) await this.#flush();
    else this.#settleTimer ??= setTimeout(() => void this.#flush(), SETTLE_DELAY_MS);
  }

  /** Settles the results gathered so far, one batch after the other. */
  #flush(): Promise<void> {
    clearTimeout(this.#settleTimer);
    this.#settleTimer = undefined;
    const batch = this.#results;
    this.#results = [];
    this.#settling = this.#settling.then(async () => {
      if (batch.length === 0) return;
      try {
        await this.#store.settle(batch);
      } catch (error) {
        // Unsettled, the deliveries are attempted again once their leases end: at least once.
        this.#onError(error);
      }
    });
    return this.#settling;
  }
}
