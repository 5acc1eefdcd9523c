import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { Registry } from 'prom-client';
import { AppError } from '../../lib/errors.js';
import type { ProcessingStatus } from '../../processing/messages.js';
import { StoreUnavailableError } from '../../storage/errors.js';
import type { Store } from '../../storage/store.js';
import { sendProblem } from '../problem.js';
import { Health, Readiness } from './answer-schemas.js';
import { Problem } from './schemas.js';

/** How long a probe is asked to wait (`Retry-After`) while the process is still starting. */
const STARTING_RETRY_AFTER_SECONDS = 1;
const STARTING_HEADERS = { 'retry-after': String(STARTING_RETRY_AFTER_SECONDS) };
/** What `/readyz` says while the process is still starting. */
export const STARTING_DETAIL =
  'the service is starting: the first administrator and the bootstrap credential are not ready yet';

/**
 * The answer of `/readyz`: 503 while the process is starting or the store does not answer, else
 * ready, saying so when background processing runs degraded.
 */
async function answerReadiness(
  request: FastifyRequest,
  reply: FastifyReply,
  store: Store,
  processingStatus: (() => ProcessingStatus) | undefined,
  startingUp: () => boolean,
) {
  // Answered here rather than thrown: a probe during start-up is expected, not an error to
  // log. Its Retry-After is short, because start-up work takes a moment.
  if (startingUp()) return sendProblem(request, reply, 'unavailable', STARTING_DETAIL, {}, STARTING_HEADERS);
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
}

/**
 * Liveness, readiness and metrics (docs/reference.md, Operations); none needs a token, and none
 * is rate limited, so probes and scrapers see the service as it is under any load. `/healthz`
 * answers as soon as the process listens; `/readyz` answers 503 while `startingUp` says the
 * process still has start-up work that requests need (main.ts: the first administrator and the
 * bootstrap credential, made once the port is taken) or the store does not answer. It says so when `processingStatus` reports
 * background processing degraded; the service still answers requests then, so it stays ready.
 */
export function operationsRoutes(
  app: FastifyInstance,
  store: Store,
  registry: Registry,
  processingStatus?: () => ProcessingStatus,
  startingUp: () => boolean = () => false,
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
        summary: 'Start-up is done and storage is reachable',
        response: { 200: Readiness, 503: Problem },
      },
    },
    async (request, reply) => answerReadiness(request, reply, store, processingStatus, startingUp),
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
