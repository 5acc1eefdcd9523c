import type { Clock } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/ids.js';
import type { RequestCountStore, RequestCountUpdate } from './store.js';

/** Default requests one client (or one address, before authentication) may make per window. */
export const RATE_LIMIT_MAX_DEFAULT = 20_000;
/** Default length of a counting window (fixed windows, aligned on the epoch). */
export const RATE_LIMIT_WINDOW_MS_DEFAULT = 60_000;
/**
 * How often each instance adds its counts to the store and reads back the totals of every
 * instance. Between two syncs an instance knows only its own new requests, so a client spread
 * over N instances may exceed the limit by about N - 1 times what it sends in this interval.
 */
export const RATE_LIMIT_SYNC_INTERVAL_MS = 1_000;
/**
 * Keys counted at once per instance. Past it, a key not yet seen in the window is not counted:
 * the limit is per client, and a flood of distinct addresses must not grow the memory without
 * bound.
 */
export const RATE_LIMIT_KEYS_MAX = 100_000;

/** The settings of the limiter (`RATE_LIMIT_MAX`, `RATE_LIMIT_WINDOW_MS`). */
export interface RateLimitSettings {
  /** Requests per key and window; 0 turns the limit off. */
  max: number;
  windowMs: number;
}

/** How a key stands after counting one more request. */
export interface RequestCount {
  /** Requests of the key in the current window, this one included, as this instance knows them. */
  requests: number;
  /** Milliseconds until the window ends and the count starts again. */
  windowLeftMs: number;
}

/** The count of one key in one window: the store's total at the last sync plus what came since. */
interface Tally {
  keyHash: string;
  windowStartedMs: number;
  synced: number;
  unsynced: number;
}

/**
 * Counts requests per key (a client id or an address) in fixed windows shared by every instance
 * of one store, for the per-client rate limit (docs/decisions.md, HTTP in general). Counting is
 * in memory and costs no store round trip on the request path: each instance adds its new counts
 * to the store once per `RATE_LIMIT_SYNC_INTERVAL_MS`, in one upsert per sync, and learns the
 * totals of all instances from the answer. Keys are stored as SHA-256, so the store holds no
 * client id or address in clear.
 */
export class RequestLimiter {
  readonly settings: RateLimitSettings;
  readonly #store: RequestCountStore;
  readonly #clock: Clock;
  readonly #onError: (error: unknown) => void;
  readonly #tallies = new Map<string, Tally>();
  #timer: NodeJS.Timeout | undefined;
  #syncing: Promise<void> | undefined;
  #closed = false;

  constructor(
    store: RequestCountStore,
    clock: Clock,
    settings: RateLimitSettings,
    onError: (error: unknown) => void = () => {},
  ) {
    this.#store = store;
    this.#clock = clock;
    this.settings = settings;
    this.#onError = onError;
  }

  /** False when `RATE_LIMIT_MAX` is 0: no request is counted or refused. */
  get enabled(): boolean {
    return this.settings.max > 0;
  }

  /**
   * Counts one request of `key` and says how many the key has made in the current window. The
   * caller refuses the request when that exceeds `settings.max`. Starts the background sync on
   * first use.
   */
  count(key: string): RequestCount {
    const nowMs = this.#clock.now().getTime();
    const windowStartedMs = nowMs - (nowMs % this.settings.windowMs);
    const windowLeftMs = windowStartedMs + this.settings.windowMs - nowMs;
    let tally = this.#tallies.get(key);
    if (tally === undefined || tally.windowStartedMs !== windowStartedMs) {
      if (tally === undefined && this.#tallies.size >= RATE_LIMIT_KEYS_MAX) {
        return { requests: 1, windowLeftMs };
      }
      // The unsynced counts of a window that has ended no longer matter to anyone.
      tally = { keyHash: sha256Hex(key), windowStartedMs, synced: 0, unsynced: 0 };
      this.#tallies.set(key, tally);
    }
    tally.unsynced += 1;
    this.#startSync();
    return { requests: tally.synced + tally.unsynced, windowLeftMs };
  }

  /**
   * Adds the counts of this instance made since the last sync to the store and reads back the
   * totals of every instance; forgets the keys of windows that have ended. Runs after a sync
   * under way, so it includes every request counted before the call. A failed sync keeps its
   * counts for the next one.
   */
  sync(): Promise<void> {
    const next = (this.#syncing ?? Promise.resolve()).catch(() => {}).then(() => this.#syncOnce());
    this.#syncing = next;
    const settled = () => {
      if (this.#syncing === next) this.#syncing = undefined;
    };
    next.then(settled, settled);
    return next;
  }

  async #syncOnce(): Promise<void> {
    const nowMs = this.#clock.now().getTime();
    const currentWindowMs = nowMs - (nowMs % this.settings.windowMs);
    const sent: { tally: Tally; update: RequestCountUpdate }[] = [];
    for (const [key, tally] of this.#tallies) {
      if (tally.windowStartedMs < currentWindowMs) {
        this.#tallies.delete(key);
      } else if (tally.unsynced > 0) {
        const update = {
          keyHash: tally.keyHash,
          windowStartedMs: tally.windowStartedMs,
          requests: tally.unsynced,
        };
        sent.push({ tally, update });
        tally.synced += tally.unsynced;
        tally.unsynced = 0;
      }
    }
    if (sent.length === 0) return;
    try {
      const totals = await this.#store.addRequestCounts(sent.map(({ update }) => update));
      for (const { tally } of sent) {
        const total = totals.get(tally.keyHash);
        if (total !== undefined && total.windowStartedMs === tally.windowStartedMs) {
          tally.synced = Math.max(tally.synced, total.requests);
        }
      }
    } catch (error) {
      for (const { tally, update } of sent) {
        tally.synced -= update.requests;
        tally.unsynced += update.requests;
      }
      throw error;
    }
  }

  /** Deletes the stored counts of windows that have ended; returns how many. */
  purge(): Promise<number> {
    const nowMs = this.#clock.now().getTime();
    return this.#store.purgeRequestCounts(nowMs - (nowMs % this.settings.windowMs));
  }

  /** Stops the background sync and waits for one under way. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#syncing?.catch(() => {});
  }

  #startSync(): void {
    if (this.#timer !== undefined || this.#closed) return;
    this.#timer = setInterval(() => {
      // A slow store must not pile syncs up: the next tick takes what this one could not.
      if (this.#syncing === undefined) this.sync().catch(this.#onError);
    }, RATE_LIMIT_SYNC_INTERVAL_MS);
    this.#timer.unref();
  }
}
