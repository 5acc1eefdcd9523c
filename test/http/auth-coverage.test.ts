import type { FastifyServerOptions, RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Permission } from '../../src/modules/auth/permissions.js';
import { type Signed, signIn, userWith } from '../admin/helpers.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  anyOf,
  itRequiresPermission,
  PUBLIC,
  ROUTE_ACCESS,
  rolesWith,
  rolesWithout,
} from '../helpers/auth-cases.js';

/**
 * Every route the app registers, as Fastify announces it to `onRoute` hooks: the app is built
 * by `buildApp`, which adds its routes to a Fastify instance of its own, so the instance is
 * given the hook the moment it is made, before any route exists.
 */
const registered = vi.hoisted((): Pick<RouteOptions, 'method' | 'url' | 'config'>[] => []);

/**
 * Routes of the administration interface open without a sign-in session: the sign-in page and
 * form, the redirect of `/`, and the static assets. Every other `/admin` route must declare the
 * permission its signed-in user needs (`adminPermission`); the last block of this file checks
 * that the permission and the CSRF token are enforced on every one that changes state.
 */
const ADMIN_PUBLIC = new Set(['GET /', 'GET /admin/login', 'POST /admin/login']);
const isAdminAsset = (url: string): boolean => url.startsWith('/admin/assets/');
vi.mock('fastify', async (importOriginal) => {
  const actual = await importOriginal<typeof import('fastify')>();
  const withRouteLog = (options?: FastifyServerOptions) => {
    const app = actual.default(options);
    app.addHook('onRoute', (route) => {
      registered.push({ method: route.method, url: route.url, config: route.config });
    });
    return app;
  };
  return { ...actual, default: withRouteLog };
});

/** A URL of a route pattern: every path parameter becomes `x` (authentication comes first). */
const urlOf = (pattern: string): string => pattern.replace(/:[A-Za-z]+/g, 'x');

const protectedRoutes = Object.entries(ROUTE_ACCESS).flatMap(([route, access]) => {
  if (access === PUBLIC) return [];
  const [method = '', pattern = ''] = route.split(' ');
  return [{ route, method, url: urlOf(pattern), permissions: anyOf(access) }];
});

/**
 * One table, `ROUTE_ACCESS`, for the auth rule of every route. The first test compares it with
 * the routes of the built app, both ways: a protected route added without an entry (or with
 * another permission than its entry) fails it, and so does an entry whose route is gone or a
 * route that forgot to declare its permission. Every protected entry then gets the shared auth
 * cases here, so no test file has to remember them.
 */
describe('the auth rule of every route', () => {
  let t: TestApp;
  const tokens = new Map<string, Promise<string>>();
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());
  const app = () => t;
  // One token per role, made on first use; the clock of this app never moves, so none expires.
  const tokenOf = (role: string): Promise<string> => {
    let token = tokens.get(role);
    if (token === undefined) {
      token = t.tokenFor([role]);
      tokens.set(role, token);
    }
    return token;
  };

  it('ROUTE_ACCESS lists every registered route with the permission it declares, and nothing else', () => {
    const declared: Record<string, string | readonly Permission[]> = {};
    const heads: Record<string, unknown> = {};
    for (const route of registered) {
      const permission = route.config?.permission ?? PUBLIC;
      for (const method of [route.method].flat()) {
        const key = `${method} ${route.url}`;
        if (route.url === '/docs' || route.url.startsWith('/docs/')) {
          expect(permission, `${key} serves the API reference page to anyone`).toBe(PUBLIC);
        } else if (route.url === '/' || route.url.startsWith('/admin')) {
          const admin = (route.config as { adminPermission?: unknown } | undefined)?.adminPermission;
          if (ADMIN_PUBLIC.has(key.replace(/^HEAD /, 'GET ')) || isAdminAsset(route.url)) {
            expect(admin, `${key} is open without a sign-in session`).toBeUndefined();
          } else {
            expect(admin, `${key} must declare adminPermission`).toBeDefined();
          }
        } else if (method === 'HEAD') {
          heads[key] = permission;
        } else {
          declared[key] = permission;
        }
      }
    }
    expect(declared).toEqual(ROUTE_ACCESS);
    // Fastify answers HEAD with the GET route's handler; its permission must be the same.
    for (const [key, permission] of Object.entries(heads)) {
      expect(permission, key).toEqual(declared[key.replace(/^HEAD /, 'GET ')]);
    }
    expect(protectedRoutes.length).toBeGreaterThan(0);
  });

  for (const { route, method, url, permissions } of protectedRoutes) {
    describe(route, () => {
      itRequiresPermission(app, { method, url }, permissions.join(' or '), rolesWithout(permissions));

      it(`lets ${rolesWith(permissions).join(', ')} past authentication`, async () => {
        for (const role of rolesWith(permissions)) {
          const response = await t.call(await tokenOf(role), { method, url });
          expect([401, 403], `${role}: ${response.body}`).not.toContain(response.statusCode);
        }
      });
    });
  }
});

