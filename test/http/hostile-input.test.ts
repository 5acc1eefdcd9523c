import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unstorableTextOf } from '../../src/lib/unstorable-text.js';
import { createTestApp, form, type TestApp } from '../helpers/app.js';
import { uploadRealisticConfiguration } from '../helpers/fixtures.js';
import { loanRecord } from '../helpers/records.js';

const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';

/**
 * Issue 14, point 4: a NUL character in any text of a request (a path id, a query filter, a JSON
 * or form body) reached PostgreSQL, which refuses it in text, and was a 500. It is refused with a
 * 400 naming where it is, on both stores; the token endpoint answers in the OAuth form.
 */
describe('NUL characters in requests', () => {
  let t: TestApp;
  let admin: string;
  let ingestionId: string;
  beforeAll(async () => {
    t = await createTestApp();
    admin = await t.tokenFor(['admin']);
    await uploadRealisticConfiguration(t, admin);
    const session = await t.call(admin, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace: 'loans', entity: 'loanTransaction' },
    });
    ingestionId = (session.json() as { ingestionId: string }).ingestionId;
  });
  afterAll(async () => t?.close());

  const expectRefused = (response: { statusCode: number; body: string; json(): unknown }, path: string) => {
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toMatchObject({
      type: 'urn:ledgerflow:problem:validation-failed',
      detail: `${path} ${NUL_MESSAGE}`,
      errors: [{ path, message: NUL_MESSAGE }],
    });
  };

  it.each([
    ['GET', '/api/v1/ingestions/in_%00', '/params/ingestionId'],
    ['GET', '/api/v1/ingestions/%00/errors', '/params/ingestionId'],
    ['DELETE', '/api/v1/credentials/lfc_%00', '/params/clientId'],
    ['GET', '/api/v1/namespaces/lo%00ans/entities/loanTransaction/records', '/params/ns'],
    ['GET', '/api/v1/ingestions?namespace=%00', '/querystring/namespace'],
    ['GET', '/api/v1/journals?ingestionId=in_%00', '/querystring/ingestionId'],
    ['GET', '/api/v1/processing-errors?code=%00', '/querystring/code'],
  ] as const)('%s %s: 400 naming %s', async (method, url, path) => {
    expectRefused(await t.call(admin, { method, url }), path);
  });

  it('refuses a lone surrogate in a JSON body: it would be stored as U+FFFD', async () => {
    const response = await t.call(admin, {
      method: 'POST',
      url: '/api/v1/ingestions',
      headers: { 'content-type': 'application/json' },
      payload: '{"namespace":"loans","entity":"loanTransaction","ingestionName":"bad \\ud800 name"}',
    });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toMatchObject({
      errors: [{ path: '/ingestionName', message: 'must not contain a lone surrogate (U+D800)' }],
    });
    const paired = await t.call(admin, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace: 'loans', entity: 'loanTransaction', ingestionName: 'an emoji \u{1F4B6} is fine' },
    });
    expect(paired.statusCode, paired.body).toBe(201);
  });

  it('refuses a NUL in a path id of a change with a body', async () => {
    const response = await t.call(admin, {
      method: 'PATCH',
      url: '/api/v1/users/someone%00@example.test',
      payload: { disabled: true },
    });
    expectRefused(response, '/params/email');
  });

  it.each([
    ['/api/v1/users', { email: 'nul\u0000@example.test', roles: ['viewer'] }, '/email'],
    ['/api/v1/users', { email: 'named@example.test', displayName: 'A\u0000B', roles: [] }, '/displayName'],
    ['/api/v1/credentials', { ownerEmail: 'nobody\u0000@example.test' }, '/ownerEmail'],
    ['/api/v1/ingestions', { namespace: 'loans', entity: 'loan\u0000Transaction' }, '/entity'],
  ])('POST %s with a NUL in a body member: 400 naming %s', async (url, payload, path) => {
    expectRefused(await t.call(admin, { method: 'POST', url, payload }), path);
  });

  it('refuses a NUL in a member name of a JSON body', async () => {
    const response = await t.call(admin, {
      method: 'POST',
      url: '/api/v1/users',
      payload: { email: 'member@example.test', roles: [], 'x\u0000': 1 },
    });
    expectRefused(response, '/x\u0000');
  });

  it.each<Record<string, string>>([
    { grant_type: 'client_credentials', client_id: '\u0000', client_secret: 'lfs_secret' },
    { grant_type: 'client_credentials', client_id: 'lfc_x', client_secret: 'lfs_\u0000' },
    { grant_type: 'refresh_token', client_id: 'lfc_x', client_secret: 'lfs_x', refresh_token: '\u0000' },
  ])('the token endpoint answers invalid_request in the OAuth form, not stored: %j', async (fields) => {
    const response = await t.app.inject({ method: 'POST', url: '/auth/token', ...form(fields) });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['content-type']).toContain('application/json');
    expect(response.json()).toMatchObject({ error: 'invalid_request' });
    expect(response.json().error_description).toContain(NUL_MESSAGE);
  });

  it('refuses NUL in HTTP Basic client credentials and at the revocation endpoint', async () => {
    const basic = await t.app.inject({
      method: 'POST',
      url: '/auth/token',
      ...form({ grant_type: 'client_credentials' }),
      headers: {
        ...form({}).headers,
        authorization: `Basic ${Buffer.from('lfc_%00:lfs_secret').toString('base64')}`,
      },
    });
    expect(basic.statusCode, basic.body).toBe(400);
    expect(basic.json()).toMatchObject({ error: 'invalid_request' });
    expect(basic.headers['cache-control']).toBe('no-store');
    const revoke = await t.app.inject({
      method: 'POST',
      url: '/auth/revoke',
      ...form({ token: 'a\u0000', client_id: 'lfc_x', client_secret: 'lfs_x' }),
    });
    expect(revoke.statusCode, revoke.body).toBe(400);
    expect(revoke.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('leaves a chunk body to its route: a NUL inside a record is not refused as a request', async () => {
    const response = await t.call(admin, {
      method: 'POST',
      url: `/api/v1/ingestions/${ingestionId}`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ data: [loanRecord(1, { note: 'a\u0000b' })] }),
    });
    expect(response.body).not.toContain(NUL_MESSAGE);
  });
});

describe('unstorableTextOf', () => {
  it('names the first text holding a NUL in values, member names, forms and arrays', () => {
    expect(unstorableTextOf({ a: ['x', 'y\u0000'] })?.pointer).toBe('/a/1');
    expect(unstorableTextOf({ 'a/b': { '\u0000': 1 } })?.pointer).toBe('/a~1b/\u0000');
    expect(unstorableTextOf(new Map([['client_id', ['\u0000']]]))?.pointer).toBe('/client_id');
    expect(unstorableTextOf(new URLSearchParams('name=%00'))?.pointer).toBe('/name');
    expect(unstorableTextOf({ a: 1, b: null, c: 'clean' })).toBeUndefined();
    expect(unstorableTextOf({ a: 'x\udc00' })).toEqual({
      pointer: '/a',
      message: 'must not contain a lone surrogate (U+DC00)',
    });
  });
});
