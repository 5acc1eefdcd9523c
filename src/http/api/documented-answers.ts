/**
 * What the OpenAPI document says of every route beyond the route's own schema: the answers the
 * application's hooks and handlers give on any route (401 and 403 from the bearer hook, 429 and
 * the rate-limit headers from the limit, 413 and 415 from the body parsers, 400 from the NUL
 * guard and the router, 503 when the store cannot be reached, 500), the security requirement
 * and the permission, written once here rather than on every route.
 *
 * It is the swagger `transform`, so it changes the document only: the answers are built and
 * serialised exactly as without it. An `onRoute` hook adding response schemas would instead put
 * fast-json-stringify in the path of answers sent today as they are (a 429 at `/auth/*` is in
 * the OAuth form, which a problem schema would fail to serialise).
 */

import type { SwaggerTransform } from '@fastify/swagger';
import { type TSchema, Type } from '@sinclair/typebox';
import type { FastifySchema, RouteOptions } from 'fastify';
import { OAuthErrorBody, Problem } from './answer-schemas.js';

/** The media type of every error answer outside `/auth/*` (RFC 9457). */
const PROBLEM_MEDIA_TYPE = 'application/problem+json';

/** The methods whose requests may carry a body that the app's parsers read (413, 415). */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The headers `@fastify/rate-limit` sends on every answer of a limited route once the request
 * has been counted (`http/rate-limit.ts`): after the bearer hook, so never on its 401 and 403.
 */
const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': Type.Integer({
    minimum: 1,
    description: 'Requests a client (or an address without a token) may make per window (`RATE_LIMIT_MAX`).',
  }),
  'X-RateLimit-Remaining': Type.Integer({ minimum: 0, description: 'Requests left in the current window.' }),
  'X-RateLimit-Reset': Type.Integer({ minimum: 0, description: 'Seconds until the current window ends.' }),
};

const RETRY_AFTER_LIMITED = Type.Integer({
  minimum: 1,
  description: 'Seconds until the window ends and the client may send again.',
});

const RETRY_AFTER_UNAVAILABLE = Type.Integer({
  minimum: 1,
  description: 'Seconds to wait before trying again.',
});

const WWW_AUTHENTICATE = Type.String({
  description:
    'The bearer challenge (RFC 6750, section 3): `Bearer realm="ledgerflow"` without a token, `error="invalid_token"` with one that is not valid, `error="invalid_request"` when the header is not of the form `Bearer <token>`.',
});

/** What each error status means on any route, where the route does not say more. */
const ERROR_DESCRIPTIONS: Record<string, string> = {
  '400': 'The request is not valid: the answer says which rule it broke and where.',
  '401': 'No access token, or one that is not valid (unknown, expired or revoked).',
  '403': 'The token lacks the permission this operation needs.',
  '404': 'The resource does not exist.',
  '409': 'The request conflicts with the current state.',
  '412': 'The configuration changed since the revision `If-Match` names; nothing changed.',
  '413': 'The body is larger than this operation accepts.',
  '415': 'The body is not of a media type this operation accepts.',
  '422': 'The idempotency key was used before with another body.',
  '429': 'Too many requests from this client (or address) in the current window; nothing was done.',
  '500': 'An unexpected error; quote the `reference` when reporting it.',
  '503': 'The database cannot be reached or did not answer in time; try again shortly.',
};

/**
 * The error bodies every route shares, as named schemas of the document (`components.schemas`),
 * so that a generated client has one type for each instead of one per answer.
 */
export const SHARED_ANSWER_SCHEMAS = { Problem, OAuthError: OAuthErrorBody } as const;

/** The bodies of an answer by media type, as OpenAPI's `content`. */
type MediaTypes = Record<string, { schema: TSchema }>;

/** A reference to the shared schema `schema` is, or `schema` itself. */
function referenceTo(schema: TSchema): TSchema {
  for (const [name, shared] of Object.entries(SHARED_ANSWER_SCHEMAS)) {
    if (schema === shared) return Type.Unsafe({ $ref: `#/components/schemas/${name}` });
  }
  return schema;
}

