/** How long something made for a sign-in session waits to be shown, from when it was made. */
export const ONE_TIME_VIEW_TTL_MS = 5 * 60 * 1000;
/** Most things waiting to be shown in one process; past it the oldest is forgotten. */
export const ONE_TIME_VIEWS_MAX = 1000;

interface Waiting<T> {
  value: T;
  expiresAtMs: number;
}

/**
 * What a page shows once, after the redirect that follows the form that made it
 * (Post/Redirect/Get): a new credential's secret. It is held in this process's memory, for the
 * sign-in session that made it alone, until it is shown or `ONE_TIME_VIEW_TTL_MS` passes; taking
 * it removes it, so neither a reload of the page nor another session sees it again. Being in
 * memory, it is shown only by the instance that made it: several instances behind one address
 * need sessions that stick to an instance for the page to show it (docs/decisions.md).
 */
export class OneTimeViews<T> {
  readonly #waiting = new Map<string, Waiting<T>>();
  readonly #nowMs: () => number;

  constructor(nowMs: () => number) {
    this.#nowMs = nowMs;
  }

  /** Holds `value` for the session (by its hash) under `key`, replacing what was held there. */
  put(sessionHash: string, key: string, value: T): void {
    const nowMs = this.#nowMs();
    // Entries are kept in the order they expire (one lifetime for all), so the expired ones
    // and, past the limit, the oldest are at the front.
    for (const [name, waiting] of this.#waiting) {
      if (waiting.expiresAtMs > nowMs && this.#waiting.size < ONE_TIME_VIEWS_MAX) break;
      this.#waiting.delete(name);
    }
    const name = `${sessionHash} ${key}`;
    this.#waiting.delete(name);
    this.#waiting.set(name, { value, expiresAtMs: nowMs + ONE_TIME_VIEW_TTL_MS });
  }

  /** Removes and returns what the session holds under `key`; undefined when shown or expired. */
  take(sessionHash: string, key: string): T | undefined {
    const name = `${sessionHash} ${key}`;
    const waiting = this.#waiting.get(name);
    this.#waiting.delete(name);
    return waiting !== undefined && waiting.expiresAtMs > this.#nowMs() ? waiting.value : undefined;
  }
}
