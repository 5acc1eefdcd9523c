import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { uploadRealisticConfiguration } from '../helpers/fixtures.js';

/**
 * Many HTTP clients send `Content-Type: application/json` on every request, also a DELETE
 * without a body. An empty body is no body where the route takes none; where the route needs a
 * body, an empty one is still a 400 that says a JSON document is expected.
 */
describe('an empty body with a JSON content type', () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await createTestApp();
    admin = await t.tokenFor(['admin']);
  });
  afterAll(async () => t?.close());

  const emptyJson = (method: 'DELETE' | 'POST' | 'PUT' | 'PATCH', url: string, type = 'application/json') =>
    t.call(admin, { method, url, headers: { 'content-type': type, 'content-length': '0' }, payload: '' });

  it('is no body on DELETE /api/v1/configuration/bulk', async () => {
    await uploadRealisticConfiguration(t, admin);
    const deleted = await emptyJson('DELETE', '/api/v1/configuration/bulk');
    expect(deleted.statusCode, deleted.body).toBe(204);
    const charset = await emptyJson(
      'DELETE',
      '/api/v1/configuration/bulk',
      'application/json; charset=utf-8',
    );
    expect(charset.statusCode, charset.body).toBe(204);
  });

  it('is no body on DELETE /api/v1/credentials/{id}', async () => {
    const { clientId } = await t.credentialFor(['viewer']);
    const revoked = await emptyJson('DELETE', `/api/v1/credentials/${clientId}`);
    expect(revoked.statusCode, revoked.body).toBe(204);
  });

  it('stays a clear 400 where the route needs a body', async () => {
    for (const [method, url, type] of [
      ['POST', '/api/v1/ingestions', 'application/json'],
      ['POST', '/api/v1/users', 'application/json'],
      ['PUT', '/api/v1/configuration/bulk', 'application/json'],
      ['PATCH', '/api/v1/ingestions/in_00000000000000000000000000000000', 'application/merge-patch+json'],
    ] as const) {
      const answer = await emptyJson(method, url, type);
      expect(answer.statusCode, `${method} ${url}`).toBe(400);
      expect(answer.json()).toMatchObject({
        type: 'urn:ledgerflow:problem:malformed-json',
        detail: 'the body is empty; this endpoint expects a JSON document',
      });
    }
  });

  it('is still parsed when it is not empty, and malformed JSON is still a 400', async () => {
    const { clientId } = await t.credentialFor(['viewer']);
    const withBody = await t.call(admin, {
      method: 'DELETE',
      url: `/api/v1/credentials/${clientId}`,
      headers: { 'content-type': 'application/json' },
      payload: '{not json',
    });
    expect(withBody.statusCode).toBe(400);
    expect(withBody.json().type).toBe('urn:ledgerflow:problem:malformed-json');
  });
});
