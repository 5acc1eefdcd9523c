import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices, type Services } from '../../src/composition/services.js';
import { type AppDeps, buildApp } from '../../src/http/app.js';
import type { ManualClock } from '../../src/lib/clock.js';
import { sha256Hex } from '../../src/lib/ids.js';
import {
  AUTH_FAILURE_DELAY_MAX_MS,
  AUTH_FAILURES_PER_ADDRESS_MAX,
  AUTH_FAILURES_UNSLOWED_MAX,
} from '../../src/modules/auth/failure-limiter.js';
import { openSealed } from '../../src/modules/auth/sealed-answer.js';
import {
  ONE_TIME_VIEW_TTL_MS,
  ONE_TIME_VIEWS_PER_SESSION_MAX,
  SIGN_IN_FIELD_LENGTH_MAX,
  SignIns,
  WEB_SESSION_IDLE_MS,
} from '../../src/modules/auth/sign-ins.js';
import { createAuthStore } from '../../src/storage/auth-store.js';
import { createSignInStore } from '../../src/storage/sign-in-store.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { barrier } from '../helpers/barrier.js';
import { testClock } from '../helpers/clock.js';
import { createTestStore, TEST_DIALECT } from '../helpers/store.js';
import { cookieOf, PASSWORD, type Signed, signIn, userWith } from './helpers.js';

let t: TestApp;
/** The delays the sign-in limiter asked for, recorded instead of slept. */
const waits: number[] = [];
beforeAll(async () => {
  t = await createTestApp({
    authFailureWait: async (ms) => {
      waits.push(ms);
    },
  });
});
afterAll(async () => {
  await t.close();
});

const formHeaders = { 'content-type': 'application/x-www-form-urlencoded' };

