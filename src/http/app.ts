import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import Fastify, { type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Services } from '../composition/services.js';
import { JSON_BODY_NESTING_DEPTH_MAX, JSON_MEDIA_TYPES, jsonBodyTooDeep } from '../lib/json-body.js';
import { nestsDeeperThan } from '../modules/entities/record-validator.js';
import type { ProcessingStatus } from '../processing/messages.js';
import type { Store } from '../storage/store.js';
import { adminInterface } from './admin/plugin.js';
import { accessRoutes } from './api/access.js';
import { approvalRequestRoutes } from './api/approval-requests.js';
import { auditLogRoutes } from './api/audit-log.js';
import { configurationRoutes } from './api/configuration.js';
import { configurationRevisionRoutes } from './api/configuration-revisions.js';
import { documentedRoute, SHARED_ANSWER_SCHEMAS } from './api/documented-answers.js';
import { entityRoutes } from './api/entities.js';
import { eventDeliveryRoutes } from './api/event-deliveries.deliveries.js';
import { eventSubscriptionRoutes } from './api/event-deliveries.js';
import { eventSecretRoutes } from './api/event-deliveries.secrets.js';
import { extractRoutes } from './api/extract-configurations.js';
import { extractExecutionRoutes } from './api/extract-executions.js';
import { ingestionRoutes } from './api/ingestions.js';
import { journalRoutes } from './api/journals.js';
import { oauthRoutes } from './api/oauth/routes.js';
import { operationsRoutes } from './api/operations.js';
import { periodRoutes } from './api/periods.js';
import { reprocessingRoutes } from './api/reprocessing.js';
import { reversalRoutes } from './api/reversals.js';
import type { ApiApp } from './api/route-app.js';
import { statisticsRoutes } from './api/statistics.js';
import { registerArrivalTime, registerRequestsInProgress } from './arrival.js';
import { registerAuthentication } from './authenticate.js';
import { registerNulGuard } from './nul-guard.js';
import { registerProblemHandlers, sendRouterProblem } from './problem.js';
import { registerRateLimit } from './rate-limit.js';
import { REQUEST_LOG_SERIALIZERS } from './request-log.js';
import { type ServerTimeouts, serverTimeoutOptions } from './server-timeouts.js';

/** Largest JSON body of an ordinary endpoint; the chunk and configuration routes set their own. */
export const JSON_BODY_BYTES_MAX = 1024 * 1024;

export { JSON_BODY_NESTING_DEPTH_MAX } from '../lib/json-body.js';

export interface AppDeps {
  store: Store;
  services: Services;
  /** A pino logger configuration or instance; tests pass `false` or a capturing stream. */
  logger?: FastifyServerOptions['logger'] | FastifyServerOptions['loggerInstance'];
  version?: string;
  /** Proxies believed in `X-Forwarded-For` for the client address (`TRUST_PROXY`); none by default. */
  trustProxy?: boolean | string[];
  /**
   * The base URL clients reach the service at, the issuer of the OAuth metadata (`PUBLIC_URL`);
   * unset means the address the server listens on.
   */
  publicUrl?: string;
  /** How long clients may take to send a request; tests shorten them. */
  serverTimeouts?: ServerTimeouts;
  /**
   * Where background processing runs (`main.ts`: the processing thread or this thread), for
   * `/readyz` and the metrics; absent where the caller runs no processing of its own (tests).
   */
  processingStatus?: () => ProcessingStatus;
  /**
   * Where the requests in progress are counted for processing, which pauses while they are many
   * (`processing/requests-in-progress.ts`); absent where the caller runs no processing that reads it.
   */
  requestsInProgress?: SharedArrayBuffer;
  /**
   * Whether the process still has start-up work that requests need (`main.ts`: the first
   * administrator and the bootstrap credential, made once the port is taken): `/readyz` answers
   * 503 meanwhile. Absent: ready as soon as the store answers.
   */
  startingUp?: () => boolean;
}

