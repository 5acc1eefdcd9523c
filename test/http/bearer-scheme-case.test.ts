import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, form, type TestApp } from '../helpers/app.js';

/**
 * Issue 14, point 11: `Authorization: bearer <token>` (lower case) was refused, though an HTTP
 * authentication scheme's name is case-insensitive. Any case is accepted, at the API and for
 * HTTP Basic at the token endpoint.
 */
describe('authentication scheme names in any case', () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await createTestApp();
    token = await t.tokenFor(['viewer']);
  });
  afterAll(async () => t?.close());

  it.each(['Bearer', 'bearer', 'BEARER', 'bEaReR'])('accepts the scheme %s', async (scheme) => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/api/v1/journals',
      headers: { authorization: `${scheme} ${token}` },
    });
    expect(response.statusCode, response.body).toBe(200);
  });

  it('still refuses another scheme and a missing token', async () => {
    for (const authorization of ['Token abc', 'bearer', 'bearer  ']) {
      const response = await t.app.inject({
        method: 'GET',
        url: '/api/v1/journals',
        headers: { authorization },
      });
      expect(response.statusCode, authorization).toBe(401);
    }
  });

  it('accepts basic in lower case at the token endpoint', async () => {
    const credential = await t.credentialFor(['viewer']);
    const basic = Buffer.from(`${credential.clientId}:${credential.clientSecret}`).toString('base64');
    const response = await t.app.inject({
      method: 'POST',
      url: '/auth/token',
      ...form({ grant_type: 'client_credentials' }),
      headers: { ...form({}).headers, authorization: `basic ${basic}` },
    });
    expect(response.statusCode, response.body).toBe(200);
  });
});
