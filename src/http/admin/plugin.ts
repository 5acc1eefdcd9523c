import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import cookie from '@fastify/cookie';
import helmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../composition/services.js';
import { AppError, PROBLEMS } from '../../lib/errors.js';
import type { Permission } from '../../modules/auth/permissions.js';
import { csrfTokenMatches, WEB_SESSION_IDLE_MS, type WebPrincipal } from '../../modules/auth/sign-ins.js';
import { StoreUnavailableError } from '../../storage/errors.js';
import { type Html, html } from './html.js';
import {
  DEFAULT_PAGING_KEYS,
  homeOf,
  notice,
  type PageContext,
  type PagingKeys,
  page,
  publicPage,
} from './layout.js';
import { configurationPages } from './pages/configuration.js';
import { credentialPages } from './pages/credentials.js';
import { dashboardPages } from './pages/dashboard.js';
import { ingestionPages } from './pages/ingestions.js';
import { journalPages } from './pages/journals.js';
import { userPages } from './pages/users.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Who may open an administration page or take its action: `signed-in` for any signed-in
     * user, or the permissions of which any one suffices. Routes without it are public.
     */
    adminPermission?: 'signed-in' | Permission | readonly Permission[];
  }
  interface FastifyRequest {
    webPrincipal: WebPrincipal | undefined;
  }
}

/** The cookie that names a sign-in session; scripts cannot read it and it never leaves /admin. */
export const SESSION_COOKIE = 'lf_admin_session';
/** Largest ordinary form body of the administration interface. */
export const ADMIN_FORM_BYTES_MAX = 1024 * 1024;

/** Where the interface's own stylesheet and scripts are, beside `src/` and `dist/`. */
const ASSETS_FOLDER = fileURLToPath(new URL('../../../public/admin/', import.meta.url));
/** Resolves packages as Node does, so the libraries are found wherever npm installed them. */
const requireFrom = createRequire(import.meta.url);
/**
 * The browser libraries, served from the installed packages (nothing from the internet). Chart.js
 * exports no path to its browser build, so that file is found beside the package's entry point.
 */
const LIBRARY_FILES: Record<string, string> = {
  'htmx.min.js': requireFrom.resolve('htmx.org/dist/htmx.min.js'),
  'chart.umd.min.js': join(dirname(requireFrom.resolve('chart.js')), 'chart.umd.min.js'),
};

/** An error shown as a page: what went wrong and how to fix it. */
export class AdminPageError extends Error {
  readonly status: number;
  readonly title: string;
  readonly hint: string;
  constructor(status: number, title: string, detail: string, hint: string) {
    super(detail);
    this.status = status;
    this.title = title;
    this.hint = hint;
  }
}

/** The fields of a submitted form. */
export function formOf(request: FastifyRequest): URLSearchParams {
  return request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
}

/** The signed-in user of a page; the session hook guarantees it on every non-public route. */
export function contextOf(request: FastifyRequest): PageContext {
  const principal = request.webPrincipal;
  if (principal === undefined) throw new AppError('unauthorized', 'not signed in');
  return { principal, path: request.url.split('?')[0] ?? request.url };
}

/**
 * The cookie value of the request's sign-in session, which only the browser holds: what the
 * session's one-time views are sealed under. The session hook guarantees it on every
 * non-public route, as it does the principal.
 */
export function sessionIdOf(request: FastifyRequest): string {
  const sessionId = request.cookies[SESSION_COOKIE];
  if (request.webPrincipal === undefined || sessionId === undefined) {
    throw new AppError('unauthorized', 'not signed in');
  }
  return sessionId;
}

/** Sends a page; administration pages are never stored by caches. */
export function sendPage(reply: FastifyReply, body: Html, status = 200): FastifyReply {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(body.value);
}

/**
 * The origin browsers send for a page of this service: that of `PUBLIC_URL` when it is set
 * (`publicOrigin`), else the request's own. A proxy's `X-Forwarded-Proto` and
 * `X-Forwarded-Host` count only when `TRUST_PROXY` trusts the peer: Fastify's `request.protocol`
 * and `request.host` apply it. Undefined when the request names no usable host.
 */
