import type { AddressInfo } from 'node:net';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ClientAuthError, OAuthError } from '../../../modules/auth/oauth-error.js';
import type { ClientAuth, TokenService } from '../../../modules/auth/token-service.js';
import { AuthorizationServerMetadata, OAuthErrorBody, TokenAnswer } from '../answer-schemas.js';
import { FORM_MEDIA_TYPE, sendOAuthErrorAnswer } from './errors.js';

/** Largest accepted form body at the OAuth endpoints. */
export const FORM_BODY_BYTES_MAX = 8 * 1024;

/** `Basic <base64>`; the scheme name is case-insensitive (RFC 9110 11.1). */
const BASIC = /^basic +([A-Za-z0-9+/]+=*)$/i;

type Form = Map<string, string[]>;

/**
 * The refusals of the token and revocation endpoints in the OAuth form (RFC 6749, section 5.2),
 * documented under `application/json` only: a problem+json answer never meets this schema.
 */
const CLIENT_AUTH_ERRORS = {
  400: {
    description: '`invalid_request`, `invalid_grant` or `unsupported_grant_type`.',
    content: { 'application/json': { schema: OAuthErrorBody } },
  },
  401: {
    description: '`invalid_client`: the client authentication failed.',
    content: { 'application/json': { schema: OAuthErrorBody } },
  },
  403: {
    description:
      "`unauthorized_client`: the credential's owner is disabled or has no role that grants API access.",
    content: { 'application/json': { schema: OAuthErrorBody } },
  },
  503: {
    description: '`temporarily_unavailable`: the database cannot be reached or did not answer in time.',
    headers: {
      'Retry-After': Type.Integer({ minimum: 1, description: 'Seconds to wait before trying again.' }),
    },
    content: { 'application/json': { schema: OAuthErrorBody } },
  },
};

function single(form: Form, name: string): string | undefined {
  const values = form.get(name);
  if (values === undefined) return undefined;
  if (values.length !== 1) throw new OAuthError('invalid_request', `the field ${name} is repeated`);
  return values[0];
}

function required(form: Form, name: string): string {
  const value = single(form, name);
  if (value === undefined || value === '')
    throw new OAuthError('invalid_request', `the field ${name} is required`);
  return value;
}

/**
 * Client authentication by form fields or HTTP Basic (RFC 6749 2.3.1), never both at once.
 * Basic credentials are form-urlencoded before base64, as the RFC says.
 */
