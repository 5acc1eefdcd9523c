import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AppError } from '../../src/lib/errors.js';
import { StoreUnavailableError } from '../../src/storage/errors.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { openLoanSession, uploadRealisticConfiguration } from '../helpers/fixtures.js';
import { loanRecords } from '../helpers/records.js';

/**
 * A store outage while a chunk arrives answered 404 `session-not-found`, which tells a client
 * to give up on a session that is fine: the entity lookup's every failure was taken for a
 * session wiped by a configuration upload. A store fault is a 503 to retry, like everywhere.
 */
describe('a store fault while a chunk looks up its entity', () => {
  let t: TestApp;
  let writer: string;
  beforeAll(async () => {
    t = await createTestApp();
    writer = await t.tokenFor(['api-client']);
    await uploadRealisticConfiguration(t);
  });
  afterAll(async () => t?.close());

  it('answers 503 with Retry-After, and the same chunk sent again is stored', async () => {
    const id = await openLoanSession(t, writer);
    const send = () =>
      t.call(writer, {
        method: 'POST',
        url: `/api/v1/ingestions/${id}`,
        headers: { 'content-type': 'application/json', 'idempotency-key': 'k1' },
        payload: JSON.stringify({ data: loanRecords(2) }),
      });
    const lookup = vi
      .spyOn(t.services.catalog, 'entity')
      .mockRejectedValueOnce(new StoreUnavailableError('the database did not answer'));
    try {
      const response = await send();
      expect(response.statusCode, response.body).toBe(503);
      expect(response.headers['content-type']).toContain('application/problem+json');
      expect(response.headers['retry-after']).toBeDefined();
      expect(response.json().type).toBe('urn:ledgerflow:problem:unavailable');
    } finally {
      lookup.mockRestore();
    }
    const retried = await send();
    expect(retried.statusCode, retried.body).toBe(201);
    const session = await t.call(writer, { method: 'GET', url: `/api/v1/ingestions/${id}` });
    expect(session.json()).toMatchObject({ state: 'pending', chunks: 1, totalRows: 2, successRows: 2 });
  });

  it('still answers 404 session-not-found when the entity is gone', async () => {
    const id = await openLoanSession(t, writer);
    // Gone from the configuration prepared last and from the current one alike.
    const lookup = vi
      .spyOn(t.services.catalog, 'entity')
      .mockRejectedValue(new AppError('entity-not-found', 'no entity loans.loanTransaction'));
    try {
      const response = await t.call(writer, {
        method: 'POST',
        url: `/api/v1/ingestions/${id}`,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ data: loanRecords(1) }),
      });
      expect(response.statusCode, response.body).toBe(404);
      expect(response.json().type).toBe('urn:ledgerflow:problem:session-not-found');
    } finally {
      lookup.mockRestore();
    }
  });
});