function ownOrigin(request: FastifyRequest, publicOrigin: string | undefined): string | undefined {
  if (publicOrigin !== undefined) return publicOrigin;
  const own = `${request.protocol}://${request.host}`;
  return URL.canParse(own) ? new URL(own).origin : undefined;
}

/** True when the browser reaches the service over TLS: `PUBLIC_URL` says so, or the request came so. */
function isTls(request: FastifyRequest, publicOrigin: string | undefined): boolean {
  return publicOrigin?.startsWith('https:') === true || request.protocol === 'https';
}

/**
 * True when a sign-in form came from this service's own page: no `Origin` (not a browser, or
 * an old one), or the origin browsers show for the service. `null` and other sites are refused.
 */
function isOwnOrigin(request: FastifyRequest, publicOrigin: string | undefined): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  const expected = ownOrigin(request, publicOrigin);
  return expected !== undefined && URL.canParse(origin) && new URL(origin).origin === expected;
}

function cookieOptions(request: FastifyRequest, publicOrigin: string | undefined) {
  return {
    path: '/admin',
    httpOnly: true,
    sameSite: 'strict' as const,
    secure: isTls(request, publicOrigin),
  };
}

/** A query string value as a whole number from 0, or the default. */
export function wholeNumber(value: unknown, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : fallback;
  return Math.min(n, max);
}

/** Rows per page of a list unless `limit` says otherwise. */
export const ADMIN_PAGE_SIZE_DEFAULT = 50;
/** Most rows per page of a list. */
export const ADMIN_PAGE_SIZE_MAX = 200;

/** The page (from 0) and rows per page of a list, from the query parameters `keys` names. */
export function pagingOf(
  request: FastifyRequest,
  keys: PagingKeys = DEFAULT_PAGING_KEYS,
): { page: number; limit: number } {
  const query = request.query as Record<string, unknown>;
  return {
    page: wholeNumber(query[keys.page], 0),
    limit: Math.max(1, wholeNumber(query[keys.limit], ADMIN_PAGE_SIZE_DEFAULT, ADMIN_PAGE_SIZE_MAX)),
  };
}