function clientAuthOf(request: FastifyRequest, form: Form): ClientAuth {
  const header = request.headers.authorization;
  const formId = single(form, 'client_id');
  const formSecret = single(form, 'client_secret');
  if (header !== undefined) {
    if (formSecret !== undefined) {
      throw new OAuthError('invalid_request', 'use either HTTP Basic or client_secret in the form, not both');
    }
    const match = BASIC.exec(header);
    if (match?.[1] === undefined)
      throw new OAuthError('invalid_request', 'the Authorization header is not valid Basic');
    const decoded = Buffer.from(match[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new OAuthError('invalid_request', 'the Basic credentials have no colon');
    try {
      const clientId = decodeURIComponent(decoded.slice(0, colon).replaceAll('+', ' '));
      const clientSecret = decodeURIComponent(decoded.slice(colon + 1).replaceAll('+', ' '));
      if (`${clientId}${clientSecret}`.includes('\u0000')) {
        throw new OAuthError('invalid_request', 'the Basic credentials must not contain the NUL character');
      }
      if (formId !== undefined && formId !== clientId) {
        throw new OAuthError('invalid_request', 'client_id in the form differs from the Basic credentials');
      }
      return { clientId, clientSecret, remoteAddress: request.ip };
    } catch (error) {
      if (error instanceof OAuthError) throw error;
      throw new OAuthError('invalid_request', 'the Basic credentials are not form-urlencoded');
    }
  }
  if (formId === undefined || formId === '' || formSecret === undefined) {
    throw new ClientAuthError(
      'invalid_client',
      'client authentication is required: client_id and client_secret, or HTTP Basic',
      { clientId: formId || undefined, reason: 'no-credentials' },
    );
  }
  return { clientId: formId, clientSecret: formSecret, remoteAddress: request.ip };
}

function formOf(request: FastifyRequest): Form {
  if (!(request.body instanceof Map)) {
    throw new OAuthError('invalid_request', 'the body must be application/x-www-form-urlencoded');
  }
  return request.body as Form;
}

/**
 * The base URL of the address a server listens on, `http://HOST:PORT`; `http://localhost` for an
 * app that does not listen (requests injected in-process).
 */
function listenerUrl(address: AddressInfo | string | null): string {
  if (address === null || typeof address === 'string') return 'http://localhost';
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/**
 * The OAuth 2.0 endpoints: token, revocation (RFC 7009) and the authorisation server metadata
 * (RFC 8414), whose issuer is `publicUrl`, or the listener's address when unset; never a request
 * header, which any client chooses. The token and revocation endpoints are a plugin of their own
 * that answers its errors in the OAuth form (`errors.ts`); the metadata, a document like any
 * other, answers them as problem+json.
 */
export function oauthRoutes(app: FastifyInstance, tokens: TokenService, publicUrl: string | undefined): void {
  // On the app, as it has always been, not only on the plugin of the endpoints below: a form body
  // sent to another route is read as a form there too, and refused by that route's schema.
  app.addContentTypeParser(
    FORM_MEDIA_TYPE,
    { parseAs: 'string', bodyLimit: FORM_BODY_BYTES_MAX },
    (_request, body, done) => {
      const form: Form = new Map();
      for (const [name, value] of new URLSearchParams(String(body))) {
        const values = form.get(name);
        if (values === undefined) form.set(name, [value]);
        else values.push(value);
      }
      done(null, form);
    },
  );
  app.register(async (endpoints) => tokenEndpoints(endpoints, tokens));
  app.register(async (metadata) => metadataRoute(metadata, publicUrl));
}

/** The token and revocation endpoints, whose errors are answered in the OAuth form (RFC 6749 5.2). */
function tokenEndpoints(app: FastifyInstance, tokens: TokenService): void {
  app.setErrorHandler(sendOAuthErrorAnswer);
  const noStore = { 'cache-control': 'no-store', pragma: 'no-cache' };

  app.post(
    '/auth/token',
    {
      bodyLimit: FORM_BODY_BYTES_MAX,
      schema: {
        operationId: 'issueToken',
        tags: ['auth'],
        summary: 'Request an access token (client credentials or refresh grant)',
        description:
          'Form fields `grant_type`, `client_id`, `client_secret` (or HTTP Basic), and `refresh_token` for the refresh grant. Errors are RFC 6749 `{error, error_description}` plus `reference`, the id of the request on the server log lines, which tell why a client authentication failed.',
        consumes: ['application/x-www-form-urlencoded'],
        response: { 200: TokenAnswer, ...CLIENT_AUTH_ERRORS },
      },
    },
    async (request, reply) => {
      const form = formOf(request);
      const grantType = required(form, 'grant_type');
      if (grantType !== 'client_credentials' && grantType !== 'refresh_token') {
        throw new OAuthError('unsupported_grant_type', `grant_type ${grantType} is not supported`);
      }
      const auth = clientAuthOf(request, form);
      const response: Static<typeof TokenAnswer> =
        grantType === 'client_credentials'
          ? await tokens.clientCredentialsGrant(auth)
          : await tokens.refreshGrant(auth, required(form, 'refresh_token'));
      return reply.headers(noStore).send(response);
    },
  );

  app.post(
    '/auth/revoke',
    {
      bodyLimit: FORM_BODY_BYTES_MAX,
      schema: {
        operationId: 'revokeToken',
        tags: ['auth'],
        summary: 'Revoke a token (RFC 7009)',
        description:
          'Form field `token`; client authentication as at the token endpoint. Always 200 for a known client.',
        consumes: ['application/x-www-form-urlencoded'],
        response: {
          200: Type.Object(
            {},
            { description: 'Revoked, or not a token of this client (RFC 7009, section 2.2).' },
          ),
          ...CLIENT_AUTH_ERRORS,
        },
      },
    },
    async (request, reply) => {
      const form = formOf(request);
      const token = required(form, 'token');
      await tokens.revoke(clientAuthOf(request, form), token);
      return reply.headers(noStore).send({});
    },
  );
}

/** The authorisation server metadata (RFC 8414). */
function metadataRoute(app: FastifyInstance, publicUrl: string | undefined): void {
  app.get(
    '/.well-known/oauth-authorization-server',
    {
      schema: {
        operationId: 'getAuthorizationServerMetadata',
        tags: ['auth'],
        summary: 'Authorisation server metadata (RFC 8414)',
        response: { 200: AuthorizationServerMetadata },
      },
    },
    async () => {
      const issuer = publicUrl ?? listenerUrl(app.server.address());
      return {
        issuer,
        token_endpoint: `${issuer}/auth/token`,
        revocation_endpoint: `${issuer}/auth/revoke`,
        grant_types_supported: ['client_credentials', 'refresh_token'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        response_types_supported: ['none'],
        service_documentation: `${issuer}/docs`,
      };
    },
  );
}