/**
 * Every state-changing route of the administration interface (every method but GET and HEAD),
 * taken from the routes the built app registers: without a sign-in session it answers 401; a
 * signed-in user whose roles lack its permission gets 403 even with the right CSRF token; a user
 * with the permission gets 403 without the session's CSRF token or with another one; and with
 * both the request gets past these checks. The hooks run before any handler, so a refused
 * request changes nothing.
 */
describe('the sign-in, permission and CSRF checks of every state-changing administration route', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  const formHeaders = { 'content-type': 'application/x-www-form-urlencoded' };

  it('refuses each without a session, without the permission, and without the CSRF token', async () => {
    const routes = new Map(
      registered.map((route) => [`${[route.method].flat().join(',')} ${route.url}`, route]),
    );
    const changing = [...routes.values()].flatMap((route) => {
      const admin = (route.config as { adminPermission?: 'signed-in' | Permission | readonly Permission[] })
        ?.adminPermission;
      return [route.method]
        .flat()
        .filter((method) => method !== 'GET' && method !== 'HEAD' && admin !== undefined)
        .map((method) => ({ method, url: urlOf(route.url), route: `${method} ${route.url}`, admin }));
    });
    // The interface's forms: credentials, users, sessions, configuration, sign-out.
    expect(changing.length).toBeGreaterThanOrEqual(10);
    // One signed-in session per role, made again when a route ended it (sign-out).
    const sessions = new Map<string, Signed>();
    const sessionOf = async (role: string): Promise<Signed> => {
      const cached = sessions.get(role);
      if (cached !== undefined && (await cached.get('/admin/account')).statusCode === 200) return cached;
      const session = await signIn(t, await userWith(t, [role]));
      sessions.set(role, session);
      return session;
    };
    for (const { method, url, route, admin } of changing) {
      const anonymous = await t.app.inject({ method, url, headers: formHeaders, payload: '' });
      expect(anonymous.statusCode, `${route} without a session`).toBe(401);

      if (admin !== 'signed-in' && admin !== undefined) {
        const permissions = anyOf(admin);
        for (const role of rolesWithout(permissions)) {
          const session = await sessionOf(role);
          const refused = await session.post(url, {});
          expect(refused.statusCode, `${route} as ${role}`).toBe(403);
          expect(refused.body, `${route} as ${role}`).toContain('This needs the permission');
        }
      }

      const [role = 'admin'] = admin === 'signed-in' || admin === undefined ? [] : rolesWith(anyOf(admin));
      const session = await sessionOf(role);
      for (const csrf of [null, 'x'.repeat(session.csrf.length), ''] as const) {
        const refused = await session.post(url, {}, { csrf });
        expect(refused.statusCode, `${route} with CSRF token ${JSON.stringify(csrf)}`).toBe(403);
        expect(refused.body).toContain('CSRF');
      }
      const allowed = await session.post(url, {});
      expect(
        [401, 403],
        `${route} as ${role} with the CSRF token: ${allowed.body.slice(0, 200)}`,
      ).not.toContain(allowed.statusCode);
    }
  });
});
