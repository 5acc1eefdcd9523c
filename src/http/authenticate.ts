import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../lib/errors.js';
import type { AuditActor } from '../modules/audit/entry.js';
import type { Permission } from '../modules/auth/permissions.js';
import type { Principal, TokenService } from '../modules/auth/token-service.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The permission a route needs (docs/reference.md, Users, roles and credentials), or a list of
     * which any one suffices; routes without one are public.
     */
    permission?: Permission | readonly Permission[];
  }
  interface FastifyRequest {
    principal: Principal | undefined;
  }
}

/** `Bearer <token68>`; the scheme name is case-insensitive (RFC 9110 11.1). */
const BEARER = /^bearer +([A-Za-z0-9._~+/-]+=*)$/i;

/** The caller of a route that requires a permission; the hook below guarantees it is set. */
export function principalOf(request: FastifyRequest): Principal {
  if (request.principal === undefined) throw new AppError('unauthorized', 'no authenticated caller');
  return request.principal;
}

/** Who the audit trail names for a change made by this request: the owner and the credential. */
export function actorOf(request: FastifyRequest): AuditActor {
  const principal = principalOf(request);
  return { user: principal.ownerEmail, clientId: principal.clientId };
}

/**
 * Authenticates every route that declares a permission, before its body is read: 401 with
 * `WWW-Authenticate: Bearer` for a missing or bad token (RFC 6750 3), 403 naming the missing
 * permission.
 */
export function registerAuthentication(app: FastifyInstance, tokens: TokenService): void {
  app.decorateRequest('principal', undefined);
  app.addHook('onRequest', async (request) => {
    const permission = request.routeOptions.config.permission;
    if (permission === undefined) return;
    const header = request.headers.authorization;
    if (header === undefined) {
      throw new AppError(
        'unauthorized',
        'this endpoint needs an access token: Authorization: Bearer <token>',
        {},
        { bearerRefusal: 'missing' },
      );
    }
    const match = BEARER.exec(header);
    if (match?.[1] === undefined) {
      throw new AppError(
        'invalid-token',
        'the Authorization header is not of the form Bearer <token>',
        {},
        { bearerRefusal: 'malformed' },
      );
    }
    const principal = await tokens.authenticateBearer(match[1]);
    const anyOf: readonly Permission[] = typeof permission === 'string' ? [permission] : permission;
    if (!anyOf.some((p) => principal.permissions.has(p))) {
      const named = anyOf.join(' or ');
      throw new AppError('forbidden', `this request needs the permission ${named}`, {
        missingPermission: named,
      });
    }
    request.principal = principal;
  });
}