/** A text query value, trimmed; undefined when absent or empty. */
export function queryText(request: FastifyRequest, name: string): string | undefined {
  const value = (request.query as Record<string, unknown>)[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** Where to go after sign-in: only a path of this interface, never another site. */
function safeNext(next: string | null | undefined): string {
  return typeof next === 'string' &&
    /^\/admin(\/[A-Za-z0-9/_\-.?=&%]*)?$/.test(next) &&
    !next.startsWith('//')
    ? next
    : '/admin';
}

function signInPage(message: Html | undefined, email: string, next: string): Html {
  return publicPage(
    'Sign in',
    html`<section class="signin">
<h1>Sign in to Ledgerflow</h1>
${message}
<form method="post" action="/admin/login">
  <input type="hidden" name="next" value="${next}">
  <label>E-mail <input type="email" name="email" autocomplete="username" required autofocus value="${email}"></label>
  <label>Password <input type="password" name="password" autocomplete="current-password" required></label>
  <button type="submit">Sign in</button>
</form>
<p class="muted">The first administrator's password is the one printed when the service first started, or ADMIN_PASSWORD.</p>
</section>`,
  );
}

const SIGN_IN_MESSAGES = {
  invalid: 'The e-mail or password is wrong. Check both and try again.',
  disabled: 'This account is disabled. Ask an administrator to enable it.',
  'no-role': 'This account has no role that allows signing in. Ask an administrator to give it one.',
} as const;

/**
 * The administration interface at `/admin`: server-rendered pages (htmx for partial updates,
 * Chart.js for charts, both served from the installed packages), cookie sessions stored in the
 * database, a CSRF token on every state change, a strict Content-Security-Policy, and the
 * permission of every page and action checked on the server. Pages call the module services,
 * the same ones the REST API calls.
 */
export const adminInterface: FastifyPluginAsync<{
  services: Services;
  publicUrl?: string | undefined;
}> = async (app, { services, publicUrl }) => {
  const { signIns } = services;
  const publicOrigin = publicUrl === undefined ? undefined : new URL(publicUrl).origin;
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });
  await app.register(cookie);
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        fontSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
      },
    },
    // Sent only over TLS by browsers; harmless on plain HTTP in development.
    strictTransportSecurity: { maxAge: 31536000, includeSubDomains: true },
    referrerPolicy: { policy: 'same-origin' },
  });
  await app.register(fastifyStatic, {
    root: ASSETS_FOLDER,
    prefix: '/admin/assets/',
    decorateReply: false,
    index: false,
    cacheControl: true,
    maxAge: 3600 * 1000,
  });
  for (const [name, path] of Object.entries(LIBRARY_FILES)) {
    app.get(`/admin/assets/lib/${name}`, async (_request, reply) =>
      reply
        .header('cache-control', 'public, max-age=86400')
        .type('text/javascript; charset=utf-8')
        .send(await readFile(path)),
    );
  }

  // Forms are parsed here, in this scope only; the OAuth endpoints keep their own parser.
  app.removeContentTypeParser('application/x-www-form-urlencoded');
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, body, done) => done(null, new URLSearchParams(String(body))),
  );

  app.decorateRequest('webPrincipal', undefined);
  app.addHook('onRequest', async (request, reply) => {
    const required = request.routeOptions.config.adminPermission;
    if (required === undefined) return;
    const sessionId = request.cookies[SESSION_COOKIE];
    const principal = sessionId === undefined ? undefined : await signIns.authenticate(sessionId);
    if (principal === undefined) {
      if (request.method === 'GET') {
        return reply.redirect(`/admin/login?next=${encodeURIComponent(request.url)}`, 303);
      }
      throw new AdminPageError(
        401,
        'You are not signed in',
        'Your session has ended (signed out, or idle for too long).',
        'Sign in again, then repeat what you did.',
      );
    }
    request.webPrincipal = principal;
    if (required === 'signed-in') return;
    const anyOf: readonly Permission[] = typeof required === 'string' ? [required] : required;
    if (!anyOf.some((p) => principal.permissions.has(p))) {
      throw new AdminPageError(
        403,
        'You may not do this',
        `This needs the permission ${anyOf.join(' or ')}, which your roles (${principal.user.roles.join(', ') || 'none'}) do not grant.`,
        'Ask an administrator for a role that grants it.',
      );
    }
  });
  // Every state change carries the session's CSRF token, in the form or in a header (htmx).
  app.addHook('preHandler', async (request) => {
    const principal = request.webPrincipal;
    if (principal === undefined || request.method === 'GET' || request.method === 'HEAD') return;
    const header = request.headers['x-csrf-token'];
    const given = typeof header === 'string' ? header : (formOf(request).get('_csrf') ?? undefined);
    if (!csrfTokenMatches(principal.csrfToken, given)) {
      throw new AdminPageError(
        403,
        'The form has expired',
        'The request did not carry this session’s form token (CSRF protection).',
        'Go back, reload the page and submit the form again.',
      );
    }
  });

  app.setErrorHandler(async (error, request, reply) => {
    let status = 500;
    let title = 'Something went wrong';
    let detail = `The service could not complete the request. Reference: ${request.id}.`;
    let hint = 'Try again; if it keeps failing, give the reference to whoever runs the service.';
    let list: Html | undefined;
    if (error instanceof AdminPageError) {
      ({ status, title, hint } = error);
      detail = error.message;
    } else if (error instanceof AppError) {
      status = error.status;
      title = PROBLEMS[error.code].title;
      detail = error.message;
      hint = 'Correct what the message names and try again.';
      const errors = error.extensions.errors;
      if (Array.isArray(errors)) {
        list = html`<ul class="errors">${errors.map((e: { path?: string; message?: string }) => html`<li><code>${e.path ?? ''}</code> ${e.message ?? ''}</li>`)}</ul>`;
      }
    } else if (error instanceof StoreUnavailableError) {
      status = 503;
      title = 'The database cannot be reached';
      detail = `The service could not reach its database. Reference: ${request.id}.`;
      hint = 'Try again in a few seconds; it recovers by itself when the database is back.';
    } else if (typeof (error as { statusCode?: unknown }).statusCode === 'number') {
      status = (error as { statusCode: number }).statusCode;
      if (status < 500) {
        title = 'The request was not accepted';
        detail = (error as Error).message;
        hint = 'Go back and check the form.';
      }
    }
    if (status >= 500) request.log.error({ err: error }, 'administration page failed');
    const body = html`${notice('error', html`<p><strong>${detail}</strong></p>${list}<p>${hint}</p>`)}
<p><a href="/admin">Back to the start page</a></p>`;
    const principal = request.webPrincipal;
    return sendPage(
      reply,
      principal === undefined
        ? publicPage(title, html`<h1>${title}</h1>${body}<p><a href="/admin/login">Sign in</a></p>`)
        : page({ principal, path: request.url.split('?')[0] ?? '' }, title, body),
      status,
    );
  });

  app.get('/', async (_request, reply) => reply.redirect('/admin', 302));

  app.get('/admin', { config: { adminPermission: 'signed-in' } }, async (request, reply) =>
    reply.redirect(homeOf(contextOf(request).principal), 303),
  );

  app.get('/admin/account', { config: { adminPermission: 'signed-in' } }, async (request, reply) => {
    const context = contextOf(request);
    const { user } = context.principal;
    return sendPage(
      reply,
      page(
        context,
        'Your account',
        html`<dl class="facts"><dt>E-mail</dt><dd>${user.email}</dd><dt>Name</dt><dd>${user.displayName}</dd><dt>Roles</dt><dd>${user.roles.join(', ') || 'none'}</dd><dt>Permissions</dt><dd>${[...context.principal.permissions].join(', ') || 'none'}</dd></dl>
<p class="muted">Sessions end after ${WEB_SESSION_IDLE_MS / 60000} minutes without activity.</p>`,
      ),
    );
  });

  app.get('/admin/login', async (request, reply) => {
    const sessionId = request.cookies[SESSION_COOKIE];
    if (sessionId !== undefined && (await signIns.authenticate(sessionId)) !== undefined) {
      return reply.redirect('/admin', 303);
    }
    const next = safeNext((request.query as Record<string, string | undefined>).next);
    return sendPage(reply, signInPage(undefined, '', next));
  });

  app.post('/admin/login', { bodyLimit: ADMIN_FORM_BYTES_MAX }, async (request, reply) => {
    // No session yet, so no CSRF token: a cross-site sign-in is refused by its Origin instead.
    if (!isOwnOrigin(request, publicOrigin)) {
      throw new AdminPageError(
        403,
        'Sign-in refused',
        'The sign-in form was sent from another site.',
        'Open the sign-in page of this service and sign in there.',
      );
    }
    const form = formOf(request);
    const email = form.get('email') ?? '';
    const next = safeNext(form.get('next'));
    const result = await signIns.signIn(email, form.get('password') ?? '', request.ip);
    if (!result.ok) {
      request.log.warn({ email: email.slice(0, 256), reason: result.reason }, 'sign-in failed');
      if (result.reason === 'limited') {
        reply.header('retry-after', String(result.retryAfterSeconds));
        return sendPage(
          reply,
          signInPage(
            notice(
              'error',
              `Too many failed sign-ins. Wait ${result.retryAfterSeconds} seconds, then try again.`,
            ),
            email,
            next,
          ),
          429,
        );
      }
      return sendPage(reply, signInPage(notice('error', SIGN_IN_MESSAGES[result.reason]), email, next), 401);
    }
    reply.setCookie(SESSION_COOKIE, result.sessionId, cookieOptions(request, publicOrigin));
    return reply.redirect(next, 303);
  });

  app.post('/admin/logout', { config: { adminPermission: 'signed-in' } }, async (request, reply) => {
    await signIns.signOut(contextOf(request).principal.sessionHash);
    reply.clearCookie(SESSION_COOKIE, cookieOptions(request, publicOrigin));
    return sendPage(reply, signInPage(notice('info', 'You are signed out.'), '', '/admin'));
  });

  registerPages(app, services);
};

function registerPages(app: FastifyInstance, services: Services): void {
  dashboardPages(app, services);
  credentialPages(app, services);
  userPages(app, services);
  ingestionPages(app, services);
  configurationPages(app, services);
  journalPages(app, services);
}
