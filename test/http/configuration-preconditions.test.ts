import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { realisticConfiguration } from '../helpers/fixtures.js';

const BULK = '/api/v1/configuration/bulk';

describe('DELETE /api/v1/configuration/bulk: its body', () => {
  let t: TestApp;
  let operator: string;
  beforeAll(async () => {
    t = await createTestApp();
    operator = await t.tokenFor(['bulk-operator']);
  });
  afterAll(async () => t?.close());

  it('refuses an unknown member, naming it, and deletes nothing', async () => {
    expect(
      (await t.call(operator, { method: 'PUT', url: BULK, payload: realisticConfiguration() })).statusCode,
    ).toBe(200);
    const refused = await t.call(operator, { method: 'DELETE', url: BULK, payload: { dryrun: true } });
    expect(refused.statusCode).toBe(400);
    expect(refused.headers['content-type']).toContain('application/problem+json');
    expect(refused.json()).toMatchObject({
      type: 'urn:ledgerflow:problem:validation-failed',
      detail: '/dryrun is not a known member',
      errors: [{ path: '/dryrun', message: 'is not a known member' }],
    });
    const notAnObject = await t.call(operator, {
      method: 'DELETE',
      url: BULK,
      payload: '[]',
      headers: { 'content-type': 'application/json' },
    });
    expect(notAnObject.statusCode).toBe(400);
    expect(notAnObject.json().errors).toEqual([{ path: '', message: 'must be object' }]);
    const stored = await t.call(operator, { method: 'GET', url: BULK });
    expect(stored.json().configuration.entities.length).toBeGreaterThan(0);
  });

  it('accepts no body and an empty object', async () => {
    expect((await t.call(operator, { method: 'DELETE', url: BULK })).statusCode).toBe(204);
    expect((await t.call(operator, { method: 'DELETE', url: BULK, payload: {} })).statusCode).toBe(204);
  });
});
