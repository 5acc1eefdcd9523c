import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { openLoanSession, uploadRealisticConfiguration } from '../helpers/fixtures.js';

/** A PATCH whose body is not JSON answers 415, as a chunk does, not 400. */
describe('PATCH with a content type that is not JSON', () => {
  let t: TestApp;
  let writer: string;
  beforeAll(async () => {
    t = await createTestApp();
    writer = await t.tokenFor(['api-client']);
    await uploadRealisticConfiguration(t);
  });
  afterAll(async () => t?.close());

  it('closing a session with text/plain answers 415 problem+json and leaves it open', async () => {
    const id = await openLoanSession(t, writer);
    const response = await t.call(writer, {
      method: 'PATCH',
      url: `/api/v1/ingestions/${id}`,
      headers: { 'content-type': 'text/plain' },
      payload: '{"state": "closed"}',
    });
    expect(response.statusCode, response.body).toBe(415);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(response.json()).toMatchObject({
      type: 'urn:ledgerflow:problem:unsupported-media-type',
      status: 415,
    });
    const chunk = await t.call(writer, {
      method: 'POST',
      url: `/api/v1/ingestions/${id}`,
      headers: { 'content-type': 'text/plain' },
      payload: '{"data": []}',
    });
    expect(chunk.statusCode).toBe(415);
    const session = await t.call(writer, { method: 'GET', url: `/api/v1/ingestions/${id}` });
    expect(session.json().state).toBe('pending');
  });

  it('changing a user with text/plain answers 415 too', async () => {
    const admin = await t.tokenFor(['admin']);
    const { ownerEmail } = await t.credentialFor(['viewer']);
    const response = await t.call(admin, {
      method: 'PATCH',
      url: `/api/v1/users/${encodeURIComponent(ownerEmail)}`,
      headers: { 'content-type': 'text/plain' },
      payload: '{"displayName": "x"}',
    });
    expect(response.statusCode, response.body).toBe(415);
    expect(response.json().type).toBe('urn:ledgerflow:problem:unsupported-media-type');
  });

  it('still accepts merge-patch and plain JSON', async () => {
    for (const type of ['application/merge-patch+json', 'application/json']) {
      const id = await openLoanSession(t, writer);
      const response = await t.call(writer, {
        method: 'PATCH',
        url: `/api/v1/ingestions/${id}`,
        headers: { 'content-type': type },
        payload: '{"state": "closed"}',
      });
      expect(response.statusCode, `${type}: ${response.body}`).toBe(200);
    }
  });
});
