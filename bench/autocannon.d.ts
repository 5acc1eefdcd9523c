/**
 * The part of autocannon 8's library interface the token benchmark uses. The package ships no
 * types and `@types/autocannon` is not a dependency, so this declares what `bench/token.ts`
 * calls and reads (autocannon README, "API"; `lib/aggregateResult.js`).
 */
declare module 'autocannon' {
  export interface Options {
    url: string;
    title?: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    method?: 'GET' | 'POST';
    headers?: Record<string, string>;
    body?: string;
  }

  /** Percentiles of one histogram; latencies are in milliseconds, requests per second. */
  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
  }

  export interface Result {
    title?: string;
    /** Seconds actually run. */
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    requests: Histogram & { total: number; sent: number };
    latency: Histogram & { totalCount: number };
    statusCodeStats: Record<string, { count: number }>;
  }

  /** Runs a load test; without a callback the returned instance is a promise of the result. */
  export default function autocannon(options: Options): Promise<Result>;
}
