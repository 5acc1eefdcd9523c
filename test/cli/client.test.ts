import { describe, expect, it } from 'vitest';
import { CliError, EXIT_REFUSED, EXIT_USAGE } from '../../src/cli/output.js';
import {
  ApiClient,
  ApiError,
  connectionOf,
  errorMessageOf,
  RETRY_ATTEMPTS_MAX,
} from '../../src/cli/remote/client.js';
import { Session } from '../../src/http/api/answer-schemas.js';

const SECRET = 's3cret-value';
const connection = { url: 'http://ledgerflow.test/', clientId: 'cl_1', clientSecret: SECRET };

interface Call {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
}

type Handler = (call: Call, index: number) => Response | Error;

/** A fetch that records every call and answers with `handler`. */
function fakeFetch(handler: Handler): { fetch: typeof fetch; calls: Call[] } {
  const calls: Call[] = [];
  const fake = async (input: string | URL | Request, init?: RequestInit) => {
    const call: Call = {
      url: String(input),
      method: init?.method ?? 'GET',
      headers: (init?.headers ?? {}) as Record<string, string>,
      body: typeof init?.body === 'string' ? init.body : undefined,
    };
    calls.push(call);
    const answer = handler(call, calls.length - 1);
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return { fetch: fake as typeof fetch, calls };
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  const type = status >= 400 ? 'application/problem+json' : 'application/json';
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': type, ...headers } });
}

let tokenCount = 0;
function tokenAnswer(expiresIn = 300, refreshExpiresIn = 1800): Response {
  tokenCount += 1;
  return json(200, {
    access_token: `at-${tokenCount}`,
    token_type: 'Bearer',
    expires_in: expiresIn,
    refresh_token: `rt-${tokenCount}`,
    refresh_expires_in: refreshExpiresIn,
  });
}

function grantOf(call: Call): string | null {
  return new URLSearchParams(call.body ?? '').get('grant_type');
}

const noSleep = async () => {};

describe('connectionOf', () => {
  it('takes options first, then LEDGERFLOW_* variables', () => {
    expect(
      connectionOf(
        { url: 'http://a.test:8080', 'client-id': 'x' },
        { LEDGERFLOW_URL: 'http://b.test', LEDGERFLOW_CLIENT_ID: 'y', LEDGERFLOW_CLIENT_SECRET: 'z' },
      ),
    ).toEqual({ url: 'http://a.test:8080/', clientId: 'x', clientSecret: 'z' });
  });

  it('is a usage error when something is missing or the URL is not http(s)', () => {
    const missing = (() => {
      try {
        connectionOf({ url: 'http://a.test' }, {});
      } catch (error) {
        return error;
      }
    })();
    expect(missing).toBeInstanceOf(CliError);
    expect((missing as CliError).exitCode).toBe(EXIT_USAGE);
    expect((missing as CliError).message).toContain('--client-id');
    expect(() => connectionOf({ url: 'ftp://a.test', 'client-id': 'a', 'client-secret': 'b' }, {})).toThrow(
      /http or https/,
    );
  });
});

describe('errorMessageOf', () => {
  it('prints status, title, detail and each errors[] entry on its own line', () => {
    const message = errorMessageOf('PUT', '/api/v1/configuration/bulk', 400, {
      type: 'urn:ledgerflow:problem:configuration-invalid',
      title: 'The configuration is not valid',
      status: 400,
      detail: '2 problems',
      errors: [
        { path: '/configuration/journalTypes/1/behavior', message: 'must be PERMANENT or REVERSING' },
        { path: '/version', message: 'is required' },
      ],
    });
    expect(message.split('\n')).toEqual([
      'PUT /api/v1/configuration/bulk: 400 The configuration is not valid: 2 problems',
      '/configuration/journalTypes/1/behavior: must be PERMANENT or REVERSING',
      '/version: is required',
    ]);
  });

  it('prints an error of a whole record (no field) without an empty field before it', () => {
    const message = errorMessageOf('GET', '/x', 400, {
      title: 't',
      errors: [{ index: 7, errors: [{ field: '', code: 'no-rule', message: 'event type X has no rule' }] }],
    });
    expect(message).toContain('\nrecord 7: event type X has no rule (no-rule)');
    expect(message).not.toContain(': :');
  });

  it('prints the detail of a problem in full', () => {
    const detail = `no entity nope in namespace loans; did you mean loanTransaction? ${'x'.repeat(600)}`;
    expect(errorMessageOf('POST', '/api/v1/ingestions', 404, { title: 'Not found', detail })).toBe(
      `POST /api/v1/ingestions: 404 Not found: ${detail}`,
    );
  });

  it('prints failed chunk records with their field errors', () => {
    const message = errorMessageOf('POST', '/api/v1/ingestions/in_1', 400, {
      title: 'Records of the chunk failed validation',
      detail: '1 record failed',
      errors: [
        { index: 3, record: {}, errors: [{ field: 'amount', code: 'required', message: 'is required' }] },
      ],
    });
    expect(message).toContain('\nrecord 3: amount: is required (required)');
  });

  it('prints OAuth errors', () => {
    expect(
      errorMessageOf('POST', '/auth/token', 401, { error: 'invalid_client', error_description: 'no' }),
    ).toBe('POST /auth/token: 401 invalid_client: no');
  });
});

describe('ApiClient', () => {
  it('gets one token by client credentials and reuses it', async () => {
    const { fetch, calls } = fakeFetch((call) =>
      call.url.endsWith('/auth/token') ? tokenAnswer() : json(200, { ok: 1 }),
    );
    const client = new ApiClient(connection, { fetch, sleep: noSleep });
    await client.json({ method: 'GET', path: '/api/v1/a' });
    await client.json({ method: 'GET', path: '/api/v1/b' });
    expect(calls.map((call) => call.url)).toEqual([
      'http://ledgerflow.test/auth/token',
      'http://ledgerflow.test/api/v1/a',
      'http://ledgerflow.test/api/v1/b',
    ]);
    expect(grantOf(calls[0] as Call)).toBe('client_credentials');
    expect(calls[1]?.headers.authorization).toMatch(/^Bearer at-\d+$/);
  });

  it('refreshes shortly before expires_in runs out, once for parallel requests', async () => {
    let nowMs = 1_000_000;
    const { fetch, calls } = fakeFetch((call) =>
      call.url.endsWith('/auth/token') ? tokenAnswer(300) : json(200, {}),
    );
    const client = new ApiClient(connection, { fetch, sleep: noSleep, now: () => nowMs });
    await client.json({ method: 'GET', path: '/x' });
    nowMs += 269_000; // 31 s left: still used
    await client.json({ method: 'GET', path: '/x' });
    expect(calls.filter((call) => call.url.endsWith('/auth/token'))).toHaveLength(1);
    nowMs += 2_000; // 29 s left: renewed, by the refresh grant, once for all
    await Promise.all([1, 2, 3].map(() => client.json({ method: 'GET', path: '/x' })));
    const grants = calls.filter((call) => call.url.endsWith('/auth/token'));
    expect(grants.map(grantOf)).toEqual(['client_credentials', 'refresh_token']);
    expect(new URLSearchParams(grants[1]?.body).get('refresh_token')).toMatch(/^rt-/);
    expect(new URLSearchParams(grants[1]?.body).get('client_secret')).toBe(SECRET);
  });

  it('renews a 5-second token at half its life, before it runs out', async () => {
    let nowMs = 0;
    const { fetch, calls } = fakeFetch((call) =>
      call.url.endsWith('/auth/token') ? tokenAnswer(5, 1800) : json(200, {}),
    );
    const client = new ApiClient(connection, { fetch, sleep: noSleep, now: () => nowMs });
    await client.json({ method: 'GET', path: '/x' });
    nowMs = 2_400;
    await client.json({ method: 'GET', path: '/x' });
    expect(calls.filter((call) => call.url.endsWith('/auth/token'))).toHaveLength(1);
    nowMs = 2_600; // 2.4 s left: renewed, so a request sent now still arrives with a valid token
    await client.json({ method: 'GET', path: '/x' });
    expect(calls.filter((call) => call.url.endsWith('/auth/token')).map(grantOf)).toEqual([
      'client_credentials',
      'refresh_token',
    ]);
  });

  it('falls back to client credentials when the refresh token is refused or expired', async () => {
    let nowMs = 0;
    const { fetch, calls } = fakeFetch((call) => {
      if (!call.url.endsWith('/auth/token')) return json(200, {});
      if (grantOf(call) === 'refresh_token') return json(400, { error: 'invalid_grant' });
      return tokenAnswer(10, 20);
    });
    const client = new ApiClient(connection, { fetch, sleep: noSleep, now: () => nowMs });
    await client.json({ method: 'GET', path: '/x' });
    nowMs = 9_500;
    await client.json({ method: 'GET', path: '/x' });
    nowMs = 30_000; // the refresh token has expired too: not even tried
    await client.json({ method: 'GET', path: '/x' });
    const grants = calls.filter((call) => call.url.endsWith('/auth/token')).map(grantOf);
    expect(grants).toEqual([
      'client_credentials',
      'refresh_token',
      'client_credentials',
      'client_credentials',
    ]);
  });

  it('renews the token once on a 401 and repeats the request', async () => {
    let apiCalls = 0;
    const { fetch } = fakeFetch((call) => {
      if (call.url.endsWith('/auth/token')) return tokenAnswer();
      apiCalls += 1;
      return apiCalls === 1 ? json(401, { title: 'The access token is not valid' }) : json(201, { id: 1 });
    });
    const client = new ApiClient(connection, { fetch, sleep: noSleep });
    expect(await client.json({ method: 'POST', path: '/x', json: {} })).toEqual({ id: 1 });
  });

  it('renews only once per request: a second 401 is the answer', async () => {
    const { fetch, calls } = fakeFetch((call) =>
      call.url.endsWith('/auth/token')
        ? tokenAnswer()
        : json(401, { title: 'The access token is not valid' }),
    );
    const client = new ApiClient(connection, { fetch, sleep: noSleep });
    const error = await client.request({ method: 'GET', path: '/x' }).catch((e: unknown) => e);
    expect((error as ApiError).status).toBe(401);
    expect(calls.filter((call) => call.url.endsWith('/x'))).toHaveLength(2);
  });

  it('retries a keyed POST on network errors, 429 and 5xx with the same key and body', async () => {
    const delays: number[] = [];
    const { fetch, calls } = fakeFetch((call, index) => {
      if (call.url.endsWith('/auth/token')) return tokenAnswer();
      if (index === 1)
        return new TypeError('fetch failed', {
          cause: Object.assign(new Error('x'), { code: 'ECONNRESET' }),
        });
      if (index === 2) return json(429, { title: 'Too many requests' }, { 'retry-after': '1' });
      if (index === 3) return json(503, { title: 'Unavailable' });
      return json(201, { ok: true });
    });
    const retries: string[] = [];
    const client = new ApiClient(connection, {
      fetch,
      sleep: async (ms) => {
        delays.push(ms);
      },
      random: () => 1,
      onRetry: (message) => retries.push(message),
    });
    await client.json({ method: 'POST', path: '/chunk', body: '{"data":[]}', idempotencyKey: 'in_1:1' });
    const posts = calls.filter((call) => call.url.endsWith('/chunk'));
    expect(posts).toHaveLength(4);
    expect(new Set(posts.map((call) => call.headers['idempotency-key']))).toEqual(new Set(['in_1:1']));
    expect(new Set(posts.map((call) => call.body))).toEqual(new Set(['{"data":[]}']));
    expect(delays).toEqual([250, 1000, 1000]); // jittered backoff, Retry-After, backoff
    expect(retries[0]).toContain('ECONNRESET');
    expect(client.retries).toBe(3);
    for (const message of retries) {
      expect(message).not.toContain(SECRET);
      expect(message).not.toContain('at-');
    }
  });

  it('gives up after RETRY_ATTEMPTS_MAX attempts with the last problem', async () => {
    const { fetch, calls } = fakeFetch((call) =>
      call.url.endsWith('/auth/token') ? tokenAnswer() : json(503, { title: 'Unavailable', detail: 'down' }),
    );
    const client = new ApiClient(connection, { fetch, sleep: noSleep });
    const error = await client.request({ method: 'GET', path: '/x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(503);
    expect((error as ApiError).exitCode).toBe(EXIT_REFUSED);
    expect(calls.filter((call) => call.url.endsWith('/x'))).toHaveLength(RETRY_ATTEMPTS_MAX);
  });

  it('never retries a POST without an idempotency key', async () => {
    const { fetch, calls } = fakeFetch((call) =>
      call.url.endsWith('/auth/token') ? tokenAnswer() : new TypeError('fetch failed'),
    );
    const client = new ApiClient(connection, { fetch, sleep: noSleep });
    const error = await client.request({ method: 'POST', path: '/x', json: {} }).catch((e: unknown) => e);
    expect((error as CliError).message).toContain('cannot reach http://ledgerflow.test');
    expect(calls.filter((call) => call.url.endsWith('/x'))).toHaveLength(1);
  });

  it('reports refused credentials without the secret', async () => {
    const { fetch } = fakeFetch(() =>
      json(401, {
        error: 'invalid_client',
        error_description: 'the client is unknown or the secret is wrong',
      }),
    );
    const client = new ApiClient(connection, { fetch, sleep: noSleep });
    const error = (await client.request({ method: 'GET', path: '/x' }).catch((e: unknown) => e)) as ApiError;
    expect(error.status).toBe(401);
    expect(error.message).toContain('invalid_client');
    expect(error.message).not.toContain(SECRET);
  });

  it('returns accepted error statuses instead of throwing', async () => {
    const { fetch } = fakeFetch((call) =>
      call.url.endsWith('/auth/token') ? tokenAnswer() : json(400, { errors: [{ index: 0 }] }),
    );
    const client = new ApiClient(connection, { fetch, sleep: noSleep });
    const answer = await client.request({
      method: 'POST',
      path: '/x',
      body: '{}',
      idempotencyKey: 'k',
      accept: [400],
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ errors: [{ index: 0 }] });
  });

  it('checks an answer against the route schema and names the endpoint when it does not match', async () => {
    const { fetch } = fakeFetch((call) =>
      call.url.endsWith('/auth/token') ? tokenAnswer() : json(200, { ingestionId: 'in_1', state: 'open' }),
    );
    const client = new ApiClient(connection, { fetch, sleep: noSleep });
    const failure = await client
      .json({ method: 'GET', path: '/api/v1/ingestions/in_1' }, Session)
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CliError);
    expect((failure as CliError).exitCode).toBe(EXIT_REFUSED);
    expect((failure as CliError).message).toMatch(
      /^GET \/api\/v1\/ingestions\/in_1: the answer does not match the API \(at \/\w+: [^\n]+\)$/,
    );
  });

  it('refuses a token answer without an access token in one line', async () => {
    const { fetch } = fakeFetch(() => json(200, { token_type: 'Bearer', expires_in: 300 }));
    const client = new ApiClient(connection, { fetch, sleep: noSleep });
    await expect(client.json({ method: 'GET', path: '/x' })).rejects.toThrow(
      /^POST \/auth\/token \(client_credentials\): the answer does not match the API \(at \/access_token: /,
    );
  });
});
