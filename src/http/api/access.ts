import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AccessDirectory } from '../../modules/auth/access-directory.js';
import { CredentialCreateBody, UserCreateBody, UserUpdateBody } from '../../modules/auth/inputs.js';
import { ChangeHeaders, ChangeQuery, changeOptionsOf, sendChange } from './changes.js';
import type { ApiApp } from './route-app.js';
import { Page, PageQuery, PathParam, Problem, pageOf } from './schemas.js';

const Credential = Type.Object({
  clientId: Type.String(),
  ownerEmail: Type.String(),
  name: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  expiresAt: Type.String({ format: 'date-time' }),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

/** A credential as a revocation answers it (a dry run shows it; a revocation itself answers 204). */
const RevokedCredential = Type.Composite(
  [Credential, Type.Object({ lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]) })],
  { description: 'The credential as it would be once revoked.' },
);

const User = Type.Object({
  email: Type.String(),
  displayName: Type.String(),
  roles: Type.Array(Type.String()),
  disabled: Type.Boolean(),
  createdAt: Type.String({ format: 'date-time' }),
});

const CreatedCredential = Type.Composite([Credential, Type.Object({ clientSecret: Type.String() })]);

/** Users and API credentials over HTTP (docs/reference.md, Users, roles and credentials). */
export const accessRoutes: FastifyPluginAsyncTypebox<{ access: AccessDirectory }> = async (
  app,
  { access },
) => {
  registerCredentialRoutes(app, access);
  registerRevokeRoute(app, access);
  registerUserRoutes(app, access);
  registerUserUpdateRoute(app, access);
};

/** `/api/v1/credentials`: create a credential (its secret answered once), list them. */
function registerCredentialRoutes(app: ApiApp, access: AccessDirectory): void {
  app.post(
    '/api/v1/credentials',
    {
      config: { permission: 'credentials:manage' },
      schema: {
        operationId: 'createCredential',
        tags: ['access'],
        summary: 'Create an API credential; the secret is in this answer only',
        description:
          'The secret is in this answer only; a repeat of its `Idempotency-Key` answers it again, kept sealed meanwhile. 404 when the owner is unknown. A dry run answers with a client id and a secret that are never kept. Written to the audit log.',
        querystring: ChangeQuery,
        headers: ChangeHeaders,
        body: CredentialCreateBody,
        response: { 200: CreatedCredential, 201: CreatedCredential, 404: Problem, 422: Problem },
      },
    },
    async (request, reply) => {
      const outcome = await access.createCredential(request.body, changeOptionsOf(request));
      return sendChange(reply.header('cache-control', 'no-store'), outcome, 201);
    },
  );

  app.get(
    '/api/v1/credentials',
    {
      config: { permission: 'credentials:manage' },
      schema: {
        operationId: 'listCredentials',
        tags: ['access'],
        summary: 'List credentials (never a secret)',
        querystring: Type.Object(PageQuery),
        response: { 200: Page(Credential) },
      },
    },
    async (request) => {
      const { page, limit } = request.query;
      const { rows, total } = await access.listCredentials(page, limit);
      return pageOf(rows, page, limit, total);
    },
  );
}

/** `DELETE /api/v1/credentials/{clientId}`: revokes a credential. */
function registerRevokeRoute(app: ApiApp, access: AccessDirectory): void {
  app.delete(
    '/api/v1/credentials/:clientId',
    {
      config: { permission: 'credentials:manage' },
      schema: {
        operationId: 'revokeCredential',
        tags: ['access'],
        summary: 'Revoke a credential; its tokens stop working at once',
        description:
          'Revoking a credential revoked before changes nothing and answers 204 too. A dry run answers 200 with the credential as it would be once revoked. Written to the audit log.',
        params: Type.Object({ clientId: PathParam }),
        querystring: ChangeQuery,
        headers: ChangeHeaders,
        response: { 200: RevokedCredential, 204: Type.Null(), 404: Problem, 422: Problem },
      },
    },
    async (request, reply) =>
      sendChange(
        reply,
        await access.revokeCredential(request.params.clientId, changeOptionsOf(request)),
        204,
      ),
  );
}

/** `/api/v1/users`: create a user, list them. */
function registerUserRoutes(app: ApiApp, access: AccessDirectory): void {
  app.post(
    '/api/v1/users',
    {
      config: { permission: 'users:manage' },
      schema: {
        operationId: 'createUser',
        tags: ['access'],
        summary: 'Create a user',
        description: '409 when a user has this e-mail already. Written to the audit log.',
        querystring: ChangeQuery,
        headers: ChangeHeaders,
        body: UserCreateBody,
        response: { 200: User, 201: User, 409: Problem, 422: Problem },
      },
    },
    async (request, reply) =>
      sendChange(reply, await access.createUser(request.body, changeOptionsOf(request)), 201),
  );

  app.get(
    '/api/v1/users',
    {
      config: { permission: 'users:manage' },
      schema: {
        operationId: 'listUsers',
        tags: ['access'],
        summary: 'List users',
        querystring: Type.Object(PageQuery),
        response: { 200: Page(User) },
      },
    },
    async (request) => {
      const { page, limit } = request.query;
      const { rows, total } = await access.listUsers(page, limit);
      return pageOf(rows, page, limit, total);
    },
  );
}

/** `PATCH /api/v1/users/{email}`: changes a user. */
function registerUserUpdateRoute(app: ApiApp, access: AccessDirectory): void {
  app.patch(
    '/api/v1/users/:email',
    {
      config: { permission: 'users:manage' },
      schema: {
        operationId: 'updateUser',
        tags: ['access'],
        summary: 'Change a user: roles, display name, disabled (takes effect on the next request)',
        description:
          'The last enabled administrator can be neither disabled nor demoted (409). Written to the audit log when it changes something.',
        params: Type.Object({ email: PathParam }),
        querystring: ChangeQuery,
        headers: ChangeHeaders,
        body: UserUpdateBody,
        response: { 200: User, 404: Problem, 409: Problem, 422: Problem },
      },
    },
    async (request, reply) =>
      sendChange(
        reply,
        await access.updateUser(request.params.email, request.body, changeOptionsOf(request)),
        200,
      ),
  );
}
