import rateLimit, { type FastifyRateLimitStore, normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../lib/errors.js';
import type { RequestLimiter } from '../modules/auth/request-limiter.js';

/**
 * Whom a request is counted against: the authenticated client (the bearer hook runs first, as an
 * application hook, before this route hook), else the remote address, IPv6 addresses by their
 * /64 as the plugin does by default (one host usually holds a whole /64).
 */
function keyOf(request: FastifyRequest): string {
  return request.principal === undefined
    ? `address ${normalizeIP(request.ip)}`
    : `client ${request.principal.clientId}`;
}

/** Who is limited, as a refusal names it. */
function subjectOf(request: FastifyRequest): string {
  return request.principal === undefined ? 'this address' : `the client ${request.principal.clientId}`;
}

/**
 * The per-client rate limit (docs/reference.md, Rate limits): `@fastify/rate-limit` on every
 * route registered after this call, except those whose config says `rateLimit: false` (health,
 * readiness, metrics), counted by `limiter` (in memory, shared through the store). A request over
 * the limit is refused in the `onRequest` phase, before its body is read, with 429
 * `too-many-requests` and `Retry-After` (the OAuth error form at the OAuth endpoints, see `api/oauth/errors.ts`).
 * Registers nothing when the limit is off (`RATE_LIMIT_MAX=0`).
 */
export async function registerRateLimit(app: FastifyInstance, limiter: RequestLimiter): Promise<void> {
  if (!limiter.enabled) return;
  const { max, windowMs } = limiter.settings;
  /** The plugin's store interface over the limiter; routes share one count per key. */
  class SharedRequestCounts implements FastifyRateLimitStore {
    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void) {
      const { requests, windowLeftMs } = limiter.count(key);
      callback(null, { current: requests, ttl: windowLeftMs });
    }
    child(): FastifyRateLimitStore {
      return this;
    }
  }
  await app.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    max,
    timeWindow: windowMs,
    store: SharedRequestCounts,
    keyGenerator: keyOf,
    errorResponseBuilder: (request, context) => {
      const retryAfterSeconds = Math.max(1, Math.ceil(context.ttl / 1000));
      return new AppError(
        'too-many-requests',
        `${subjectOf(request)} made more than ${max} requests in ${windowMs / 1000} s; try again in ${retryAfterSeconds} s`,
        { limit: max, windowMs },
        { retryAfterSeconds },
      );
    },
  });
}
