/** Failed client authentications allowed per client id in one window. */
export const AUTH_FAILURES_PER_CLIENT_MAX = 10;
/** Failed client authentications allowed per remote address in one window. */
export const AUTH_FAILURES_PER_ADDRESS_MAX = 50;
/** Length of a counting window. */
export const AUTH_FAILURE_WINDOW_MS = 60_000;
/** Keys remembered at most; the oldest window is forgotten first. */
const AUTH_FAILURE_KEYS_MAX = 10_000;

/**
 * Counts failed client authentications per client id and per remote address in fixed
 * one-minute windows, in this process's memory. Past the limit, further attempts are refused
 * before any secret is hashed, so guessing a secret is slow and a flood of wrong secrets
 * cannot keep the CPU busy with scrypt. Correct secrets are not counted.
 */
export class FailureLimiter {
  readonly #windows = new Map<string, { count: number; startMs: number }>();

  /** Seconds until the given keys may try again, or 0 when they may now. */
  retryAfterSeconds(clientId: string, address: string | undefined, nowMs: number): number {
    let waitMs = 0;
    for (const [key, max] of this.#keys(clientId, address)) {
      const window = this.#windows.get(key);
      if (window !== undefined && nowMs - window.startMs < AUTH_FAILURE_WINDOW_MS && window.count >= max) {
        waitMs = Math.max(waitMs, window.startMs + AUTH_FAILURE_WINDOW_MS - nowMs);
      }
    }
    return Math.ceil(waitMs / 1000);
  }

  /** Counts one failure against the client id and the address. */
  record(clientId: string, address: string | undefined, nowMs: number): void {
    for (const [key] of this.#keys(clientId, address)) {
      const window = this.#windows.get(key);
      if (window === undefined || nowMs - window.startMs >= AUTH_FAILURE_WINDOW_MS) {
        this.#windows.delete(key);
        if (this.#windows.size >= AUTH_FAILURE_KEYS_MAX) {
          const oldest = this.#windows.keys().next();
          if (!oldest.done) this.#windows.delete(oldest.value);
        }
        this.#windows.set(key, { count: 1, startMs: nowMs });
      } else {
        window.count += 1;
      }
    }
  }

  #keys(clientId: string, address: string | undefined): [string, number][] {
    const keys: [string, number][] = [[`client:${clientId}`, AUTH_FAILURES_PER_CLIENT_MAX]];
    if (address !== undefined) keys.push([`address:${address}`, AUTH_FAILURES_PER_ADDRESS_MAX]);
    return keys;
  }
}
