import type { LightMyRequestResponse } from 'fastify';
import type { Services } from '../../src/composition/services.js';
import type { TestApp } from '../helpers/app.js';

/** Password of the users the administration tests create. */
export const PASSWORD = 'correct horse battery staple';

let counter = 0;

/** A new user with a password and these roles; returns the e-mail. */
export async function userWith(t: { services: Services }, roles: string[]): Promise<string> {
  counter += 1;
  const email = `admin-test${counter}-${Date.now()}@example.test`;
  await t.services.access.createUser(
    {
      email,
      roles,
      password: PASSWORD,
      displayName: `Tester ${counter}`,
    },
    { actor: { user: 'test-setup' } },
  );
  return email;
}

/** The value of a Set-Cookie header's cookie, by name. */
export function cookieOf(response: LightMyRequestResponse, name: string): string | undefined {
  const cookie = response.cookies.find((c) => c.name === name);
  return cookie?.value;
}

/** A signed-in browser-like session over `app.inject`: the cookie and the CSRF token. */
export interface Signed {
  cookie: string;
  csrf: string;
  get(url: string): Promise<LightMyRequestResponse>;
  post(
    url: string,
    fields: Record<string, string | string[]>,
    options?: { csrf?: string | null },
  ): Promise<LightMyRequestResponse>;
}

function encode(fields: Record<string, string | string[]>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) {
    for (const v of [value].flat()) params.append(name, v);
  }
  return params.toString();
}

/** Signs in with e-mail and password and returns helpers that send the cookie (and CSRF token). */
export async function signIn(t: Pick<TestApp, 'app'>, email: string, password = PASSWORD): Promise<Signed> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/admin/login',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: encode({ email, password }),
  });
  const cookie = cookieOf(response, 'lf_admin_session');
  if (response.statusCode !== 303 || cookie === undefined) {
    throw new Error(`sign-in failed: ${response.statusCode} ${response.body}`);
  }
  const account = await t.app.inject({ url: '/admin/account', cookies: { lf_admin_session: cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(account.body)?.[1];
  if (csrf === undefined) throw new Error('no CSRF token on the account page');
  return {
    cookie,
    csrf,
    get: (url) => t.app.inject({ url, cookies: { lf_admin_session: cookie } }),
    post: (url, fields, options = {}) => {
      const token = options.csrf === undefined ? csrf : options.csrf;
      return t.app.inject({
        method: 'POST',
        url,
        cookies: { lf_admin_session: cookie },
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: encode(token === null ? fields : { ...fields, _csrf: token }),
      });
    },
  };
}
