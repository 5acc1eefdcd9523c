import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { openLoanSession, uploadRealisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent, loanRecord } from '../helpers/records.js';

interface FailedRecord {
  index: number;
  errors: { field: string; code: string; message: string }[];
}

/**
 * Issue 20, point 1: text a store cannot keep as sent (a NUL character, which PostgreSQL refuses,
 * or a lone UTF-16 surrogate, which UTF-8 cannot carry) is a validation error of its field when
 * the chunk arrives, on every store, so it never reaches processing.
 */
describe('text the stores cannot hold, in chunk records', () => {
  let t: TestApp;
  let writer: string;
  beforeAll(async () => {
    t = await createTestApp({ businessDate: '2026-11-20' });
    writer = await t.tokenFor(['bulk-operator']);
    await uploadRealisticConfiguration(t, writer);
  });
  afterAll(async () => t?.close());

  /** Sends `body` as it is written (lone surrogates as `\ud800` escapes) to a new loan session. */
  const sendLoans = async (body: string, query = '') => {
    const ingestionId = await openLoanSession(t, writer);
    const response = await t.call(writer, {
      method: 'POST',
      url: `/api/v1/ingestions/${ingestionId}${query}`,
      headers: { 'content-type': 'application/json' },
      payload: body,
    });
    return { ingestionId, response };
  };
  const fieldErrors = (failed: FailedRecord[]) =>
    failed.map((record) => record.errors.map((error) => `${record.index} ${error.field}:${error.code}`));

  it('refuses a NUL in a TEXT field, naming the field, and keeps nothing of the atomic chunk', async () => {
    const { ingestionId, response } = await sendLoans(
      JSON.stringify({ data: [loanRecord(1), loanRecord(2, { productCode: 'MORT\u0000GAGE' })] }),
    );
    expect(response.statusCode, response.body).toBe(400);
    const body = response.json();
    expect(body).toMatchObject({
      type: 'urn:ledgerflow:problem:chunk-invalid',
      acceptedRows: 0,
      // A rejected chunk counts all its records failed.
      failedRows: 2,
    });
    expect(body.errors).toEqual([
      {
        index: 1,
        record: loanRecord(2, {
          productCode: 'MORT\u0000GAGE',
          transactionId: body.errors[0].record.transactionId,
        }),
        errors: [
          {
            field: 'productCode',
            code: 'invalid-text',
            message: expect.stringContaining('a NUL character (U+0000)'),
          },
        ],
      },
    ]);
    const records = await t.call(writer, {
      method: 'GET',
      url: `/api/v1/namespaces/loans/entities/loanTransaction/records?ingestionId=${ingestionId}`,
    });
    expect(records.json().totalSize).toBe(0);
  });

  it('names list elements, lone surrogates and member names, and keeps the valid records with ?partial=true', async () => {
    const records = [
      loanRecord(1, { tags: ['fine', 'bad\u0000'] }),
      loanRecord(2, { branch: 'AMS\ud800' }),
      loanRecord(3, { branch: '\udc00AMS' }),
      { ...loanRecord(4), 'note\u0000': 'x' },
      loanRecord(5, { productCode: 'MORTGAGE \u{1F3E0}' }),
    ];
    // JSON.stringify writes a lone surrogate as its `\ud800` escape, as a sender's JSON would.
    const { ingestionId, response } = await sendLoans(JSON.stringify({ data: records }), '?partial=true');
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json()).toMatchObject({ acceptedRows: 1, failedRows: 4 });
    expect(fieldErrors(response.json().errors)).toEqual([
      ['0 tags[1]:invalid-text'],
      ['1 branch:invalid-text'],
      ['2 branch:invalid-text'],
      ['3 note\u0000:invalid-text'],
    ]);
    expect(response.json().errors[1].errors[0].message).toContain('a lone surrogate (U+D800)');
    // The failed records are stored with their errors, and the listing gives them back as sent.
    const listed = await t.call(writer, { method: 'GET', url: `/api/v1/ingestions/${ingestionId}/errors` });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json().data.map((e: { record: unknown }) => e.record)).toEqual(
      JSON.parse(JSON.stringify(records.slice(0, 4))),
    );
    // A surrogate pair (an emoji) is text like any other and reads back unchanged.
    const kept = await t.call(writer, {
      method: 'GET',
      url: `/api/v1/namespaces/loans/entities/loanTransaction/records?ingestionId=${ingestionId}`,
    });
    expect(kept.json().data.map((r: { record: { productCode: string } }) => r.record.productCode)).toEqual([
      'MORTGAGE \u{1F3E0}',
    ]);
  });

  it('refuses a chunk name that holds a NUL', async () => {
    const { response } = await sendLoans(JSON.stringify({ chunkName: 'day\u00001', data: [loanRecord(1)] }));
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toMatchObject({
      type: 'urn:ledgerflow:problem:validation-failed',
      errors: [{ path: '/chunkName', message: expect.stringContaining('NUL') }],
    });
  });

  it('refuses a NUL in a business event, so it never reaches processing', async () => {
    const session = await t.call(writer, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace: 'ledger', entity: 'businessEvent' },
    });
    const ingestionId = session.json().ingestionId as string;
    const response = await t.call(writer, {
      method: 'POST',
      url: `/api/v1/ingestions/${ingestionId}?partial=true`,
      payload: { data: [businessEvent({ legalEntity: 'LF\u0000NL' }), businessEvent()] },
    });
    expect(response.statusCode, response.body).toBe(201);
    expect(fieldErrors(response.json().errors)).toEqual([['0 legalEntity:invalid-text']]);
    await t.services.processor.drain();
    const journals = await t.call(writer, {
      method: 'GET',
      url: `/api/v1/journals?ingestionId=${ingestionId}`,
    });
    expect(journals.json().totalSize).toBe(2);
    const errors = await t.call(writer, {
      method: 'GET',
      url: `/api/v1/processing-errors?ingestionId=${ingestionId}`,
    });
    expect(errors.json().totalSize).toBe(0);
  });
});
