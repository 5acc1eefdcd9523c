import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { DeliveryStatusInput, REDELIVER_EVENTS_MAX } from '../../modules/events/inputs.js';
import type { WebhookService } from '../../modules/events/webhooks.js';
import { ChangeHeaders, ChangeQuery, changeOptionsOf, sendChange } from './changes.js';
import { EventIdPath } from './event-deliveries.js';
import { DeliveryAnswer, RedeliveryAnswer } from './event-delivery-answers.js';
import type { ApiApp } from './route-app.js';
import { Page, PageQuery, Problem, pageOf } from './schemas.js';

const BASE = '/api/v1/event-deliveries';

/** The query of a list of deliveries: by status, by page. */
const DeliveryListQuery = Type.Object(
  { status: Type.Optional(DeliveryStatusInput), ...PageQuery },
  { additionalProperties: false },
);

/**
 * Deliveries (docs/reference.md, Webhooks): all of them or a subscription's, one with its last
 * answer, and redelivery of one or of everything of a subscription since a time.
 */
export const eventDeliveryRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhookService }> = async (
  app,
  { webhooks },
) => {
  registerDeliveryReadRoutes(app, webhooks);
  registerRedeliveryRoutes(app, webhooks);
};

/**
 * `GET …/deliveries`, `…/subscriptions/:id/deliveries` and `…/deliveries/:id`: the deliveries of
 * every subscription or of one, newest first, and one delivery.
 */
function registerDeliveryReadRoutes(app: ApiApp, webhooks: WebhookService): void {
  app.get(
    `${BASE}/deliveries`,
    {
      config: { permission: 'webhooks:read' },
      schema: {
        operationId: 'listEventDeliveries',
        tags: ['webhooks'],
        summary: 'Deliveries of every subscription, newest first',
        querystring: DeliveryListQuery,
        response: { 200: Page(DeliveryAnswer), 400: Problem },
      },
    },
    async (request) => {
      const { status, page, limit } = request.query;
      const { rows, total } = await webhooks.listDeliveries(
        status === undefined ? {} : { status },
        page,
        limit,
      );
      return pageOf(rows, page, limit, total);
    },
  );

  app.get(
    `${BASE}/subscriptions/:id/deliveries`,
    {
      config: { permission: 'webhooks:read' },
      schema: {
        operationId: 'listEventSubscriptionDeliveries',
        tags: ['webhooks'],
        summary: 'Deliveries of one subscription, newest first',
        params: EventIdPath,
        querystring: DeliveryListQuery,
        response: { 200: Page(DeliveryAnswer), 400: Problem, 404: Problem },
      },
    },
    async (request) => {
      const { status, page, limit } = request.query;
      const subscriptionId = Number(request.params.id);
      const filter = status === undefined ? { subscriptionId } : { subscriptionId, status };
      const { rows, total } = await webhooks.listDeliveries(filter, page, limit);
      return pageOf(rows, page, limit, total);
    },
  );

  app.get(
    `${BASE}/deliveries/:id`,
    {
      config: { permission: 'webhooks:read' },
      schema: {
        operationId: 'getEventDelivery',
        tags: ['webhooks'],
        summary: 'A delivery with its last answer',
        params: EventIdPath,
        response: { 200: DeliveryAnswer, 400: Problem, 404: Problem },
      },
    },
    async (request) => webhooks.getDelivery(Number(request.params.id)),
  );
}

/** `POST …/deliveries/:id/redeliver` and `…/subscriptions/:id/redeliver`: deliveries made again. */
function registerRedeliveryRoutes(app: ApiApp, webhooks: WebhookService): void {
  app.post(
    `${BASE}/deliveries/:id/redeliver`,
    {
      config: { permission: 'webhooks:manage' },
      schema: {
        operationId: 'redeliverEventDelivery',
        tags: ['webhooks'],
        summary: 'Deliver an event again now',
        description:
          'The delivery is attempted again at once, with a fresh budget of attempts, whatever its state; the body and the `Idempotency-Key` sent to the receiver are the same as before. Written to the audit log.',
        params: EventIdPath,
        querystring: ChangeQuery,
        headers: ChangeHeaders,
        response: { 200: DeliveryAnswer, 202: DeliveryAnswer, 400: Problem, 404: Problem, 422: Problem },
      },
    },
    async (request, reply) =>
      sendChange(reply, await webhooks.redeliver(Number(request.params.id), changeOptionsOf(request)), 202),
  );

  app.post(
    `${BASE}/subscriptions/:id/redeliver`,
    {
      config: { permission: 'webhooks:manage' },
      schema: {
        operationId: 'redeliverEventSubscription',
        tags: ['webhooks'],
        summary: 'Deliver again every event of a subscription since a time',
        description: `Every kept event of the subscription's types that occurred at or after \`since\` is queued again (those recorded before the subscription existed too), oldest first; deliveries in flight are left to their attempt. At most ${REDELIVER_EVENTS_MAX} events at once (422 \`redelivery-too-large\` otherwise: choose a later time). Written to the audit log.`,
        params: EventIdPath,
        querystring: ChangeQuery,
        headers: ChangeHeaders,
        body: Type.Object(
          {
            since: Type.String({
              format: 'date-time',
              maxLength: 40,
              description: 'The earliest `occurred_at` delivered again, RFC 3339 with an offset.',
              examples: ['2026-11-25T00:00:00Z'],
            }),
          },
          { additionalProperties: false },
        ),
        response: { 200: RedeliveryAnswer, 202: RedeliveryAnswer, 400: Problem, 404: Problem, 422: Problem },
      },
    },
    async (request, reply) => {
      const since = new Date(request.body.since).toISOString();
      const outcome = await webhooks.redeliverSince(
        Number(request.params.id),
        since,
        changeOptionsOf(request),
      );
      return sendChange(reply, outcome, 202);
    },
  );
}
