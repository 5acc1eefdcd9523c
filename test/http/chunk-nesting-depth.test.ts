import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECORD_NESTING_DEPTH_MAX } from '../../src/modules/entities/record-validator.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { openLoanSession, uploadRealisticConfiguration } from '../helpers/fixtures.js';
import { loanRecord } from '../helpers/records.js';

/**
 * Issue 14, point 5: a record nesting arrays 100,000 levels deep made the store's
 * `JSON.stringify` overflow the stack (500) after the chunk had taken its sequence number.
 * Such a record is now a failed record with `nesting-too-deep`, listed as null.
 */
describe('point 5: deeply nested records in a chunk', () => {
  let t: TestApp;
  let writer: string;
  beforeAll(async () => {
    t = await createTestApp();
    writer = await t.tokenFor(['api-client']);
    await uploadRealisticConfiguration(t);
  });
  afterAll(async () => t?.close());

  const open = () => openLoanSession(t, writer);
  const send = (id: string, payload: string, query = '') =>
    t.call(writer, {
      method: 'POST',
      url: `/api/v1/ingestions/${id}${query}`,
      headers: { 'content-type': 'application/json' },
      payload,
    });
  /** A chunk body whose second record holds an array nested `levels` deep, built as text. */
  const deepChunk = (levels: number) =>
    `{"data":[${JSON.stringify(loanRecord(1))},{"extra":${'['.repeat(levels)}${']'.repeat(levels)}},${JSON.stringify(loanRecord(2))}]}`;

  it('parses a body nested 100,000 levels deep and refuses the record with nesting-too-deep', async () => {
    const id = await open();
    const response = await send(id, deepChunk(100_000));
    expect(response.statusCode, response.body).toBe(400);
    const body = response.json();
    expect(body.type).toMatch(/chunk-invalid$/);
    expect(body.chunkSeq).toBe(1);
    expect(body.errors).toEqual([
      {
        index: 1,
        record: null,
        errors: expect.arrayContaining([expect.objectContaining({ field: '', code: 'nesting-too-deep' })]),
      },
    ]);
    // The next chunk takes the next number: none was used up by a failure.
    const next = await send(id, JSON.stringify({ data: [loanRecord(3)] }));
    expect(next.statusCode, next.body).toBe(201);
    expect(next.json().chunkSeq).toBe(2);
  });

  it('keeps the valid records under partial=true and lists the deep one in the session errors', async () => {
    const id = await open();
    const response = await send(id, deepChunk(100_000), '?partial=true');
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json()).toMatchObject({ acceptedRows: 2, failedRows: 1 });
    expect(response.json()).not.toHaveProperty('errorsOmitted');
    const errors = await t.call(writer, { method: 'GET', url: `/api/v1/ingestions/${id}/errors` });
    expect(errors.statusCode, errors.body).toBe(200);
    expect(errors.json().data).toEqual([
      expect.objectContaining({ kind: 'validation', index: 1, record: null }),
    ]);
  });

  it(`repeats a failed record nested ${RECORD_NESTING_DEPTH_MAX} levels deep, not one level more`, async () => {
    const id = await open();
    // The record object is level 1, so its member holds RECORD_NESTING_DEPTH_MAX - 1 levels.
    const atLimit = await send(id, deepChunk(RECORD_NESTING_DEPTH_MAX - 1));
    expect(atLimit.statusCode).toBe(400);
    expect(atLimit.json().errors[0].record).not.toBeNull();
    const beyond = await send(id, deepChunk(RECORD_NESTING_DEPTH_MAX));
    expect(beyond.statusCode).toBe(400);
    expect(beyond.json().errors[0].record).toBeNull();
  });
});
