import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../../composition/services.js';
import { WEB_SESSION_IDLE_MS } from '../../../modules/auth/sign-ins.js';
import { type Html, html } from '../html.js';
import { homeOf, notice, page, publicPage } from '../layout.js';
import { AdminPageError, contextOf, formOf, SIGN_IN_COOKIE, sendPage } from '../request.js';

/** Largest sign-in form body. */
const SIGN_IN_FORM_BYTES_MAX = 1024 * 1024;

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
 * Signing in and out, where `/admin` leads, and the signed-in user's own account. The sign-in
 * cookie is set here, `Secure` when the browser reaches the service over TLS (`publicOrigin`
 * is that of `PUBLIC_URL`, when set).
 */
export function signInPages(
  app: FastifyInstance,
  { signIns }: Pick<Services, 'signIns'>,
  publicOrigin: string | undefined,
): void {
  registerStartPages(app);
  registerSignIn(app, signIns, publicOrigin);
  registerSignOut(app, signIns, publicOrigin);
}

/** `/` and `/admin`, which lead to the user's start page, and `/admin/account`, the user's own. */
function registerStartPages(app: FastifyInstance): void {
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
}

/** `/admin/login`: the sign-in form, and the sign-in that sets the cookie. */
function registerSignIn(
  app: FastifyInstance,
  signIns: Services['signIns'],
  publicOrigin: string | undefined,
): void {
  app.get('/admin/login', async (request, reply) => {
    const signInId = request.cookies[SIGN_IN_COOKIE];
    if (signInId !== undefined && (await signIns.authenticate(signInId)) !== undefined) {
      return reply.redirect('/admin', 303);
    }
    const next = safeNext((request.query as Record<string, string | undefined>).next);
    return sendPage(reply, signInPage(undefined, '', next));
  });

  app.post('/admin/login', { bodyLimit: SIGN_IN_FORM_BYTES_MAX }, async (request, reply) => {
    // Not signed in yet, so no CSRF token: a cross-site sign-in is refused by its Origin instead.
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
    reply.setCookie(SIGN_IN_COOKIE, result.sessionId, cookieOptions(request, publicOrigin));
    return reply.redirect(next, 303);
  });
}

/** `POST /admin/logout`: ends the sign-in and clears its cookie. */
function registerSignOut(
  app: FastifyInstance,
  signIns: Services['signIns'],
  publicOrigin: string | undefined,
): void {
  app.post('/admin/logout', { config: { adminPermission: 'signed-in' } }, async (request, reply) => {
    await signIns.signOut(contextOf(request).principal.sessionHash);
    reply.clearCookie(SIGN_IN_COOKIE, cookieOptions(request, publicOrigin));
    return sendPage(reply, signInPage(notice('info', 'You are signed out.'), '', '/admin'));
  });
}