function ajvFor(options: { coerceTypes: boolean | 'array' }): Ajv {
  // Bodies are validated strictly (no coercion, unknown members rejected);
  // query strings and path parameters are text, so they are coerced to the schema's types.
  const ajv = new Ajv({
    allErrors: true,
    removeAdditional: false,
    useDefaults: true,
    coerceTypes: options.coerceTypes,
    strict: false,
  });
  addFormats.default(ajv);
  return ajv;
}

/**
 * Fastify's logger options for a pino configuration or instance, with the request serializer
 * that keeps secrets of the query out of the logged URL.
 */
function loggerOptionsOf(logger: AppDeps['logger']): Pick<FastifyServerOptions, 'logger' | 'loggerInstance'> {
  if (logger === undefined || logger === false) return { logger: false };
  if (typeof logger === 'object' && 'child' in logger) {
    return { loggerInstance: logger.child({}, { serializers: REQUEST_LOG_SERIALIZERS }) };
  }
  const options = logger === true ? {} : logger;
  return { logger: { ...options, serializers: { ...options.serializers, ...REQUEST_LOG_SERIALIZERS } } };
}

/**
 * Builds the HTTP application with every plugin and route registered. It never listens:
 * `main.ts` does, and tests call `app.inject` (style: "build the app, never listen").
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { services } = deps;
  const app = createFastify(deps);
  registerArrivalTime(app, () => services.ingestion.now());
  if (deps.requestsInProgress !== undefined) registerRequestsInProgress(app, deps.requestsInProgress);
  registerValidators(app);
  registerJsonParser(app);
  registerProblemHandlers(app);
  registerNulGuard(app);
  registerClosingConnections(app);
  const registry = registerMetrics(app, services, deps.processingStatus);
  // Before every route, so that each is limited unless its config says otherwise.
  await registerRateLimit(app, services.requestLimiter);
  await registerOpenApi(app, deps);
  // Background work and worker threads belong to the app's lifetime: stopped before storage closes.
  app.addHook('onClose', async () => services.close());
  registerAuthentication(app, services.tokens);
  await registerRoutes(app, deps, registry);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}

/** The Fastify instance with the server's options: logger, body limit, request ids, timeouts. */
function createFastify(deps: AppDeps): ApiApp {
  return Fastify({
    ...loggerOptionsOf(deps.logger),
    bodyLimit: JSON_BODY_BYTES_MAX,
    genReqId: () => randomUUID(),
    logController: new LogController({ requestIdLogLabel: 'reference' }),
    requestIdHeader: false,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    trustProxy: deps.trustProxy ?? false,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    frameworkErrors: sendRouterProblem,
    ...serverTimeoutOptions(deps.serverTimeouts),
  }).withTypeProvider<TypeBoxTypeProvider>();
}

/** The validators of every route: bodies strictly, query strings and path parameters coerced. */
function registerValidators(app: FastifyInstance): void {
  const bodyAjv = ajvFor({ coerceTypes: false });
  const textAjv = ajvFor({ coerceTypes: 'array' });
  app.setValidatorCompiler(({ schema, httpPart }) =>
    httpPart === 'body' ? bodyAjv.compile(schema) : textAjv.compile(schema),
  );
}

/** The one JSON parser of every JSON media type, which refuses bodies nested too deep. */
function registerJsonParser(app: FastifyInstance): void {
  // One JSON parser for every JSON media type. An empty body is no body where the route takes
  // none (many clients send `Content-Type: application/json` on a DELETE without a body); where
  // the route documents a body, an empty one stays a 400 that says a JSON document is expected.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  // Fastify's own text/plain parser would hand a JSON route a string, answered 400 "must be
  // object"; without it every route taking JSON answers another content type 415, as chunks do.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser(JSON_MEDIA_TYPES, { parseAs: 'string' }, (request, body, done) => {
    if (body.length === 0 && request.routeOptions.schema?.body === undefined) {
      done(null, undefined);
      return;
    }
    parseJson(request, String(body), (error, parsed: unknown) => {
      if (error === null && nestsDeeperThan(parsed, JSON_BODY_NESTING_DEPTH_MAX)) {
        done(jsonBodyTooDeep());
        return;
      }
      done(error, parsed);
    });
  });
}

/**
 * Answers sent while stopping close their connection, so a keep-alive client does not hold
 * the process open after its last request in flight is answered.
 */
