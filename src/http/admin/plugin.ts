import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import cookie from '@fastify/cookie';
import helmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { Services } from '../../composition/services.js';
import { AppError, PROBLEMS } from '../../lib/errors.js';
import type { Permission } from '../../modules/auth/permissions.js';
import { csrfTokenMatches, type WebPrincipal } from '../../modules/auth/sign-ins.js';
import { StoreUnavailableError } from '../../storage/errors.js';
import { PROBLEM_STATUS } from '../problems.js';
import { type Html, html } from './html.js';
import { notice, page, publicPage } from './layout.js';
import { approvalPages } from './pages/approvals.js';
import { auditPages } from './pages/audit.js';
import { configurationPages } from './pages/configuration.js';
import { credentialPages } from './pages/credentials.js';
import { dashboardPages } from './pages/dashboard.js';
import { extractPages } from './pages/extracts.js';
import { ingestionPages } from './pages/ingestions.js';
import { journalPages } from './pages/journals.js';
import { periodPages } from './pages/periods.js';
import { reprocessingPages } from './pages/reprocessing.js';
import { reversalPages } from './pages/reversals.js';
import { revisionPages } from './pages/revisions.js';
import { signInPages } from './pages/sign-in.js';
import { userPages } from './pages/users.js';
import { webhookPages } from './pages/webhooks.js';
import { AdminPageError, formOf, SIGN_IN_COOKIE, sendPage } from './request.js';

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

/**
 * The administration interface at `/admin`: server-rendered pages (htmx for partial updates,
 * Chart.js for charts, both served from the installed packages), sign-ins kept in the database
 * and named by a cookie, a CSRF token on every state change, a strict Content-Security-Policy, and the
 * permission of every page and action checked on the server. Pages call the module services,
 * the same ones the REST API calls.
 */
export const adminInterface: FastifyPluginAsync<{
  services: Services;
  publicUrl?: string | undefined;
}> = async (app, { services, publicUrl }) => {
  const publicOrigin = publicUrl === undefined ? undefined : new URL(publicUrl).origin;
  hideFromOpenApi(app);
  await registerBrowserProtection(app);
  await registerAssets(app);
  registerFormParser(app);
  registerSignInCheck(app, services.signIns);
  registerCsrfCheck(app);
  registerErrorPage(app);
  registerPages(app, services, publicOrigin);
};

/** Leaves the interface's routes out of the OpenAPI document, which is the REST API's. */
function hideFromOpenApi(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });
}

/** The sign-in cookie's parser, and the headers that keep browsers strict: CSP, HSTS, referrer. */
async function registerBrowserProtection(app: FastifyInstance): Promise<void> {
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
}

/** The interface's own stylesheet and scripts, and the browser libraries it uses. */
async function registerAssets(app: FastifyInstance): Promise<void> {
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
}

/** Forms are parsed here, in this scope only; the OAuth endpoints keep their own parser. */
function registerFormParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/x-www-form-urlencoded');
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, body, done) => done(null, new URLSearchParams(String(body))),
  );
}

/**
 * Who is signed in, on every route that says who may open it (`adminPermission`): a page asked
 * without a sign-in leads to the sign-in page, an action is refused; a permission none of the
 * user's roles grants is refused.
 */
function registerSignInCheck(app: FastifyInstance, signIns: Services['signIns']): void {
  app.decorateRequest('webPrincipal', undefined);
  app.addHook('onRequest', async (request, reply) => {
    const required = request.routeOptions.config.adminPermission;
    if (required === undefined) return;
    const signInId = request.cookies[SIGN_IN_COOKIE];
    const principal = signInId === undefined ? undefined : await signIns.authenticate(signInId);
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
}

/** Every state change carries the sign-in's CSRF token, in the form or in a header (htmx). */
function registerCsrfCheck(app: FastifyInstance): void {
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
}

/**
 * Errors answered as pages: what went wrong and what to do about it, with the reference of the
 * request for the errors of the service itself, which are logged.
 */
function registerErrorPage(app: FastifyInstance): void {
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
      status = PROBLEM_STATUS[error.code];
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
}

/** Each page group is given the services it calls, and no other. */
function registerPages(app: FastifyInstance, services: Services, publicOrigin: string | undefined): void {
  signInPages(app, services, publicOrigin);
  dashboardPages(app, services);
  credentialPages(app, services);
  userPages(app, services);
  ingestionPages(app, services);
  configurationPages(app, services);
  auditPages(app, services);
  revisionPages(app, services);
  journalPages(app, services);
  reprocessingPages(app, services);
  reversalPages(app, services);
  approvalPages(app, services);
  periodPages(app, services);
  extractPages(app, services);
  webhookPages(app, services);
}
