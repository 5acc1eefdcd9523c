import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Registry } from 'prom-client';
import { AppError } from '../../lib/errors.js';
import type { ProcessingStatus } from '../../processing/messages.js';
import { StoreUnavailableError } from '../../storage/errors.js';
import type { Store } from '../../storage/store.js';
import { Health, Readiness } from './answer-schemas.js';
import { Problem } from './schemas.js';

/**
 * Liveness, readiness and metrics (docs/reference.md, Operations); none needs a token, and none
 * is rate limited, so probes and scrapers see the service as it is under any load. `/readyz`
 * says so when `processingStatus` reports background processing degraded; the service still
 * answers requests then, so it stays ready.
 */
export function operationsRoutes(
  app: FastifyInstance,
  store: Store,
  registry: Registry,
  processingStatus?: () => ProcessingStatus,
): void {
  app.get(
    '/healthz',
    {
      config: { rateLimit: false },
      schema: {
        operationId: 'getHealth',
        tags: ['operations'],
        summary: 'The process is alive',
        response: { 200: Health },
      },
    },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      config: { rateLimit: false },
      schema: {
        operationId: 'getReadiness',
        tags: ['operations'],
        summary: 'Storage is reachable',
        response: { 200: Readiness, 503: Problem },
      },
    },
    async () => {
      // A store that cannot be reached or does not answer within its timeouts is not ready; the
      // error handler answers 503 for StoreUnavailableError, and for anything else so does this.
      try {
        await sql`select 1`.execute(store.db);
      } catch (error) {
        if (error instanceof StoreUnavailableError) throw error;
        throw new AppError('unavailable', 'storage is not reachable');
      }
      const processing = processingStatus?.();
      if (processing === undefined || !processing.degraded) return { status: 'ready' };
      return {
        status: 'ready',
        processing: { state: 'degraded', runsOn: processing.runsOn, detail: processing.detail },
      };
    },
  );

  app.get(
    '/metrics',
    {
      config: { rateLimit: false },
      schema: {
        operationId: 'getMetrics',
        tags: ['operations'],
        summary: 'Prometheus metrics',
        hide: false,
        response: {
          200: {
            description: 'The metrics in the Prometheus text format.',
            content: { 'text/plain': { schema: Type.String() } },
          },
        },
      },
    },
    async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()),
  );
}
