import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { uploadRealisticConfiguration } from '../helpers/fixtures.js';
import { loanRecord, loanRecords } from '../helpers/records.js';

/** Contract 4: sessions, chunks, retries, reading back. */
describe('ingestion sessions and chunks', () => {
  let t: TestApp;
  let writer: string;
  beforeAll(async () => {
    t = await createTestApp();
    writer = await t.tokenFor(['api-client']);
    await uploadRealisticConfiguration(t);
  });
  afterAll(async () => t?.close());

  const open = async (body: Record<string, unknown> = {}) => {
    const response = await t.call(writer, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace: 'loans', entity: 'loanTransaction', ...body },
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json() as { ingestionId: string } & Record<string, unknown>;
  };
  const send = (
    id: string,
    payload: unknown,
    options: { query?: string; headers?: Record<string, string> } = {},
  ) =>
    t.call(writer, {
      method: 'POST',
      url: `/api/v1/ingestions/${id}${options.query ?? ''}`,
      headers: { 'content-type': 'application/json', ...options.headers },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });
  const session = async (id: string) =>
    (await t.call(writer, { method: 'GET', url: `/api/v1/ingestions/${id}` })).json();
  const close = (id: string, state = 'closed') =>
    t.call(writer, {
      method: 'PATCH',
      url: `/api/v1/ingestions/${id}`,
      headers: { 'content-type': 'application/merge-patch+json' },
      payload: JSON.stringify({ state }),
    });
  const records = async (id: string) =>
    (
      await t.call(writer, {
        method: 'GET',
        url: `/api/v1/namespaces/loans/entities/loanTransaction/records?ingestionId=${id}&limit=1000`,
      })
    ).json();

  describe('sessions', () => {
    it('opens a pending session with the documented fields and default timeout', async () => {
      const created = await open({ ingestionName: 'nightly loans' });
      expect(created).toEqual({
        ingestionId: expect.stringMatching(/^in_[0-9a-f]{32}$/),
        ingestionName: 'nightly loans',
        namespace: 'loans',
        entity: 'loanTransaction',
        state: 'pending',
        timeout: 'PT15M',
        openedBy: expect.stringMatching(/@example\.test$/),
        openedOn: expect.stringMatching(/Z$/),
        closedBy: null,
        closedOn: null,
        closeReason: null,
        lastActivityOn: created.openedOn,
        chunks: 0,
        totalRows: 0,
        successRows: 0,
        failedRows: 0,
        processingStatus: 'pending',
      });
      expect(await session(created.ingestionId)).toEqual(created);
    });

    it.each([
      [{ entity: 'loanTransaction' }, 400, '/namespace'],
      [{ namespace: 'loans' }, 400, '/entity'],
      [{ namespace: 'loans', entity: 'loanTransaction', timeout: 'PT0S' }, 400, '/timeout'],
      [{ namespace: 'loans', entity: 'loanTransaction', timeout: 'P8D' }, 400, '/timeout'],
      [{ namespace: 'loans', entity: 'loanTransaction', timeout: 'fifteen minutes' }, 400, '/timeout'],
      [{ namespace: 'loans', entity: 'loanTransaction', timeout: 'P1M' }, 400, '/timeout'],
      [{ namespace: 'loans', entity: 'loanTransaction', extra: 1 }, 400, '/extra'],
      [{ namespace: 'loans', entity: 'nothing' }, 404, undefined],
      [{ namespace: 'nowhere', entity: 'loanTransaction' }, 404, undefined],
    ])('refuses %j with %i', async (payload, status, path) => {
      const response = await t.call(writer, { method: 'POST', url: '/api/v1/ingestions', payload });
      expect(response.statusCode).toBe(status);
      if (path !== undefined)
        expect(response.json().errors.map((e: { path: string }) => e.path)).toContain(path);
      else expect(response.json().type).toBe('urn:ledgerflow:problem:entity-not-found');
    });

    it('answers 404 for an unknown session everywhere', async () => {
      for (const request of [
        { method: 'GET' as const, url: '/api/v1/ingestions/in_00000000000000000000000000000000' },
        {
          method: 'PATCH' as const,
          url: '/api/v1/ingestions/in_00000000000000000000000000000000',
          payload: { state: 'closed' },
        },
        {
          method: 'POST' as const,
          url: '/api/v1/ingestions/in_00000000000000000000000000000000',
          payload: { data: [] },
        },
        { method: 'GET' as const, url: '/api/v1/ingestions/in_00000000000000000000000000000000/errors' },
      ]) {
        const response = await t.call(writer, request);
        expect(response.statusCode, request.method).toBe(404);
        expect(response.json().type).toBe('urn:ledgerflow:problem:session-not-found');
      }
    });

    it('lists sessions newest first, filtered and paginated', async () => {
      t.clock.advance(10);
      const first = await open({ ingestionName: 'list-a' });
      t.clock.advance(10);
      const second = await open({ ingestionName: 'list-b' });
      await close(first.ingestionId);
      const listed = (await t.call(writer, { method: 'GET', url: '/api/v1/ingestions?limit=2' })).json();
      expect(listed.data.map((s: { ingestionId: string }) => s.ingestionId)).toEqual([
        second.ingestionId,
        first.ingestionId,
      ]);
      expect(listed).toMatchObject({ page: 0, limit: 2, totalPages: Math.ceil(listed.totalSize / 2) });
      const closed = (
        await t.call(writer, { method: 'GET', url: '/api/v1/ingestions?state=closed&limit=1000' })
      ).json();
      expect(closed.data.every((s: { state: string }) => s.state === 'closed')).toBe(true);
      expect(closed.data.map((s: { ingestionId: string }) => s.ingestionId)).toContain(first.ingestionId);
      const other = (
        await t.call(writer, { method: 'GET', url: '/api/v1/ingestions?namespace=ledger' })
      ).json();
      expect(other.data.every((s: { namespace: string }) => s.namespace === 'ledger')).toBe(true);
      expect((await t.call(writer, { method: 'GET', url: '/api/v1/ingestions?state=open' })).statusCode).toBe(
        400,
      );
    });

    it('closes by merge-patch (case-insensitive), closes twice unchanged, and refuses other changes', async () => {
      const { ingestionId } = await open();
      expect((await close(ingestionId, 'pending')).statusCode).toBe(400);
      const closed = await close(ingestionId, 'CLOSED');
      expect(closed.statusCode).toBe(200);
      expect(closed.json()).toMatchObject({
        state: 'closed',
        closeReason: 'manual',
        closedBy: expect.stringMatching(/@/),
        closedOn: expect.any(String),
      });
      const again = await close(ingestionId);
      expect(again.statusCode).toBe(200);
      expect(again.json()).toEqual(closed.json());
      const plainJson = await t.call(writer, {
        method: 'PATCH',
        url: `/api/v1/ingestions/${ingestionId}`,
        payload: { state: 'closed' },
      });
      expect(plainJson.statusCode).toBe(200);
      const extra = await t.call(writer, {
        method: 'PATCH',
        url: `/api/v1/ingestions/${ingestionId}`,
        payload: { state: 'closed', timeout: 'PT1H' },
      });
      expect(extra.statusCode).toBe(400);
    });

    it('refuses chunks to a closed session with 409 session-closed', async () => {
      const { ingestionId } = await open();
      await close(ingestionId);
      const response = await send(ingestionId, { data: [loanRecord(1)] });
      expect(response.statusCode).toBe(409);
      expect(response.json().type).toBe('urn:ledgerflow:problem:session-closed');
    });
  });

  describe('expiry', () => {
    it('expires after the timeout of inactivity; activity extends it; statistics see it at once', async () => {
      const { ingestionId } = await open({ timeout: 'PT2S' });
      t.clock.advance(1_500);
      expect((await send(ingestionId, { data: [loanRecord(1)] })).statusCode).toBe(201);
      t.clock.advance(1_500);
      expect((await session(ingestionId)).state).toBe('pending');
      const before = (
        await t.call(writer, {
          method: 'GET',
          url: '/api/v1/statistics/operational-dashboard/ingestion-metrics',
        })
      ).json();
      t.clock.advance(600);
      // Nobody asked for the session: the statistics and the list see it expired all the same.
      const after = (
        await t.call(writer, {
          method: 'GET',
          url: '/api/v1/statistics/operational-dashboard/ingestion-metrics',
        })
      ).json();
      expect(after.expiredIngestions).toBe(before.expiredIngestions + 1);
      expect(after.pendingIngestions).toBe(before.pendingIngestions - 1);
      const expired = (
        await t.call(writer, { method: 'GET', url: '/api/v1/ingestions?state=expired&limit=1000' })
      ).json();
      expect(expired.data.map((s: { ingestionId: string }) => s.ingestionId)).toContain(ingestionId);
      const view = await session(ingestionId);
      expect(view).toMatchObject({ state: 'expired', closeReason: 'timeout', closedBy: null });
      expect(Date.parse(view.closedOn)).toBe(Date.parse(view.lastActivityOn) + 2_000);

      const chunk = await send(ingestionId, { data: [loanRecord(2)] });
      expect(chunk.statusCode).toBe(409);
      expect(chunk.json().type).toBe('urn:ledgerflow:problem:session-expired');
      const closing = await close(ingestionId);
      expect(closing.statusCode).toBe(409);
      expect(closing.json().type).toBe('urn:ledgerflow:problem:session-expired');
    });

    it('is seen at the same millisecond by the session, the list, the statistics and the writes', async () => {
      const idsIn = async (state: string) =>
        (await t.call(writer, { method: 'GET', url: `/api/v1/ingestions?state=${state}&limit=1000` }))
          .json()
          .data.map((s: { ingestionId: string }) => s.ingestionId);
      const metrics = async () =>
        (
          await t.call(writer, {
            method: 'GET',
            url: '/api/v1/statistics/operational-dashboard/ingestion-metrics',
          })
        ).json();
      const { ingestionId } = await open({ timeout: 'PT2S' });
      t.clock.advance(1_999);
      const before = await metrics();
      expect((await session(ingestionId)).state).toBe('pending');
      expect(await idsIn('pending')).toContain(ingestionId);
      expect(await idsIn('expired')).not.toContain(ingestionId);
      t.clock.advance(1); // exactly the deadline: expired everywhere
      const after = await metrics();
      expect(after.expiredIngestions).toBe(before.expiredIngestions + 1);
      expect(after.pendingIngestions).toBe(before.pendingIngestions - 1);
      expect((await session(ingestionId)).state).toBe('expired');
      expect(await idsIn('pending')).not.toContain(ingestionId);
      expect(await idsIn('expired')).toContain(ingestionId);
      expect((await send(ingestionId, { data: [loanRecord(1)] })).statusCode).toBe(409);
      expect((await close(ingestionId)).statusCode).toBe(409);
    });
  });

  describe('chunks', () => {
    it('stores a valid chunk durably with the ingestionId and answers 201', async () => {
      const { ingestionId } = await open();
      const data = loanRecords(3);
      const response = await send(ingestionId, { chunkName: 'first', data });
      expect(response.statusCode).toBe(201);
      expect(response.json()).toEqual({
        ingestionId,
        chunkName: 'first',
        chunkSeq: 1,
        acceptedRows: 3,
        failedRows: 0,
        errors: [],
      });
      const stored = await records(ingestionId);
      expect(stored.totalSize).toBe(3);
      expect(stored.data.map((r: { ingestionId: string }) => r.ingestionId)).toEqual([
        ingestionId,
        ingestionId,
        ingestionId,
      ]);
      expect(stored.data.map((r: { record: unknown }) => r.record)).toEqual(data);
      expect(await session(ingestionId)).toMatchObject({
        chunks: 1,
        totalRows: 3,
        successRows: 3,
        failedRows: 0,
      });
      // The fixture's published flow reads this entity: the session is completed once it is
      // closed and the flow has run over every record.
      expect((await session(ingestionId)).processingStatus).toBe('pending');
      await close(ingestionId);
      expect((await session(ingestionId)).processingStatus).toBe('pending');
      expect(await t.services.processor.drain()).toBeGreaterThanOrEqual(3);
      expect((await session(ingestionId)).processingStatus).toBe('completed');
    });

    it('converts values as the attribute types say and keeps every digit of decimals', async () => {
      const { ingestionId } = await open();
      const record = loanRecord(7, {
        transactionId: 'A3BB189E-8BF9-3888-9912-ACE4E6543002',
        amount: 12.5,
        installmentNumber: '42',
        restructured: true,
        tags: ['a', 'b'],
      });
      const exact = loanRecord(8, { amount: '123456789012345.67' });
      const small = loanRecord(9, { amount: '12.345' });
      expect((await send(ingestionId, { data: [record, exact, small] })).statusCode).toBe(201);
      const stored = (await records(ingestionId)).data.map(
        (r: { record: Record<string, unknown> }) => r.record,
      );
      expect(stored[0]).toMatchObject({
        transactionId: 'a3bb189e-8bf9-3888-9912-ace4e6543002',
        amount: '12.5',
        installmentNumber: 42,
        restructured: true,
        tags: ['a', 'b'],
      });
      expect(stored[1].amount).toBe('123456789012345.67');
      expect(stored[2].amount).toBe('12.345');
    });

    it('rejects an atomic chunk with every failed record as sent, keeps and counts nothing, lists its failures by chunkSeq', async () => {
      const { ingestionId } = await open();
      const bad = [
        loanRecord(1, { amount: '12,5' }),
        loanRecord(2),
        loanRecord(3, { valueDate: '2026-02-30', currency: undefined, color: 'red' }),
        loanRecord(4, { amount: 1234567890.1234567 }),
      ];
      const response = await send(ingestionId, { chunkName: 'mixed', data: bad });
      expect(response.statusCode).toBe(400);
      expect(response.headers['content-type']).toContain('application/problem+json');
      const body = response.json();
      expect(body).toMatchObject({
        type: 'urn:ledgerflow:problem:chunk-invalid',
        status: 400,
        chunkSeq: 1,
        acceptedRows: 0,
        failedRows: 4,
      });
      expect(body.errors.map((e: { index: number }) => e.index)).toEqual([0, 2, 3]);
      expect(body.errors[0]).toEqual({
        index: 0,
        record: JSON.parse(JSON.stringify(bad[0])),
        errors: [{ field: 'amount', code: 'invalid-decimal', message: expect.any(String) }],
      });
      expect(
        body.errors[1].errors.map((e: { field: string; code: string }) => `${e.field}:${e.code}`),
      ).toEqual(['valueDate:invalid-date', 'currency:required', 'color:unknown-field']);
      expect(body.errors[2].errors[0]).toMatchObject({
        field: 'amount',
        code: 'decimal-precision',
        message: expect.stringContaining('string'),
      });
      expect((await records(ingestionId)).totalSize).toBe(0);
      expect(await session(ingestionId)).toMatchObject({
        chunks: 0,
        totalRows: 0,
        successRows: 0,
        failedRows: 0,
      });
      const stored = (
        await t.call(writer, { method: 'GET', url: `/api/v1/ingestions/${ingestionId}/errors` })
      ).json();
      expect(stored.totalSize).toBe(0);
      const errors = (
        await t.call(writer, {
          method: 'GET',
          url: `/api/v1/ingestions/${ingestionId}/errors?chunkSeq=1&limit=2`,
        })
      ).json();
      expect(errors).toMatchObject({ totalSize: 3, totalPages: 2, page: 0, limit: 2 });
      expect(errors.data[0]).toMatchObject({
        kind: 'validation',
        chunkSeq: 1,
        index: 0,
        record: JSON.parse(JSON.stringify(bad[0])),
      });
      const second = (
        await t.call(writer, {
          method: 'GET',
          url: `/api/v1/ingestions/${ingestionId}/errors?chunkSeq=1&limit=2&page=1`,
        })
      ).json();
      expect(second.data.map((e: { index: number }) => e.index)).toEqual([3]);
    });

    it('keeps the valid records with ?partial=true and lists the failed ones', async () => {
      const { ingestionId } = await open();
      const response = await send(
        ingestionId,
        { data: [loanRecord(1), loanRecord(2, { installmentNumber: 1.5 }), loanRecord(3)] },
        { query: '?partial=true' },
      );
      expect(response.statusCode).toBe(201);
      expect(response.json()).toMatchObject({
        acceptedRows: 2,
        failedRows: 1,
        errors: [{ index: 1, errors: [{ field: 'installmentNumber', code: 'invalid-integer' }] }],
      });
      expect((await records(ingestionId)).data.map((r: { index: number }) => r.index)).toEqual([0, 2]);
      expect(await session(ingestionId)).toMatchObject({ totalRows: 3, successRows: 2, failedRows: 1 });
    });

    it('answers 413 over 1 MiB and 400 for bodies that are not a chunk', async () => {
      const { ingestionId } = await open();
      const filler = 'x'.repeat(1024 * 1024);
      const big = await send(ingestionId, { data: [loanRecord(1, { productCode: filler })] });
      expect(big.statusCode).toBe(413);
      expect(big.json().type).toBe('urn:ledgerflow:problem:payload-too-large');
      expect(big.json().detail).toContain('at most 1,048,576 bytes');
      const notJson = await send(ingestionId, '{"data": [');
      expect(notJson.statusCode).toBe(400);
      expect(notJson.json().type).toBe('urn:ledgerflow:problem:malformed-json');
      const noData = await send(ingestionId, { chunkName: 'x' });
      expect(noData.statusCode).toBe(400);
      expect(noData.json().errors).toEqual([{ path: '/data', message: 'is required' }]);
      const unknown = await send(ingestionId, { data: [], extra: true });
      expect(unknown.json().errors).toEqual([{ path: '/extra', message: 'is not a known member' }]);
      const wrongType = await t.call(writer, {
        method: 'POST',
        url: `/api/v1/ingestions/${ingestionId}`,
        headers: { 'content-type': 'text/plain' },
        payload: 'hello',
      });
      expect(wrongType.statusCode).toBe(415);
      expect(wrongType.json().detail).toContain('send the body as application/json');
      expect(await session(ingestionId)).toMatchObject({ chunks: 0, totalRows: 0 });
    });

    it('lists the first 100 of thousands of failed records, and caps the records of a chunk', async () => {
      const { ingestionId } = await open();
      const empties = Array.from({ length: 6_000 }, () => ({}));
      const rejected = await send(ingestionId, { data: empties }, { query: '?partial=true' });
      expect(rejected.statusCode).toBe(201);
      expect(rejected.json()).toMatchObject({ acceptedRows: 0, failedRows: 6_000, errorsOmitted: 5_900 });
      expect(rejected.json().errors).toHaveLength(100);
      const tooMany = await send(ingestionId, { data: Array.from({ length: 20_001 }, () => ({})) });
      expect(tooMany.statusCode).toBe(400);
      expect(tooMany.json().errors).toEqual([
        { path: '/data', message: expect.stringContaining('at most 20,000 records per chunk') },
      ]);
      expect(tooMany.json().detail).toContain('at most 20,000 records per chunk');
    });

    it('counts API calls of a session: its creation, every chunk request, stored or refused, and its close', async () => {
      const before = (
        await t.call(writer, {
          method: 'GET',
          url: '/api/v1/statistics/operational-dashboard/ingestion-metrics',
        })
      ).json();
      const { ingestionId } = await open();
      await send(ingestionId, { data: [loanRecord(1)] });
      await send(ingestionId, { data: [loanRecord(2, { amount: 'x' })] });
      // A body refused before anything is written counts as a call too.
      expect((await send(ingestionId, { data: 'x' })).statusCode).toBe(400);
      await close(ingestionId);
      const after = (
        await t.call(writer, {
          method: 'GET',
          url: '/api/v1/statistics/operational-dashboard/ingestion-metrics',
        })
      ).json();
      expect(after.apiCalls - before.apiCalls).toBe(5);
      // The rejected chunks count as API calls only.
      expect(after.chunks - before.chunks).toBe(1);
      expect(after.ingestions - before.ingestions).toBe(1);
      expect(after.totalRows - before.totalRows).toBe(1);
      const future = (
        await t.call(writer, {
          method: 'GET',
          url: '/api/v1/statistics/operational-dashboard/ingestion-metrics?from=2999-01-01',
        })
      ).json();
      expect(future.ingestions).toBe(0);
      const bad = await t.call(writer, {
        method: 'GET',
        url: '/api/v1/statistics/operational-dashboard/ingestion-metrics?from=yesterday',
      });
      expect(bad.statusCode).toBe(400);
    });

    it('replays a repeated Idempotency-Key with the same body and refuses it with another body', async () => {
      const { ingestionId } = await open();
      const body = { chunkName: 'retry', data: loanRecords(2) };
      const first = await send(ingestionId, body, { headers: { 'idempotency-key': 'chunk-1' } });
      expect(first.statusCode).toBe(201);
      const replay = await send(ingestionId, body, { headers: { 'idempotency-key': 'chunk-1' } });
      expect(replay.statusCode).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.json()).toEqual(first.json());
      expect(await session(ingestionId)).toMatchObject({ chunks: 1, totalRows: 2 });
      expect((await records(ingestionId)).totalSize).toBe(2);
      const reused = await send(
        ingestionId,
        { ...body, chunkName: 'other' },
        { headers: { 'idempotency-key': 'chunk-1' } },
      );
      expect(reused.statusCode).toBe(422);
      expect(reused.json().type).toBe('urn:ledgerflow:problem:idempotency-key-reused');
      // A rejected chunk is replayed as it was answered, too, even after the session closed.
      const rejected = { data: [loanRecord(1, { amount: 'ten' })] };
      const no = await send(ingestionId, rejected, { headers: { 'idempotency-key': 'chunk-2' } });
      expect(no.statusCode).toBe(400);
      await close(ingestionId);
      const noAgain = await send(ingestionId, rejected, { headers: { 'idempotency-key': 'chunk-2' } });
      expect(noAgain.statusCode).toBe(400);
      expect(noAgain.json()).toEqual(no.json());
    });

    it('answers one key sent in parallel with one outcome: the first answer, replayed to the others', async () => {
      const { ingestionId } = await open();
      const parallel = (body: unknown, key: string) =>
        Promise.all(
          Array.from({ length: 8 }, () => send(ingestionId, body, { headers: { 'idempotency-key': key } })),
        );
      const kept = await parallel({ chunkName: 'same', data: loanRecords(5) }, 'same-201');
      expect(kept.map((a) => a.statusCode)).toEqual(Array(8).fill(201));
      expect(kept.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(7);
      expect(new Set(kept.map((a) => a.body)).size).toBe(1);
      const refused = await parallel({ data: [loanRecord(1, { amount: 'ten' })] }, 'same-400');
      expect(refused.map((a) => a.statusCode)).toEqual(Array(8).fill(400));
      expect(refused.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(7);
      // Every replay repeats the first answer, its reference and timestamp included.
      expect(new Set(refused.map((a) => a.body)).size).toBe(1);
      // The rejected chunk counts in no row counter, once or eight times.
      expect(await session(ingestionId)).toMatchObject({ chunks: 1, totalRows: 5, successRows: 5 });
    });

    it('counts 24 chunks sent in parallel exactly, with distinct chunkSeq and every record stored', async () => {
      const { ingestionId } = await open();
      const answers = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          send(
            ingestionId,
            { chunkName: `p${i}`, data: loanRecords(50, i * 50) },
            { headers: { 'idempotency-key': `p${i}` } },
          ),
        ),
      );
      expect(answers.map((a) => a.statusCode)).toEqual(Array(24).fill(201));
      const seqs = answers.map((a) => a.json().chunkSeq as number).sort((a, b) => a - b);
      expect(new Set(seqs).size).toBe(24);
      expect(await session(ingestionId)).toMatchObject({
        chunks: 24,
        totalRows: 1200,
        successRows: 1200,
        failedRows: 0,
      });
      const stored = await records(ingestionId);
      expect(stored.totalSize).toBe(1200);
      const ids = new Set(
        stored.data.map((r: { record: { transactionId: string } }) => r.record.transactionId),
      );
      expect(ids.size).toBe(1000); // one page of 1000
    });

    it('keeps a chunk whose request started before the session was closed', async () => {
      const { ingestionId } = await open();
      t.clock.advance(1_000);
      // Hold the chunk between its open-session check (which only reads: the write counts the
      // call and moves lastActivityOn) and its write: submitChunk looks up the session's entity
      // in between. Left to timing, the close
      // could land before the check or after the write, and the test would pass all the same.
      let arrived = () => {};
      const held = new Promise<void>((resolve) => {
        arrived = resolve;
      });
      let release = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const lookUp = t.services.catalog.entity.bind(t.services.catalog);
      const spy = vi.spyOn(t.services.catalog, 'entity').mockImplementationOnce(async (ns, entity) => {
        arrived();
        await gate;
        return lookUp(ns, entity);
      });
      try {
        const chunk = send(ingestionId, { data: loanRecords(3) });
        await held;
        const before = await session(ingestionId);
        expect(before.lastActivityOn).toBe(before.openedOn);
        expect(before).toMatchObject({ state: 'pending', chunks: 0 });
        // The close commits while the chunk, past its check, has written nothing yet.
        const closeAnswer = await close(ingestionId);
        expect(closeAnswer.statusCode).toBe(200);
        expect(closeAnswer.json()).toMatchObject({ state: 'closed', chunks: 0, successRows: 0 });
        release();
        const chunkAnswer = await chunk;
        expect(chunkAnswer.statusCode, chunkAnswer.body).toBe(201);
      } finally {
        release();
        spy.mockRestore();
      }
      expect(await session(ingestionId)).toMatchObject({ state: 'closed', chunks: 1, successRows: 3 });
      expect((await records(ingestionId)).totalSize).toBe(3);
    });

    it('accepts the example chunk of every entity kind as it is', async () => {
      for (const [ns, entity] of [
        ['loans', 'loanTransaction'],
        ['ledger', 'businessEvent'],
        ['ledger', 'journal'],
      ]) {
        const example = await t.call(writer, {
          method: 'GET',
          url: `/api/v1/namespaces/${ns}/entities/${entity}/example`,
        });
        expect(example.statusCode).toBe(200);
        const created = await t.call(writer, {
          method: 'POST',
          url: '/api/v1/ingestions',
          payload: { namespace: ns, entity },
        });
        const chunk = await send(created.json().ingestionId, example.body);
        expect(chunk.statusCode, `${ns}/${entity}: ${chunk.body}`).toBe(201);
      }
    });
  });
});