function registerClosingConnections(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });
}

/**
 * The metrics `/metrics` answers, in this order: requests, background processing (when the
 * caller runs it), reprocessing and webhook deliveries.
 */
function registerMetrics(
  app: FastifyInstance,
  services: Services,
  processingStatus: AppDeps['processingStatus'],
): Registry {
  const registry = new Registry();
  registerRequestMetrics(app, registry);
  if (processingStatus !== undefined) registerProcessingMetrics(registry, processingStatus);
  registerReprocessingMetrics(registry, services.reprocessing);
  registerWebhookMetrics(registry, services.deliverer);
  return registry;
}

/** HTTP requests counted and timed by method, route and status, as each answer is sent. */
function registerRequestMetrics(app: FastifyInstance, registry: Registry): void {
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route and status.',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency, by method, route and status.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status_code: String(reply.statusCode),
    };
    requests.inc(labels);
    latency.observe(labels, reply.elapsedTime / 1000);
  });
}

/** Where background processing runs: the processing thread's restarts, and whether it is degraded. */
function registerProcessingMetrics(registry: Registry, processingStatus: () => ProcessingStatus): void {
  new Counter({
    name: 'processing_thread_restarts_total',
    help: 'Times the processing thread was started again after ending unexpectedly.',
    registers: [registry],
    collect() {
      // The host counts; the counter shows its count, which only grows.
      this.reset();
      this.inc(processingStatus().threadRestarts);
    },
  });
  new Gauge({
    name: 'processing_degraded',
    help: '1 while background processing runs degraded: on the main thread after the processing thread ended too often, or not at all; else 0.',
    registers: [registry],
    collect() {
      this.set(processingStatus().degraded ? 1 : 0);
    },
  });
}

/** Reprocessing, read from the store at each scrape, so every instance shows the same figures. */
function registerReprocessingMetrics(registry: Registry, reprocessing: Services['reprocessing']): void {
  new Gauge({
    name: 'processing_errors',
    help: 'Processing errors by state: open (to fix), queued (waiting in a reprocessing run), closed (posted when reprocessed).',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const states = await reprocessing.errorStates();
      for (const [state, n] of Object.entries(states)) this.set({ state }, n);
    },
  });
  new Gauge({
    name: 'reprocessing_last_run_records',
    help: 'Records of the newest reprocessing run by outcome: queued, skipped (at the maximum of attempts), posted, still_failing.',
    labelNames: ['outcome'] as const,
    registers: [registry],
    async collect() {
      const last = (await reprocessing.runs(0, 1)).rows[0];
      this.set({ outcome: 'queued' }, last?.queued ?? 0);
      this.set({ outcome: 'skipped' }, last?.skipped ?? 0);
      this.set({ outcome: 'posted' }, last?.posted ?? 0);
      this.set({ outcome: 'still_failing' }, last?.stillFailing ?? 0);
    },
  });
  new Counter({
    name: 'reprocessing_runs_total',
    help: 'Reprocessing runs started, manual and scheduled, on every instance.',
    registers: [registry],
    async collect() {
      this.reset();
      this.inc((await reprocessing.runs(0, 1)).total);
    },
  });
}

