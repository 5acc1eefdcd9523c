/** Attempts of one request, the first included, before a retryable failure is final. */
export const RETRY_ATTEMPTS_MAX = 5;
/** Delay before the first retry; it doubles per attempt (full jitter, capped). */
export const RETRY_DELAY_MS_BASE = 250;
/** Longest wait between two attempts, also the cap of a server's `Retry-After`. */
export const RETRY_DELAY_MS_MAX = 10_000;

/**
 * Thrown by one attempt of `withRetries` when the failure may pass (network error, 429, 5xx).
 * `final` is the error the caller sees when no attempt is left.
 */
export class RetryableFailure extends Error {
  constructor(
    readonly reason: string,
    readonly final: (attempts: number) => Error,
    /** The wait the server asked for (`Retry-After`), if it did. */
    readonly serverDelayMs?: number,
  ) {
    super(reason);
  }
}

/** How `withRetries` waits and tells of its retries. */
export interface RetryPolicy {
  attemptsMax: number;
  delayMsBase: number;
  sleep: (ms: number) => Promise<void>;
  /** A number in [0, 1), for the jitter. */
  random: () => number;
  /** Told of every retry before the wait. */
  onRetry: (message: string) => void;
}

/**
 * Runs `attempt` until it returns, throws something other than RetryableFailure, or
 * `policy.attemptsMax` attempts failed (then the failure's `final` error is thrown). Between
 * attempts it waits with capped exponential backoff and full jitter, or the server's
 * `Retry-After` (capped too). The one retry loop of the CLI: every request goes through it.
 */
export async function withRetries<T>(
  label: string,
  policy: RetryPolicy,
  attempt: (attemptNo: number) => Promise<T>,
): Promise<T> {
  for (let attemptNo = 1; ; attemptNo += 1) {
    try {
      return await attempt(attemptNo);
    } catch (error) {
      if (!(error instanceof RetryableFailure)) throw error;
      if (attemptNo >= policy.attemptsMax) throw error.final(attemptNo);
      const ceilingMs = Math.min(RETRY_DELAY_MS_MAX, policy.delayMsBase * 2 ** (attemptNo - 1));
      const delayMs = Math.round(
        error.serverDelayMs === undefined
          ? policy.random() * ceilingMs
          : Math.min(error.serverDelayMs, RETRY_DELAY_MS_MAX),
      );
      policy.onRetry(
        `${label}: ${error.reason}; attempt ${attemptNo + 1} of ${policy.attemptsMax} in ${delayMs} ms`,
      );
      await policy.sleep(delayMs);
    }
  }
}
