import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { openLoanSession, uploadRealisticConfiguration } from '../helpers/fixtures.js';
import { loanRecord, loanRecords } from '../helpers/records.js';

/**
 * A file with bad lines sent without `partial`, then again with `--partial --session` as the
 * command line suggests, showed 71,230 rows and 21,234 failed for 50,000 lines, and each bad
 * record twice: the rejected chunks had counted every row as failed, and their failed records
 * were listed, before the same records were sent again and counted and listed once more. A
 * rejected chunk now counts in no row counter and its failures are listed only by its
 * `chunkSeq`, so the session reconciles with the file: stored + failed = records sent.
 */
describe('counters after a rejected chunk is sent again with partial=true', () => {
  let t: TestApp;
  let writer: string;
  beforeAll(async () => {
    t = await createTestApp();
    writer = await t.tokenFor(['api-client']);
    await uploadRealisticConfiguration(t);
  });
  afterAll(async () => t?.close());

  const send = (id: string, data: unknown[], key: string, partial: boolean) =>
    t.call(writer, {
      method: 'POST',
      url: `/api/v1/ingestions/${id}${partial ? '?partial=true' : ''}`,
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      payload: JSON.stringify({ data }),
    });
  const get = async (url: string) => {
    const response = await t.call(writer, { method: 'GET', url });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };

  it('counts every record sent once and lists every failed record once', async () => {
    const id = await openLoanSession(t, writer);
    // The file: three chunks of five records, two bad in the second, one in the third.
    const chunks = [
      loanRecords(5, 0),
      [
        loanRecord(5),
        loanRecord(6, { amount: 'x' }),
        loanRecord(7),
        loanRecord(8, { currency: 7 }),
        loanRecord(9),
      ],
      [
        loanRecord(10),
        loanRecord(11),
        loanRecord(12, { valueDate: '2026-02-30' }),
        loanRecord(13),
        loanRecord(14),
      ],
    ];

    // First run, atomic: the first chunk is stored, the other two are rejected.
    const first = await Promise.all(chunks.map((data, i) => send(id, data, `file-${i}`, false)));
    expect(first.map((r) => r.statusCode)).toEqual([201, 400, 400]);
    expect(await get(`/api/v1/ingestions/${id}`)).toMatchObject({
      chunks: 1,
      totalRows: 5,
      successRows: 5,
      failedRows: 0,
    });
    expect((await get(`/api/v1/ingestions/${id}/errors`)).totalSize).toBe(0);
    const rejectedSeq = first[1]?.json().chunkSeq as number;
    const rejectedErrors = await get(`/api/v1/ingestions/${id}/errors?chunkSeq=${rejectedSeq}`);
    expect(rejectedErrors.data.map((e: { index: number }) => e.index)).toEqual([1, 3]);

    // The recovery run with partial: the stored chunk replays, the rejected ones replay their
    // rejection under their first key and are sent again under a key of their own.
    for (const [i, data] of chunks.entries()) {
      const again = await send(id, data, `file-${i}`, true);
      expect(again.headers['idempotent-replayed']).toBe('true');
      if (again.statusCode === 400) {
        const resent = await send(id, data, `file-${i}-partial`, true);
        expect(resent.statusCode, resent.body).toBe(201);
      }
    }

    const session = await get(`/api/v1/ingestions/${id}`);
    expect(session).toMatchObject({ chunks: 3, totalRows: 15, successRows: 12, failedRows: 3 });
    expect(session.successRows + session.failedRows).toBe(chunks.flat().length);
    const records = await get(`/api/v1/namespaces/loans/entities/loanTransaction/records?ingestionId=${id}`);
    expect(records.totalSize).toBe(12);
    const errors = await get(`/api/v1/ingestions/${id}/errors`);
    expect(errors.totalSize).toBe(3);
    const failedIds = errors.data.map(
      (e: { record: { installmentNumber: number } }) => e.record.installmentNumber,
    );
    expect(failedIds.sort((a: number, b: number) => a - b)).toEqual([6, 8, 12]);
    const metrics = await get('/api/v1/statistics/operational-dashboard/ingestion-metrics');
    expect(metrics).toMatchObject({ chunks: 3, totalRows: 15, successRows: 12, failedRows: 3 });
    // The opening, the three chunks of the first run and the two sent again; a replay reads
    // the stored answer and is not counted. The rejected chunks count here only.
    expect(metrics.apiCalls).toBe(6);
  });
});