/** Webhook attempts of this instance (each attempt is made by one instance: sum over them). */
function registerWebhookMetrics(registry: Registry, deliverer: Services['deliverer']): void {
  const webhookAttempts = new Counter({
    name: 'webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts made by this instance, by outcome: delivered (2xx), retry (will be tried again), failed (for good).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const webhookLatency = new Histogram({
    name: 'webhook_delivery_duration_seconds',
    help: 'How long webhook delivery attempts of this instance took, until the answer or the failure.',
    labelNames: ['outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  deliverer.observe(({ outcome, seconds }) => {
    webhookAttempts.inc({ outcome });
    webhookLatency.observe({ outcome }, seconds);
  });
}

/** The tags of the OpenAPI document: client generators group operations by them, each operation names one. */
const OPENAPI_TAGS = [
  {
    name: 'auth',
    description: 'OAuth 2.0 tokens (client credentials and refresh grants) and their revocation.',
  },
  { name: 'access', description: 'Users, their roles, and the API credentials that act for them.' },
  {
    name: 'configuration',
    description: 'The Configuration Data document, its revisions and their changes.',
  },
  {
    name: 'audit',
    description: 'The tamper-evident audit trail of every change: its pages, export and verification.',
  },
  {
    name: 'entities',
    description: 'Namespaces and entities of the configuration, with example chunks.',
  },
  {
    name: 'ingestion',
    description: 'Ingestion sessions, their chunks of records, and what they stored.',
  },
  {
    name: 'journals',
    description: 'Journals, balances and processing errors made by the accounting engine.',
  },
  {
    name: 'periods',
    description: 'Periods per node: their state, closing early, locking, reopening, trial-balance snapshots.',
  },
  { name: 'statistics', description: 'Counters of the operational dashboard.' },
  {
    name: 'approvals',
    description:
      'Four-eyes approval: configuration uploads, deletions and reversals that wait for a second user.',
  },
  {
    name: 'extracts',
    description:
      'Extraction configurations, their reads and incremental offsets, and asynchronous extractions.',
  },
  {
    name: 'webhooks',
    description:
      'Events delivered to subscribed URLs: subscriptions, the signing secret, deliveries and their redelivery.',
  },
  { name: 'operations', description: 'Liveness, readiness and metrics; no token and no rate limit.' },
];

/** The OpenAPI document of the routes registered after it, and its pages at `/docs`. */
async function registerOpenApi(app: FastifyInstance, deps: AppDeps): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Ledgerflow API',
        version: deps.version ?? '0.1.0',
        description:
          'Financial data platform: ingestion sessions and chunks, Configuration Data, journals. Every /api/v1 call needs an OAuth 2.0 bearer token from POST /auth/token.',
      },
      // The service is self-hosted: paths are relative to wherever this document is served.
      servers: [{ url: '/', description: 'The service that serves this document.' }],
      tags: OPENAPI_TAGS,
      components: {
        schemas: SHARED_ANSWER_SCHEMAS,
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          oauth2: {
            type: 'oauth2',
            flows: { clientCredentials: { tokenUrl: '/auth/token', refreshUrl: '/auth/token', scopes: {} } },
          },
        },
      },
      security: [],
    },
    transform: documentedRoute(deps.services.requestLimiter.enabled),
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
}

/**
 * Every route: operations, OAuth, the REST plugins, each given the services it calls, and the
 * administration interface. Their order is the order of the OpenAPI document.
 */
async function registerRoutes(app: ApiApp, deps: AppDeps, registry: Registry): Promise<void> {
  const { store, services } = deps;
  operationsRoutes(app, store, registry, deps.processingStatus, deps.startingUp);
  oauthRoutes(app, services.tokens, deps.publicUrl);
  await app.register(accessRoutes, { access: services.access });
  await app.register(configurationRoutes, {
    configuration: services.configuration,
    approvals: services.approvals,
  });
  await app.register(auditLogRoutes, { audit: services.audit });
  await app.register(configurationRevisionRoutes, { revisions: services.revisions });
  await app.register(entityRoutes, { catalog: services.catalog });
  await app.register(ingestionRoutes, { ingestion: services.ingestion });
  await app.register(statisticsRoutes, { statistics: services.statistics });
  await app.register(journalRoutes, { journals: services.journals });
  await app.register(reprocessingRoutes, { reprocessing: services.reprocessing });
  await app.register(reversalRoutes, { reversals: services.reversals, approvals: services.approvals });
  await app.register(approvalRequestRoutes, { approvals: services.approvals });
  await app.register(periodRoutes, { periods: services.periods, approvals: services.approvals });
  await app.register(extractRoutes, { extracts: services.extracts });
  await app.register(extractExecutionRoutes, { executions: services.extractExecutions });
  await app.register(eventSubscriptionRoutes, { webhooks: services.webhooks });
  await app.register(eventSecretRoutes, { webhooks: services.webhooks });
  await app.register(eventDeliveryRoutes, { webhooks: services.webhooks });
  await app.register(adminInterface, { services, publicUrl: deps.publicUrl });
}
