import type { FastifyInstance } from 'fastify';
import { requestBegins } from '../processing/requests-in-progress.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * When the request arrived: its headers were read, its body not yet. Set by the first
     * `onRequest` hook, so before authentication and before the body.
     */
    arrivedAt: Date | undefined;
  }
}

/**
 * Stamps every request with the instant it arrived, on `now` (the services' clock), in the first
 * `onRequest` hook of the application: before the bearer lookup and before the body is read. A
 * chunk is judged by it: a request in progress when its session is closed or expires was
 * admitted when it arrived (docs/reference.md, Chunks). Register it before any other hook.
 */
export function registerArrivalTime(app: FastifyInstance, now: () => Date): void {
  app.decorateRequest('arrivedAt', undefined);
  app.addHook('onRequest', (request, _reply, done) => {
    request.arrivedAt = now();
    done();
  });
}

/**
 * Counts every request in `buffer` from its arrival until its answer is sent or its connection is
 * lost (the response's `close`, which comes once either way), for the processing thread
 * (`processing/requests-in-progress.ts`).
 */
export function registerRequestsInProgress(app: FastifyInstance, buffer: SharedArrayBuffer): void {
  app.addHook('onRequest', (_request, reply, done) => {
    reply.raw.once('close', requestBegins(buffer));
    done();
  });
}
