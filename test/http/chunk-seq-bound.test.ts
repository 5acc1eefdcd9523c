import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { uploadRealisticConfiguration } from '../helpers/fixtures.js';

/**
 * A chunk's sequence number in a query is bounded by the largest integer JavaScript holds
 * exactly: above 2^63 PostgreSQL refused it with an internal error, and between the two the
 * number was silently rounded.
 */
describe('the chunkSeq filter of a session error list', () => {
  let t: TestApp;
  let token: string;
  let ingestionId: string;

  beforeAll(async () => {
    t = await createTestApp();
    await uploadRealisticConfiguration(t);
    token = await t.tokenFor(['admin']);
    const session = await t.call(token, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace: 'loans', entity: 'loanTransaction' },
    });
    ingestionId = session.json<{ ingestionId: string }>().ingestionId;
  });
  afterAll(async () => {
    await t.close();
  });

  it.each(['9007199254740992', '9223372036854775808', '99999999999999999999'])(
    'refuses %s with a 400 naming the parameter',
    async (chunkSeq) => {
      const response = await t.call(token, {
        method: 'GET',
        url: `/api/v1/ingestions/${ingestionId}/errors?chunkSeq=${chunkSeq}`,
      });
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json()).toMatchObject({
        type: 'urn:ledgerflow:problem:validation-failed',
        errors: [expect.objectContaining({ path: '/querystring/chunkSeq' })],
      });
    },
  );

  it('answers an empty page for the largest exact number', async () => {
    const response = await t.call(token, {
      method: 'GET',
      url: `/api/v1/ingestions/${ingestionId}/errors?chunkSeq=${Number.MAX_SAFE_INTEGER}`,
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ data: [], totalSize: 0 });
  });
});