/** A `content` map with its shared schemas referenced. */
function withReferences(content: MediaTypes): MediaTypes {
  return Object.fromEntries(
    Object.entries(content).map(([mediaType, media]) => [
      mediaType,
      { ...media, schema: referenceTo(media.schema) },
    ]),
  );
}

/** A route's answer as the swagger plugin reads it: a schema, or a `content` map by media type. */
type Answer = TSchema | { description: string; headers?: Record<string, TSchema>; content: MediaTypes };

/** The answers of a route, by status. */
type Answers = Record<string, Answer>;

/**
 * A route's schema with what the application does on it; `rateLimited` says whether the rate
 * limit is on (`RATE_LIMIT_MAX` above 0). Declared answers win; a declared error body is put
 * under the media type it is sent as.
 */
function documentedSchema(schema: FastifySchema, url: string, route: RouteOptions, rateLimited: boolean) {
  const needsToken = route.config?.permission !== undefined;
  // The OAuth endpoints answer errors in the OAuth form (RFC 6749, section 5.2), not problem+json;
  // an unexpected error (500) is problem+json everywhere (`problem.ts`).
  const oauthForm = url.startsWith('/auth/');
  const errorAnswer = (status: string, body: TSchema = oauthForm ? OAuthErrorBody : Problem): Answer => ({
    description: ERROR_DESCRIPTIONS[status] ?? 'An error.',
    content: {
      [oauthForm && status !== '500' ? 'application/json' : PROBLEM_MEDIA_TYPE]: {
        schema: referenceTo(body),
      },
    },
  });

  const answers: Answers = {};
  for (const [status, declared] of Object.entries((schema.response ?? {}) as Answers)) {
    if (Number(status) < 400) answers[status] = declared;
    else if (!('content' in declared)) answers[status] = errorAnswer(status, declared);
    else answers[status] = { ...declared, content: withReferences(declared.content) };
  }
  const add = (status: string, answer: Answer): void => {
    answers[status] ??= answer;
  };
  // The NUL guard and the router refuse a bad query or path on every route.
  add('400', errorAnswer('400'));
  if (needsToken) {
    add('401', { ...errorAnswer('401'), headers: { 'WWW-Authenticate': WWW_AUTHENTICATE } });
    add('403', errorAnswer('403'));
    // The bearer token is looked up in the store on every request.
    add('503', { ...errorAnswer('503'), headers: { 'Retry-After': RETRY_AFTER_UNAVAILABLE } });
  }
  if ([route.method].flat().some((method) => BODY_METHODS.has(method))) {
    add('413', errorAnswer('413'));
    add('415', errorAnswer('415'));
  }
  const limited = rateLimited && route.config?.rateLimit !== false;
  if (limited) add('429', { ...errorAnswer('429'), headers: { 'Retry-After': RETRY_AFTER_LIMITED } });
  add('500', errorAnswer('500', Problem));
  if (!limited) return { ...schema, response: answers };

  const withLimitHeaders: Answers = {};
  for (const [status, answer] of Object.entries(answers)) {
    const refusedByBearerHook = needsToken && (status === '401' || status === '403');
    const counted = /^[24]/.test(status) && !refusedByBearerHook;
    withLimitHeaders[status] = counted
      ? { ...answer, headers: { ...RATE_LIMIT_HEADERS, ...('headers' in answer ? answer.headers : {}) } }
      : answer;
  }
  return { ...schema, response: withLimitHeaders };
}

/**
 * The swagger `transform` of the application (`app.ts`): each route's schema with the answers
 * above and, for a route that needs a permission, the bearer security requirement and the
 * permission named in its description. Hidden routes are left alone.
 */
export function documentedRoute(rateLimited: boolean): SwaggerTransform {
  return ({ schema, url, route }) => {
    if (schema === undefined || schema.hide === true) return { schema, url };
    const documented = documentedSchema(schema, url, route, rateLimited);
    const permission = route.config?.permission;
    if (permission === undefined) return { schema: documented, url };
    const needs = `Needs the permission \`${[permission].flat().join('` or `')}\`.`;
    return {
      schema: {
        ...documented,
        security: [{ bearer: [] }],
        description: `${schema.description ?? ''}\n\n${needs}`.trim(),
      },
      url,
    };
  };
}
