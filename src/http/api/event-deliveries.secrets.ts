import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { SecretOverlapInput } from '../../modules/events/inputs.js';
import type { WebhookService } from '../../modules/events/webhooks.js';
import { ChangeHeaders, ChangeQuery, changeOptionsOf, sendChange } from './changes.js';
import { SecretAnswer, SecretDetailsAnswer } from './event-delivery-answers.js';
import { Problem } from './schemas.js';

const BASE = '/api/v1/event-deliveries/secrets';

/**
 * The signing secret of webhooks (docs/reference.md, Verifying a webhook): create, rotate with an
 * overlap, and its details. These three answers alone show a secret; they are never logged and
 * carry `Cache-Control: no-store`.
 */
export const eventSecretRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhookService }> = async (
  app,
  { webhooks },
) => {
  app.post(
    BASE,
    {
      config: { permission: 'webhooks:manage' },
      schema: {
        operationId: 'createEventSecret',
        tags: ['webhooks'],
        summary: 'Create the signing secret',
        description:
          'Shown in the answer. 409 when one exists already: rotate it instead. A dry run answers with a secret that is never kept. Written to the audit log.',
        querystring: ChangeQuery,
        headers: ChangeHeaders,
        response: { 200: SecretAnswer, 201: SecretAnswer, 400: Problem, 409: Problem, 422: Problem },
      },
    },
    async (request, reply) => {
      const outcome = await webhooks.createSecret(changeOptionsOf(request));
      return sendChange(reply.header('cache-control', 'no-store'), outcome, 201);
    },
  );

  app.post(
    `${BASE}/rotate`,
    {
      config: { permission: 'webhooks:manage' },
      schema: {
        operationId: 'rotateEventSecret',
        tags: ['webhooks'],
        summary: 'Replace the signing secret, the old one signing beside it for an overlap',
        description:
          'The new secret is shown in the answer. During the overlap every delivery carries two `v1` signatures, the new secret’s first, so receivers can switch without losing one. 409 when there is no secret yet. A dry run answers with a secret that is never kept. Written to the audit log.',
        querystring: ChangeQuery,
        headers: ChangeHeaders,
        body: Type.Optional(
          Type.Object({ overlapSeconds: Type.Optional(SecretOverlapInput) }, { additionalProperties: false }),
        ),
        response: { 200: SecretAnswer, 201: SecretAnswer, 400: Problem, 409: Problem, 422: Problem },
      },
    },
    async (request, reply) => {
      const outcome = await webhooks.rotateSecret(
        changeOptionsOf(request),
        request.body?.overlapSeconds ?? SecretOverlapInput.default,
      );
      return sendChange(reply.header('cache-control', 'no-store'), outcome, 201);
    },
  );

  app.get(
    BASE,
    {
      config: { permission: 'webhooks:manage' },
      schema: {
        operationId: 'getEventSecrets',
        tags: ['webhooks'],
        summary: 'The signing secrets in use, in clear',
        description:
          'The current secret, then any still in its overlap after a rotation. 404 before the first is created.',
        response: { 200: SecretDetailsAnswer, 404: Problem },
      },
    },
    async (_request, reply) =>
      reply.header('cache-control', 'no-store').send({ data: await webhooks.secretDetails() }),
  );
};