describe('administration interface: sign-in, sessions, headers', () => {
  it('sends a browser from / to /admin, and from /admin to sign-in', async () => {
    const root = await t.app.inject({ url: '/' });
    expect(root.statusCode).toBe(302);
    expect(root.headers.location).toBe('/admin');
    const admin = await t.app.inject({ url: '/admin' });
    expect(admin.statusCode).toBe(303);
    expect(admin.headers.location).toBe('/admin/login?next=%2Fadmin');
  });

  it('serves the sign-in page with a strict CSP and the usual security headers', async () => {
    const page = await t.app.inject({ url: '/admin/login' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(page.headers['cache-control']).toBe('no-store');
    const htmx = await t.app.inject({ url: '/admin/assets/lib/htmx.min.js' });
    expect(htmx.statusCode).toBe(200);
    const css = await t.app.inject({ url: '/admin/assets/admin.css' });
    expect(css.statusCode).toBe(200);
  });

  it('serves htmx and Chart.js as JavaScript from the installed packages, wherever npm put them', async () => {
    for (const [url, marker] of [
      ['/admin/assets/lib/htmx.min.js', 'htmx'],
      ['/admin/assets/lib/chart.umd.min.js', 'Chart'],
    ] as const) {
      const script = await t.app.inject({ url });
      expect(script.statusCode, url).toBe(200);
      expect(script.headers['content-type'], url).toBe('text/javascript; charset=utf-8');
      expect(script.body.length, url).toBeGreaterThan(10_000);
      expect(script.body, url).toContain(marker);
    }
  });

  it('signs in with the right password: an HttpOnly, SameSite=Strict cookie on /admin', async () => {
    const email = await userWith(t, ['admin']);
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/login',
      headers: formHeaders,
      payload: new URLSearchParams({
        email: email.toUpperCase(),
        password: PASSWORD,
        next: '/admin/users',
      }).toString(),
    });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/admin/users');
    const cookie = response.cookies.find((c) => c.name === 'lf_admin_session');
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe('Strict');
    expect(cookie?.path).toBe('/admin');
    expect(cookie?.secure).toBeUndefined();
  });

  it('refuses a wrong password, and never goes to another site after sign-in', async () => {
    const email = await userWith(t, ['admin']);
    const wrong = await t.app.inject({
      method: 'POST',
      url: '/admin/login',
      headers: formHeaders,
      payload: new URLSearchParams({ email, password: 'nope' }).toString(),
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('The e-mail or password is wrong');
    expect(cookieOf(wrong, 'lf_admin_session')).toBeUndefined();
    const offsite = await t.app.inject({
      method: 'POST',
      url: '/admin/login',
      headers: formHeaders,
      payload: new URLSearchParams({ email, password: PASSWORD, next: '//evil.example/admin' }).toString(),
    });
    expect(offsite.headers.location).toBe('/admin');
  });

  it('slows down failed sign-ins per e-mail and address, but the right password still signs in', async () => {
    const email = await userWith(t, ['admin']);
    waits.length = 0;
    for (let i = 0; i < AUTH_FAILURES_UNSLOWED_MAX + 6; i += 1) {
      const r = await t.app.inject({
        method: 'POST',
        url: '/admin/login',
        headers: formHeaders,
        payload: new URLSearchParams({ email, password: `wrong${i}` }).toString(),
      });
      expect(r.statusCode).toBe(401);
    }
    expect(waits).toHaveLength(6);
    expect(Math.max(...waits)).toBe(AUTH_FAILURE_DELAY_MAX_MS);
    await expect(signIn(t, email)).resolves.toBeDefined();
    expect(waits).toHaveLength(7);
  });

  it('refuses every sign-in from an address that floods with failures, for the rest of the minute', async () => {
    const email = await userWith(t, ['admin']);
    const tooLong = 'x'.repeat(SIGN_IN_FIELD_LENGTH_MAX + 1);
    t.clock.advance(61_000); // a new window, without the failures of the tests before
    for (let i = 0; i < AUTH_FAILURES_PER_ADDRESS_MAX; i += 1) {
      const r = await t.app.inject({
        method: 'POST',
        url: '/admin/login',
        headers: formHeaders,
        payload: new URLSearchParams({ email: `flood${i}@example.test`, password: tooLong }).toString(),
      });
      expect(r.statusCode).toBe(401);
    }
    const limited = await t.app.inject({
      method: 'POST',
      url: '/admin/login',
      headers: formHeaders,
      payload: new URLSearchParams({ email, password: PASSWORD }).toString(),
    });
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.body).toContain('Too many failed sign-ins');
    t.clock.advance(61_000);
    await expect(signIn(t, email)).resolves.toBeDefined();
  });

  it('refuses a sign-in form posted from another site', async () => {
    const email = await userWith(t, ['admin']);
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/login',
      headers: { ...formHeaders, origin: 'https://evil.example', host: 'localhost' },
      payload: new URLSearchParams({ email, password: PASSWORD }).toString(),
    });
    expect(response.statusCode).toBe(403);
  });

  it('refuses a state change without the CSRF token or with another one', async () => {
    const admin = await signIn(t, await userWith(t, ['admin']));
    const without = await admin.post(
      '/admin/users',
      { email: 'csrf1@example.test', roles: 'viewer' },
      { csrf: null },
    );
    expect(without.statusCode).toBe(403);
    expect(without.body).toContain('CSRF');
    const other = await admin.post(
      '/admin/users',
      { email: 'csrf2@example.test', roles: 'viewer' },
      { csrf: 'x'.repeat(43) },
    );
    expect(other.statusCode).toBe(403);
    expect(await t.services.access.findUser('csrf1@example.test')).toBeUndefined();
    const ok = await admin.post('/admin/users', { email: 'csrf3@example.test', roles: 'viewer' });
    expect(ok.statusCode).toBe(303);
  });

  it('lets an administrator set or generate another user’s password, which signs that user out', async () => {
    const admin = await signIn(t, await userWith(t, ['admin']));
    const email = await userWith(t, ['viewer']);
    const user = await signIn(t, email);
    const url = `/admin/users/${encodeURIComponent(email)}/password`;

    const edit = await admin.get(`/admin/users/${encodeURIComponent(email)}`);
    expect(edit.body).toContain(`action="${url}"`);

    // A password the administrator types: 303 back to the users, the old one and session gone.
    const typed = await admin.post(url, { password: 'a new password typed' });
    expect(typed.statusCode).toBe(303);
    expect(typed.headers.location).toBe(`/admin/users?saved=${encodeURIComponent(email)}`);
    expect((await user.get('/admin/users')).statusCode).toBe(303);
    await expect(signIn(t, email)).rejects.toThrow('sign-in failed');
    await signIn(t, email, 'a new password typed');

    // An empty field generates one, shown this once by the page the form leads to: a reload
    // neither shows it again nor generates another.
    const generating = await admin.post(url, { password: '' });
    expect(generating.statusCode).toBe(303);
    expect(generating.headers.location).toBe(`${url}/generated`);
    const generated = await admin.get(`${url}/generated`);
    expect(generated.statusCode).toBe(200);
    const password = /<code id="new-password" class="secret">([^<]+)<\/code>/.exec(generated.body)?.[1] ?? '';
    expect(password).toHaveLength(43);
    const reloaded = await admin.get(`${url}/generated`);
    expect(reloaded.statusCode).toBe(410);
    expect(reloaded.body).not.toContain(password);
    await signIn(t, email, password);

    // The same rules as everywhere, a clear page for an unknown user, CSRF and the permission.
    const short = await admin.post(url, { password: 'too short' });
    expect(short.statusCode).toBe(400);
    expect(short.body).toContain('must be 12 to 256 characters long');
    const unknown = await admin.post('/admin/users/ghost%40example.test/password', { password: '' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body).toContain('no user with e-mail ghost@example.test');
    expect((await admin.post(url, { password: 'a forged password' }, { csrf: null })).statusCode).toBe(403);
    const viewer = await signIn(t, await userWith(t, ['viewer']));
    expect((await viewer.post(url, { password: 'a viewer password' })).statusCode).toBe(403);
    await signIn(t, email, password);
  });

  it('ends a session at sign-out and after the idle time', async () => {
    const email = await userWith(t, ['admin']);
    const session = await signIn(t, email);
    expect((await session.get('/admin/users')).statusCode).toBe(200);
    const out = await session.post('/admin/logout', {});
    expect(out.statusCode).toBe(200);
    expect((await session.get('/admin/users')).statusCode).toBe(303);

    const idle = await signIn(t, email);
    t.clock.advance(WEB_SESSION_IDLE_MS - 1000);
    expect((await idle.get('/admin/users')).statusCode).toBe(200);
    t.clock.advance(WEB_SESSION_IDLE_MS - 1000);
    expect((await idle.get('/admin/users')).statusCode).toBe(200);
    t.clock.advance(WEB_SESSION_IDLE_MS + 1000);
    const expired = await idle.get('/admin/users');
    expect(expired.statusCode).toBe(303);
    expect(expired.headers.location).toBe('/admin/login?next=%2Fadmin%2Fusers');
  });

  it('ends the sessions of a disabled user at their next request', async () => {
    const admin = await signIn(t, await userWith(t, ['admin']));
    const email = await userWith(t, ['viewer']);
    const viewer = await signIn(t, email);
    expect((await viewer.get('/admin/account')).statusCode).toBe(200);
    const saved = await admin.post(`/admin/users/${encodeURIComponent(email)}`, {
      displayName: 'Viewer',
      roles: 'viewer',
      disabled: 'true',
    });
    expect(saved.statusCode).toBe(303);
    expect((await viewer.get('/admin/account')).statusCode).toBe(303);
  });

  it('does not let a viewer reach the users or credentials pages or actions', async () => {
    const viewer = await signIn(t, await userWith(t, ['viewer']));
    for (const url of ['/admin/users', '/admin/credentials']) {
      const response = await viewer.get(url);
      expect(response.statusCode).toBe(403);
      expect(response.body).toContain('This needs the permission');
    }
    const owner = await userWith(t, ['api-client']);
    const create = await viewer.post('/admin/credentials', { ownerEmail: owner, expiresInDays: '5' });
    expect(create.statusCode).toBe(403);
    const user = await viewer.post('/admin/users', { email: 'sneaky@example.test', roles: 'admin' });
    expect(user.statusCode).toBe(403);
    expect(await t.services.access.findUser('sneaky@example.test')).toBeUndefined();
    expect((await t.services.access.listCredentials(0, 1000)).rows.some((c) => c.ownerEmail === owner)).toBe(
      false,
    );
  });

  it('shows a new credential secret once; the list never shows it; revoking stops its token', async () => {
    const admin = await signIn(t, await userWith(t, ['admin']));
    const owner = await userWith(t, ['api-client']);
    const confirm = await admin.post('/admin/credentials/confirm', {
      ownerEmail: owner,
      name: 'etl',
      expiresInDays: '7',
    });
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('Confirm and create');
    expect((await t.services.access.listCredentials(0, 1000)).rows.some((c) => c.ownerEmail === owner)).toBe(
      false,
    );
    const created = await admin.post('/admin/credentials', {
      ownerEmail: owner,
      name: 'etl',
      expiresInDays: '7',
    });
    expect(created.statusCode).toBe(303);
    const shown = await admin.get(String(created.headers.location));
    expect(shown.statusCode).toBe(200);
    const clientId = /id="client-id">([^<]+)</.exec(shown.body)?.[1] ?? '';
    const clientSecret = /id="client-secret" class="secret">([^<]+)</.exec(shown.body)?.[1] ?? '';
    expect(clientSecret).toMatch(/^lfs_/);
    expect(shown.body).toContain('cannot be shown again');
    expect(created.headers.location).toBe(`/admin/credentials/${clientId}/created`);
    const token = await t.app.inject({
      method: 'POST',
      url: '/auth/token',
      headers: formHeaders,
      payload: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: clientSecret,
      }).toString(),
    });
    expect(token.statusCode).toBe(200);
    const accessToken = token.json().access_token as string;
    const list = await admin.get('/admin/credentials');
    expect(list.body).toContain(clientId);
    expect(list.body).not.toContain(clientSecret);
    expect(list.body).not.toContain('>never<');
    const revoke = await admin.post(`/admin/credentials/${clientId}/revoke`, {});
    expect(revoke.statusCode).toBe(303);
    const api = await t.call(accessToken, { url: '/api/v1/ingestions' });
    expect(api.statusCode).toBe(401);
  });

  it('creates a credential once and shows its secret once: reloading the page neither shows nor creates', async () => {
    const admin = await signIn(t, await userWith(t, ['admin']));
    const other = await signIn(t, await userWith(t, ['admin']));
    const owner = await userWith(t, ['api-client']);
    const credentialsOfOwner = async () =>
      (await t.services.access.listCredentials(0, 1000)).rows.filter((c) => c.ownerEmail === owner);
    const created = await admin.post('/admin/credentials', { ownerEmail: owner, expiresInDays: '7' });
    expect(created.statusCode).toBe(303);
    const view = String(created.headers.location);
    // Another session cannot see it, and asking does not spend the one view.
    const elsewhere = await other.get(view);
    expect(elsewhere.statusCode).toBe(410);
    expect(elsewhere.body).not.toContain('lfs_');
    const shown = await admin.get(view);
    expect(shown.statusCode).toBe(200);
    const secret = /id="client-secret" class="secret">([^<]+)</.exec(shown.body)?.[1] ?? '';
    expect(secret).toMatch(/^lfs_/);
    for (let reload = 0; reload < 2; reload += 1) {
      const again = await admin.get(view);
      expect(again.statusCode).toBe(410);
      expect(again.headers['cache-control']).toBe('no-store');
      expect(again.body).toContain('was shown once');
      expect(again.body).not.toContain(secret);
      expect(again.body).not.toContain('lfs_');
    }
    expect(await credentialsOfOwner()).toHaveLength(1);
  });

  it('forgets a secret that was not shown within its time', async () => {
    const admin = await signIn(t, await userWith(t, ['admin']));
    const owner = await userWith(t, ['api-client']);
    const created = await admin.post('/admin/credentials', { ownerEmail: owner, expiresInDays: '7' });
    t.clock.advance(ONE_TIME_VIEW_TTL_MS + 1);
    const late = await admin.get(String(created.headers.location));
    expect(late.statusCode).toBe(410);
    expect(late.body).not.toContain('lfs_');
  });

  it('refuses a credential lifetime out of range with the rule', async () => {
    const admin = await signIn(t, await userWith(t, ['admin']));
    const owner = await userWith(t, ['api-client']);
    const response = await admin.post('/admin/credentials/confirm', {
      ownerEmail: owner,
      expiresInDays: '0',
    });
    expect(response.statusCode).toBe(400);
    // The field and the API's rule (`CredentialExpiryDays`), in the API's words.
    expect(response.body).toContain('expiresInDays must be &gt;= 1');
  });
});

