import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  EventTypesInput,
  SubscriptionBody,
  SubscriptionDescriptionInput,
  SubscriptionUrlInput,
} from '../../modules/events/inputs.js';
import { EVENT_TYPES, EVENT_VERSIONS } from '../../modules/events/types.js';
import type { WebhookService } from '../../modules/events/webhooks.js';
import { ChangeHeaders, ChangeQuery, changeOptionsOf, DeletionAnswers, sendChange } from './changes.js';
import { EventTypesAnswer, SubscriptionAnswer } from './event-delivery-answers.js';
import type { ApiApp } from './route-app.js';
import { Page, PageQuery, Problem, pageOf } from './schemas.js';

/** A subscription's or a delivery's id in a path. */
export const EventIdPath = Type.Object({ id: Type.String({ pattern: '^[1-9][0-9]{0,14}$', maxLength: 15 }) });

const BASE = '/api/v1/event-deliveries';

/**
 * Webhook subscriptions (docs/reference.md, Webhooks): create, list, get, change, pause, resume,
 * delete, and the event types one may subscribe to. The secrets are `event-deliveries.secrets.ts`'s,
 * the deliveries `event-deliveries.deliveries.ts`'s.
 */
export const eventSubscriptionRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhookService }> = async (
  app,
  { webhooks },
) => {
  registerEventTypesRoute(app);
  registerCreateSubscriptionRoute(app, webhooks);
  registerSubscriptionReadRoutes(app, webhooks);
  registerUpdateSubscriptionRoute(app, webhooks);
  registerSubscriptionStatusRoutes(app, webhooks);
  registerDeleteSubscriptionRoute(app, webhooks);
};

/** `GET …/event-types`: the event types, each with the version of the shape it is sent in. */
function registerEventTypesRoute(app: ApiApp): void {
  app.get(
    `${BASE}/event-types`,
    {
      config: { permission: 'webhooks:read' },
      schema: {
        operationId: 'listEventTypes',
        tags: ['webhooks'],
        summary: 'The event types and the version of the shape each is sent in',
        response: { 200: EventTypesAnswer },
      },
    },
    async () => ({ data: EVENT_TYPES.map((type) => ({ type, version: EVENT_VERSIONS[type] })) }),
  );
}

/** `POST …/subscriptions`: subscribes a URL to event types. */
function registerCreateSubscriptionRoute(app: ApiApp, webhooks: WebhookService): void {
  app.post(
    `${BASE}/subscriptions`,
    {
      config: { permission: 'webhooks:manage' },
      schema: {
        operationId: 'createEventSubscription',
        tags: ['webhooks'],
        summary: 'Subscribe a URL to event types',
        description:
          'Every event of these types recorded from now on is POSTed to the URL, signed with the signing secret, which must exist first (409 otherwise). A URL that is not https (unless the service allows http and loopback), that holds a user name, or whose host is an address in a private, link-local, metadata or reserved range is a 400 naming `url`; host names are checked again when each attempt resolves them.',
        body: SubscriptionBody,
        querystring: ChangeQuery,
        headers: ChangeHeaders,
        response: {
          200: SubscriptionAnswer,
          201: SubscriptionAnswer,
          400: Problem,
          409: Problem,
          422: Problem,
        },
      },
    },
    async (request, reply) => {
      const outcome = await webhooks.createSubscription(request.body, changeOptionsOf(request));
      if (!outcome.dryRun) reply.header('location', `${BASE}/subscriptions/${outcome.answer.id}`);
      return sendChange(reply, outcome, 201);
    },
  );
}

/** `GET …/subscriptions` and `…/subscriptions/:id`: the subscriptions, and one. */
function registerSubscriptionReadRoutes(app: ApiApp, webhooks: WebhookService): void {
  app.get(
    `${BASE}/subscriptions`,
    {
      config: { permission: 'webhooks:read' },
      schema: {
        operationId: 'listEventSubscriptions',
        tags: ['webhooks'],
        summary: 'The subscriptions, oldest first',
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: Page(SubscriptionAnswer), 400: Problem },
      },
    },
    async (request) => {
      const { page, limit } = request.query;
      const { rows, total } = await webhooks.listSubscriptions(page, limit);
      return pageOf(rows, page, limit, total);
    },
  );

  app.get(
    `${BASE}/subscriptions/:id`,
    {
      config: { permission: 'webhooks:read' },
      schema: {
        operationId: 'getEventSubscription',
        tags: ['webhooks'],
        summary: 'A subscription',
        params: EventIdPath,
        response: { 200: SubscriptionAnswer, 400: Problem, 404: Problem },
      },
    },
    async (request) => webhooks.getSubscription(Number(request.params.id)),
  );
}

