import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AccessDirectory } from '../../modules/auth/access-directory.js';
import {
  CredentialExpiryDays,
  CredentialName,
  DisplayName,
  Password,
  RoleList,
  UserEmail,
} from '../../modules/auth/inputs.js';
import { actorOf } from '../authenticate.js';
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

const User = Type.Object({
  email: Type.String(),
  displayName: Type.String(),
  roles: Type.Array(Type.String()),
  disabled: Type.Boolean(),
  createdAt: Type.String({ format: 'date-time' }),
});

/** Users and API credentials over HTTP (docs/reference.md, Users, roles and credentials). */
export const accessRoutes: FastifyPluginAsyncTypebox<{ access: AccessDirectory }> = async (
  app,
  { access },
) => {
  registerCredentialRoutes(app, access);
  registerUserRoutes(app, access);
};

/** `/api/v1/credentials`: create a credential (its secret answered once), list them, revoke one. */
function registerCredentialRoutes(app: ApiApp, access: AccessDirectory): void {
  app.post(
    '/api/v1/credentials',
    {
      config: { permission: 'credentials:manage' },
      schema: {
        operationId: 'createCredential',
        tags: ['access'],
        summary: 'Create an API credential; the secret is in this answer only',
        body: Type.Object(
          {
            ownerEmail: Type.String({ description: 'E-mail of the user the credential acts for.' }),
            name: Type.Optional(CredentialName),
            expiresInDays: Type.Optional(CredentialExpiryDays),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Composite([Credential, Type.Object({ clientSecret: Type.String() })]),
          404: Problem,
        },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await access.createCredential(request.body, actorOf(request))),
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

  app.delete(
    '/api/v1/credentials/:clientId',
    {
      config: { permission: 'credentials:manage' },
      schema: {
        operationId: 'revokeCredential',
        tags: ['access'],
        summary: 'Revoke a credential; its tokens stop working at once',
        params: Type.Object({ clientId: PathParam }),
        response: { 204: Type.Null(), 404: Problem },
      },
    },
    async (request, reply) => {
      await access.revokeCredential(request.params.clientId, actorOf(request));
      return reply.code(204).send(null);
    },
  );
}

/** `/api/v1/users`: create a user, list them, change one. */
function registerUserRoutes(app: ApiApp, access: AccessDirectory): void {
  app.post(
    '/api/v1/users',
    {
      config: { permission: 'users:manage' },
      schema: {
        operationId: 'createUser',
        tags: ['access'],
        summary: 'Create a user',
        body: Type.Object(
          {
            email: UserEmail,
            displayName: Type.Optional(DisplayName),
            roles: RoleList,
            password: Type.Optional(Password),
          },
          { additionalProperties: false },
        ),
        response: { 201: User, 409: Problem },
      },
    },
    async (request, reply) => reply.code(201).send(await access.createUser(request.body, actorOf(request))),
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

  app.patch(
    '/api/v1/users/:email',
    {
      config: { permission: 'users:manage' },
      schema: {
        operationId: 'updateUser',
        tags: ['access'],
        summary: 'Change a user: roles, display name, disabled (takes effect on the next request)',
        params: Type.Object({ email: PathParam }),
        body: Type.Object(
          {
            roles: Type.Optional(RoleList),
            displayName: Type.Optional(DisplayName),
            disabled: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false },
        ),
        response: { 200: User, 404: Problem },
      },
    },
    async (request) => access.updateUser(request.params.email, request.body, actorOf(request)),
  );
}