/**
 * Behind a reverse proxy the `Host` a request carries may be the proxy's upstream name, not the
 * one in the browser's address bar. The sign-in form's `Origin` is compared with `PUBLIC_URL`
 * when it is set, and the proxy's `X-Forwarded-Proto` and `X-Forwarded-Host` are believed only
 * from a peer `TRUST_PROXY` trusts (injected requests come from 127.0.0.1).
 */
describe('administration sign-in behind a reverse proxy', () => {
  const dispose: (() => Promise<void>)[] = [];
  /** One app per setting, on one store that holds the user. */
  const apps = new Map<'direct' | 'trusted' | 'public', FastifyInstance>();
  let email = '';

  beforeAll(async () => {
    const { store, dispose: disposeStore } = await createTestStore();
    dispose.push(disposeStore);
    const clock = testClock();
    const build = async (
      name: 'direct' | 'trusted' | 'public',
      settings: Pick<AppDeps, 'trustProxy' | 'publicUrl'>,
    ) => {
      const services = createServices(store, clock, {
        accessTokenTtlSeconds: 300,
        refreshTokenTtlSeconds: 1800,
        businessDate: undefined,
        authFailureWait: async () => {},
      });
      const app = await buildApp({ store, services, logger: false, ...settings });
      await app.ready();
      dispose.unshift(() => app.close());
      apps.set(name, app);
      return services;
    };
    const services = await build('direct', {});
    await build('trusted', { trustProxy: ['loopback'] });
    await build('public', { publicUrl: 'https://ledger.example.com/base' });
    email = 'proxied@example.test';
    await services.access.createUser(
      { email, roles: ['admin'], password: PASSWORD },
      { actor: { user: 'test-setup' } },
    );
  });
  afterAll(async () => {
    for (const close of dispose) await close();
  });

  /** A sign-in as a proxy passes it on: its own upstream `Host`, and what the browser sent. */
  const signInThrough = (name: 'direct' | 'trusted' | 'public', headers: Record<string, string>) => {
    const app = apps.get(name);
    if (app === undefined) throw new Error(`no app ${name}`);
    return app.inject({
      method: 'POST',
      url: '/admin/login',
      headers: { ...formHeaders, host: 'backend:8080', ...headers },
      payload: new URLSearchParams({ email, password: PASSWORD }).toString(),
    });
  };
  const forwarded = {
    origin: 'https://ledger.example.com',
    'x-forwarded-proto': 'https',
    'x-forwarded-host': 'ledger.example.com',
  };

  it('ignores X-Forwarded-Proto and X-Forwarded-Host without TRUST_PROXY', async () => {
    const refused = await signInThrough('direct', forwarded);
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('The sign-in form was sent from another site.');
    const direct = await signInThrough('direct', {
      origin: 'http://backend:8080',
      'x-forwarded-proto': 'https',
    });
    expect(direct.statusCode).toBe(303);
    expect(direct.cookies.find((c) => c.name === 'lf_admin_session')?.secure).toBeUndefined();
  });

  it('believes them from a trusted proxy: the origin and TLS it names', async () => {
    const response = await signInThrough('trusted', forwarded);
    expect(response.statusCode).toBe(303);
    expect(response.cookies.find((c) => c.name === 'lf_admin_session')?.secure).toBe(true);
    const upstream = await signInThrough('trusted', { ...forwarded, origin: 'http://backend:8080' });
    expect(upstream.statusCode).toBe(403);
  });

  it('signs in when the proxy rewrote Host and the Origin is that of PUBLIC_URL', async () => {
    const response = await signInThrough('public', { origin: 'https://ledger.example.com' });
    expect(response.statusCode).toBe(303);
    expect(response.cookies.find((c) => c.name === 'lf_admin_session')?.secure).toBe(true);
  });

  it('refuses any other Origin when PUBLIC_URL is set, the upstream Host included', async () => {
    for (const origin of [
      'http://backend:8080',
      'http://ledger.example.com',
      'https://ledger.example.com.evil.example',
      'https://evil.example',
      'null',
    ]) {
      const response = await signInThrough('public', { origin });
      expect(response.statusCode, origin).toBe(403);
      expect(cookieOf(response, 'lf_admin_session'), origin).toBeUndefined();
    }
  });
});