/** `PATCH …/subscriptions/:id`: changes a subscription's URL, event types or description. */
function registerUpdateSubscriptionRoute(app: ApiApp, webhooks: WebhookService): void {
  app.patch(
    `${BASE}/subscriptions/:id`,
    {
      config: { permission: 'webhooks:manage' },
      schema: {
        operationId: 'updateEventSubscription',
        tags: ['webhooks'],
        summary: 'Change a subscription’s URL, event types or description',
        description:
          'Members left out stay as they are; `description: null` removes it. The URL follows the rules of a new subscription. Deliveries already made keep the URL of their time only until their next attempt.',
        params: EventIdPath,
        body: Type.Object(
          {
            url: Type.Optional(SubscriptionUrlInput),
            eventTypes: Type.Optional(EventTypesInput),
            description: Type.Optional(Type.Union([SubscriptionDescriptionInput, Type.Null()])),
          },
          { additionalProperties: false, minProperties: 1 },
        ),
        querystring: ChangeQuery,
        headers: ChangeHeaders,
        response: { 200: SubscriptionAnswer, 400: Problem, 404: Problem, 422: Problem },
      },
    },
    async (request, reply) =>
      sendChange(
        reply,
        await webhooks.updateSubscription(Number(request.params.id), request.body, changeOptionsOf(request)),
        200,
      ),
  );
}

/** `POST …/subscriptions/:id/pause` and `…/resume`: stops and restarts a subscription's deliveries. */
function registerSubscriptionStatusRoutes(app: ApiApp, webhooks: WebhookService): void {
  for (const [action, status] of [
    ['pause', 'paused'],
    ['resume', 'active'],
  ] as const) {
    app.post(
      `${BASE}/subscriptions/:id/${action}`,
      {
        config: { permission: 'webhooks:manage' },
        schema: {
          operationId: action === 'pause' ? 'pauseEventSubscription' : 'resumeEventSubscription',
          tags: ['webhooks'],
          summary: action === 'pause' ? 'Pause a subscription' : 'Resume a paused subscription',
          description:
            action === 'pause'
              ? 'Nothing is sent while it is paused; its events wait as deliveries and are sent once it is resumed. Attempts in flight finish.'
              : 'Its waiting deliveries are sent, oldest first.',
          params: EventIdPath,
          querystring: ChangeQuery,
          headers: ChangeHeaders,
          response: { 200: SubscriptionAnswer, 400: Problem, 404: Problem, 422: Problem },
        },
      },
      async (request, reply) =>
        sendChange(
          reply,
          await webhooks.setStatus(Number(request.params.id), status, changeOptionsOf(request)),
          200,
        ),
    );
  }
}

/** `DELETE …/subscriptions/:id`: deletes a subscription with its deliveries. */
function registerDeleteSubscriptionRoute(app: ApiApp, webhooks: WebhookService): void {
  app.delete(
    `${BASE}/subscriptions/:id`,
    {
      config: { permission: 'webhooks:manage' },
      schema: {
        operationId: 'deleteEventSubscription',
        tags: ['webhooks'],
        summary: 'Delete a subscription with its deliveries',
        description:
          'With `dryRun=true` the answer (200) names the subscription that would be deleted. Written to the audit log.',
        params: EventIdPath,
        querystring: ChangeQuery,
        headers: ChangeHeaders,
        response: { ...DeletionAnswers, 400: Problem, 404: Problem, 422: Problem },
      },
    },
    async (request, reply) =>
      sendChange(
        reply,
        await webhooks.deleteSubscription(Number(request.params.id), changeOptionsOf(request)),
        204,
      ),
  );
}
