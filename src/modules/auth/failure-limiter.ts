import { setTimeout as sleep } from 'node:timers/promises';
import { sha256Hex } from '../../lib/ids.js';
import type { AuthStore } from './store.js';

/** Length of a counting window (fixed windows). */
export const AUTH_FAILURE_WINDOW_MS = 60_000;
/** Failures of one subject from one address in a window that are answered without delay. */
export const AUTH_FAILURES_UNSLOWED_MAX = 5;
/** Delay of the first slowed attempt; each further failure doubles it. */
export const AUTH_FAILURE_DELAY_BASE_MS = 250;
/** Longest delay of one attempt, however many failures came before it. */
export const AUTH_FAILURE_DELAY_MAX_MS = 4_000;
/**
 * Unsuccessful attempts from one address in a window past which further attempts from it are
 * refused without checking the secret (a flood): this bounds the slow hashing one address can
 * cause. Attempts in flight count too, so a burst is caught before it is hashed.
 */
export const AUTH_FAILURES_PER_ADDRESS_MAX = 100;
/** Longest subject (client id, e-mail) that is told apart; longer ones share their prefix's counter. */
const SUBJECT_LENGTH_MAX = 256;
/** Counter key of attempts whose remote address is not known (calls that bypass HTTP). */
const UNKNOWN_ADDRESS = 'unknown';

/** What the store must offer to count failures (part of `AuthStore`). */
export type AuthFailureStore = Pick<
  AuthStore,
  'countAuthFailure' | 'readAuthFailures' | 'uncountAuthFailure' | 'clearAuthFailures' | 'purgeAuthFailures'
>;

/** Waits `ms` milliseconds; tests pass one that records instead of sleeping. */
export type Wait = (ms: number) => Promise<void>;

/** One attempt as the limiter admitted it; hand it back with its outcome. */
export interface AuthAttempt {
  /** Seconds to wait when the address is flooding and the attempt must be refused, else 0. */
  retryAfterSeconds: number;
  /** How long the attempt is held before its secret is checked. */
  delayMs: number;
  readonly pairKey: string;
  readonly addressKey: string;
  readonly pairFailures: number;
}

/**
 * Limits guessing of secrets (client secrets, sign-in passwords) without locking the rightful
 * owner out. Failures are counted per (subject, remote address) and per address in fixed
 * one-minute windows in the store, so every instance on one PostgreSQL sees the same counts.
 * Past a few failures of one subject from one address, each further attempt is held for a
 * delay that doubles per failure up to a few seconds, and its secret is still checked: a right
 * secret succeeds (late) and clears the counter, a guesser gets a few tries a minute. Only an
 * address flooding with failures is refused outright, before any hashing, with the time to wait.
 */
export class FailureLimiter {
  readonly #store: AuthFailureStore;
  readonly #scope: string;
  readonly #wait: Wait;

  /** `scope` keeps the counters of different kinds of secret apart (`client`, `sign-in`). */
  constructor(store: AuthFailureStore, scope: string, wait: Wait = (ms) => sleep(ms)) {
    this.#store = store;
    this.#scope = scope;
    this.#wait = wait;
  }

  /**
   * Admits an attempt: counts it against its address (taken back by `succeeded`) and reads the
   * failures of the subject from that address. The caller refuses the attempt when
   * `retryAfterSeconds` is positive, else calls `hold` and checks the secret.
   */
  async admit(subject: string, address: string | undefined, nowMs: number): Promise<AuthAttempt> {
    const where = address ?? UNKNOWN_ADDRESS;
    const pairKey = this.#pairKey(subject, where);
    const addressKey = sha256Hex(`${this.#scope}\0\0${where}`);
    const [fromAddress, pairFailures] = await Promise.all([
      this.#store.countAuthFailure(addressKey, nowMs, AUTH_FAILURE_WINDOW_MS),
      this.#store.readAuthFailures(pairKey, nowMs, AUTH_FAILURE_WINDOW_MS),
    ]);
    const windowLeftMs = fromAddress.windowStartedMs + AUTH_FAILURE_WINDOW_MS - nowMs;
    const retryAfterSeconds =
      fromAddress.failures > AUTH_FAILURES_PER_ADDRESS_MAX ? Math.max(1, Math.ceil(windowLeftMs / 1000)) : 0;
    const slowed = pairFailures - AUTH_FAILURES_UNSLOWED_MAX;
    const delayMs =
      slowed < 0 ? 0 : Math.min(AUTH_FAILURE_DELAY_BASE_MS * 2 ** slowed, AUTH_FAILURE_DELAY_MAX_MS);
    return { retryAfterSeconds, delayMs, pairKey, addressKey, pairFailures };
  }

  /**
   * True when `subject` has no recent failure from `address`: an attempt with a secret known to
   * be right (verified moments ago, no hashing) then needs neither counting nor holding. A read
   * only, so such an attempt writes nothing.
   */
  async quiet(subject: string, address: string | undefined, nowMs: number): Promise<boolean> {
    const pairKey = this.#pairKey(subject, address ?? UNKNOWN_ADDRESS);
    return (await this.#store.readAuthFailures(pairKey, nowMs, AUTH_FAILURE_WINDOW_MS)) === 0;
  }

  #pairKey(subject: string, where: string): string {
    return sha256Hex(`${this.#scope}\0${subject.slice(0, SUBJECT_LENGTH_MAX)}\0${where}`);
  }

  /** Holds an admitted attempt for its delay (none for a subject without recent failures). */
  async hold(attempt: AuthAttempt): Promise<void> {
    if (attempt.delayMs > 0) await this.#wait(attempt.delayMs);
  }

  /** The attempt failed: one more failure of its subject from its address. */
  async failed(attempt: AuthAttempt, nowMs: number): Promise<void> {
    await this.#store.countAuthFailure(attempt.pairKey, nowMs, AUTH_FAILURE_WINDOW_MS);
  }

  /** The secret was right: the address gets its attempt back and the subject's failures are forgotten. */
  async succeeded(attempt: AuthAttempt): Promise<void> {
    await this.#store.uncountAuthFailure(attempt.addressKey);
    if (attempt.pairFailures > 0) await this.#store.clearAuthFailures(attempt.pairKey);
  }

  /** Deletes counters of windows that have ended; returns how many. */
  purge(nowMs: number): Promise<number> {
    return this.#store.purgeAuthFailures(nowMs - AUTH_FAILURE_WINDOW_MS);
  }
}