/** One service instance on the shared database: its app and its services. */
interface Instance {
  app: FastifyInstance;
  services: Services;
}

async function instanceOn(store: Store, clock: ManualClock): Promise<Instance> {
  const services = createServices(store, clock, {
    accessTokenTtlSeconds: 300,
    refreshTokenTtlSeconds: 1800,
    businessDate: undefined,
  });
  const app = await buildApp({ store, services, logger: false });
  await app.ready();
  return { app, services };
}

/**
 * Several instances on one database behave as one: what one instance keeps for a session's one
 * view (a new credential's secret) is shown by whichever instance the redirect reaches, once.
 * On SQLite, which serves one process, both instances share the store's one connection.
 */
describe('one-time views shared by the instances of one database', () => {
  const clock = testClock();
  let store: Store;
  let second: Store;
  let dispose: () => Promise<void> = async () => {};
  let a: Instance;
  let b: Instance;

  beforeAll(async () => {
    const made = await createTestStore();
    ({ store, dispose } = made);
    second = TEST_DIALECT === 'postgres' ? openStore(made.url) : store;
    a = await instanceOn(store, clock);
    b = await instanceOn(second, clock);
  });
  afterAll(async () => {
    await a?.app.close();
    await b?.app.close();
    if (second !== store) await second?.close();
    await dispose();
  });

  const getThrough = (instance: Instance, session: Signed, url: string) =>
    instance.app.inject({ url, cookies: { lf_admin_session: session.cookie } });

  /** Signs an administrator in through A and creates a credential there; returns its one view's page. */
  async function createdThroughA(): Promise<{ admin: Signed; view: string }> {
    const admin = await signIn(a, await userWith(a, ['admin']));
    const owner = await userWith(a, ['api-client']);
    const created = await admin.post('/admin/credentials', { ownerEmail: owner, expiresInDays: '7' });
    expect(created.statusCode).toBe(303);
    return { admin, view: String(created.headers.location) };
  }

  /** The keys of the one-time views a session has waiting in the store. */
  async function waitingKeys(session: Signed): Promise<string[]> {
    const rows = await store.db
      .selectFrom('admin_one_time_views')
      .select('view_key')
      .where('sign_in_hash', '=', sha256Hex(session.cookie))
      .orderBy('id')
      .execute();
    return rows.map((row) => row.view_key);
  }

  it('shows through one instance the secret created through the other, then through neither', async () => {
    const { admin, view } = await createdThroughA();
    const shown = await getThrough(b, admin, view);
    expect(shown.statusCode).toBe(200);
    const clientId = /id="client-id">([^<]+)</.exec(shown.body)?.[1] ?? '';
    const clientSecret = /id="client-secret" class="secret">([^<]+)</.exec(shown.body)?.[1] ?? '';
    expect(clientSecret).toMatch(/^lfs_/);
    expect(view).toBe(`/admin/credentials/${clientId}/created`);
    const token = await a.app.inject({
      method: 'POST',
      url: '/auth/token',
      headers: formHeaders,
      payload: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: clientSecret,
      }).toString(),
    });
    expect(token.statusCode).toBe(200);
    for (const instance of [a, b]) {
      const again = await getThrough(instance, admin, view);
      expect(again.statusCode).toBe(410);
      expect(again.body).toContain('was shown once');
      expect(again.body).not.toContain('lfs_');
    }
  });

  it('shows a secret once when both instances are asked for it at the same time', async () => {
    for (let round = 0; round < 5; round += 1) {
      const { admin, view } = await createdThroughA();
      const answers = await Promise.all([a, b, a, b].map((instance) => getThrough(instance, admin, view)));
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 410, 410, 410]);
      expect(answers.filter((answer) => answer.body.includes('lfs_'))).toHaveLength(1);
    }
  });

  it('gives a view to one taker when two instances reach the store with it together', async () => {
    const admin = await signIn(a, await userWith(a, ['admin']));
    for (let round = 0; round < 5; round += 1) {
      // Each instance's take is held until both are called, so both deletes go to the store
      // together; the store hands the row to one of them.
      const together = barrier(2);
      const held = (on: Store): SignIns => {
        const sessions = createSignInStore(on);
        return new SignIns(
          createAuthStore(on),
          {
            ...sessions,
            async takeOneTimeView(sessionHash, key) {
              await together();
              return sessions.takeOneTimeView(sessionHash, key);
            },
          },
          clock,
        );
      };
      const key = `race-${round}`;
      await a.services.signIns.keepForOneView(admin.cookie, key, `value ${round}`);
      const taken = await Promise.all([
        held(store).takeOneView(admin.cookie, key),
        held(second).takeOneView(admin.cookie, key),
      ]);
      expect(taken.filter((value) => value !== undefined)).toEqual([`value ${round}`]);
    }
  });

  it('stores a view only sealed under the session cookie value, which the store does not hold', async () => {
    const admin = await signIn(a, await userWith(a, ['admin']));
    const other = await signIn(a, await userWith(a, ['admin']));
    const value = 'lfs_a-secret-that-must-never-be-stored-in-clear';
    await a.services.signIns.keepForOneView(admin.cookie, 'sealed', value);
    const row = await store.db
      .selectFrom('admin_one_time_views')
      .selectAll()
      .where('sign_in_hash', '=', sha256Hex(admin.cookie))
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(value);
    expect(JSON.stringify(row)).not.toContain(admin.cookie);
    expect(openSealed(admin.cookie, row.sealed, 'one-time view')).toBe(value);
    expect(openSealed(other.cookie, row.sealed, 'one-time view')).toBeUndefined();
    expect(openSealed(admin.cookie, row.sealed)).toBeUndefined();
    expect(await b.services.signIns.takeOneView(other.cookie, 'sealed')).toBeUndefined();
    expect(await b.services.signIns.takeOneView(admin.cookie, 'sealed')).toBe(value);
  });

  it(`keeps at most ${ONE_TIME_VIEWS_PER_SESSION_MAX} views waiting per session, dropping the oldest`, async () => {
    const admin = await signIn(a, await userWith(a, ['admin']));
    const other = await signIn(a, await userWith(a, ['admin']));
    await b.services.signIns.keepForOneView(other.cookie, 'other', 'kept');
    const keys = Array.from({ length: ONE_TIME_VIEWS_PER_SESSION_MAX + 2 }, (_, i) => `view-${i}`);
    for (const [i, key] of keys.entries()) {
      await (i % 2 === 0 ? a : b).services.signIns.keepForOneView(admin.cookie, key, `value ${key}`);
    }
    expect(await waitingKeys(admin)).toEqual(keys.slice(2));
    expect(await a.services.signIns.takeOneView(admin.cookie, 'view-0')).toBeUndefined();
    expect(await a.services.signIns.takeOneView(admin.cookie, 'view-2')).toBe('value view-2');
    // Keeping a key again replaces its view, and it counts once.
    await a.services.signIns.keepForOneView(admin.cookie, 'view-5', 'again');
    expect(await waitingKeys(admin)).toEqual([...keys.slice(3).filter((k) => k !== 'view-5'), 'view-5']);
    expect(await b.services.signIns.takeOneView(admin.cookie, 'view-5')).toBe('again');
    expect(await b.services.signIns.takeOneView(other.cookie, 'other')).toBe('kept');
  });

  it('ignores an expired view, which the periodic purge deletes; a sign-out drops the session’s views', async () => {
    const admin = await signIn(a, await userWith(a, ['admin']));
    await a.services.signIns.keepForOneView(admin.cookie, 'old', 'old value');
    await a.services.signIns.keepForOneView(admin.cookie, 'late', 'late value');
    clock.advance(ONE_TIME_VIEW_TTL_MS / 2);
    await a.services.signIns.keepForOneView(admin.cookie, 'young', 'young value');
    clock.advance(ONE_TIME_VIEW_TTL_MS / 2 + 1);
    expect(await b.services.signIns.takeOneView(admin.cookie, 'late')).toBeUndefined();
    expect(await waitingKeys(admin)).toEqual(['old', 'young']);
    expect(await b.services.signIns.purgeExpired()).toBeGreaterThanOrEqual(1);
    expect(await waitingKeys(admin)).toEqual(['young']);
    expect((await admin.post('/admin/logout', {})).statusCode).toBe(200);
    expect(await waitingKeys(admin)).toEqual([]);
  });
});
