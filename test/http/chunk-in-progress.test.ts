import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { TEST_NOW } from '../helpers/clock.js';
import { openLoanSession, uploadRealisticConfiguration } from '../helpers/fixtures.js';
import { loanRecords } from '../helpers/records.js';

/** A manual clock that tells when the app reads it next: the first read of a request is its arrival. */
class WatchedClock extends ManualClock {
  #waiters: (() => void)[] = [];

  override now(): Date {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
    return super.now();
  }

  /** Resolves at the next read of the clock. */
  nextRead(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
}

/** Bytes of the chunk sent before the session is closed; the rest follows after. */
const FIRST_PART_BYTES = 1000;

describe('finding: a chunk whose upload began before a manual close is stored', () => {
  const clock = new WatchedClock(TEST_NOW);
  let t: TestApp;
  let token: string;
  let port: number;

  beforeAll(async () => {
    t = await createTestApp({}, { clock });
    token = await t.tokenFor(['api-client']);
    await uploadRealisticConfiguration(t);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => t?.close());

  /**
   * Sends a chunk over a real TCP connection in two parts: the headers and the first
   * `FIRST_PART_BYTES` bytes, then, once the server has stamped the request's arrival and
   * `meanwhile` has run, the rest.
   */
  async function chunkInTwoParts(
    ingestionId: string,
    records: Record<string, unknown>[],
    meanwhile: () => Promise<void>,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const body = Buffer.from(JSON.stringify({ data: records }));
    expect(body.length).toBeGreaterThan(FIRST_PART_BYTES);
    const request = httpRequest({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: `/api/v1/ingestions/${ingestionId}`,
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'content-length': body.length,
      },
    });
    const answer = new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
      request.on('error', reject);
      request.on('response', (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(parts).toString('utf8')) as Record<string, unknown>,
          }),
        );
      });
    });
    const arrived = clock.nextRead();
    request.write(body.subarray(0, FIRST_PART_BYTES));
    await arrived;
    await meanwhile();
    request.end(body.subarray(FIRST_PART_BYTES));
    return answer;
  }

  const session = async (ingestionId: string) =>
    (await t.call(token, { method: 'GET', url: `/api/v1/ingestions/${ingestionId}` })).json();
  const close = (ingestionId: string) =>
    t.call(token, {
      method: 'PATCH',
      url: `/api/v1/ingestions/${ingestionId}`,
      headers: { 'content-type': 'application/merge-patch+json' },
      payload: { state: 'closed' },
    });
  const chunkNow = (ingestionId: string) =>
    t.call(token, {
      method: 'POST',
      url: `/api/v1/ingestions/${ingestionId}`,
      payload: { data: loanRecords(2) },
    });

  it('stores a chunk whose first 1,000 bytes came before the close and the rest after', async () => {
    const ingestionId = await openLoanSession(t, token);
    let closedOn = '';
    const answer = await chunkInTwoParts(ingestionId, loanRecords(40), async () => {
      clock.advance(1000);
      const closed = await close(ingestionId);
      expect(closed.statusCode, closed.body).toBe(200);
      expect(closed.json()).toMatchObject({ state: 'closed', chunks: 0, successRows: 0 });
      closedOn = closed.json().closedOn;
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body).toMatchObject({ ingestionId, chunkSeq: 1, acceptedRows: 40, failedRows: 0 });
    // The session stays closed as it was; the chunk is counted in it.
    expect(await session(ingestionId)).toMatchObject({
      state: 'closed',
      closedOn,
      chunks: 1,
      totalRows: 40,
      successRows: 40,
    });
    const records = await t.call(token, {
      method: 'GET',
      url: `/api/v1/namespaces/loans/entities/loanTransaction/records?ingestionId=${ingestionId}&limit=1`,
    });
    expect(records.json().totalSize).toBe(40);
  });

  it('refuses a chunk that arrived at or after the close with 409 session-closed', async () => {
    const ingestionId = await openLoanSession(t, token);
    expect((await close(ingestionId)).statusCode).toBe(200);
    const atTheClose = await chunkNow(ingestionId);
    expect(atTheClose.statusCode).toBe(409);
    expect(atTheClose.json().type).toBe('urn:ledgerflow:problem:session-closed');
    clock.advance(1);
    expect((await chunkNow(ingestionId)).statusCode).toBe(409);
    expect(await session(ingestionId)).toMatchObject({ state: 'closed', chunks: 0 });
  });

  it('stores a chunk that arrived before the session expired, and the session stays expired', async () => {
    const opened = await t.call(token, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace: 'loans', entity: 'loanTransaction', timeout: 'PT10S' },
    });
    const { ingestionId } = opened.json() as { ingestionId: string };
    const deadline = new Date(clock.now().getTime() + 10_000).toISOString();
    const answer = await chunkInTwoParts(ingestionId, loanRecords(30), async () => {
      clock.advance(11_000);
      expect((await session(ingestionId)).state).toBe('expired');
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body).toMatchObject({ acceptedRows: 30 });
    expect(await session(ingestionId)).toMatchObject({
      state: 'expired',
      closeReason: 'timeout',
      closedOn: deadline,
      chunks: 1,
      successRows: 30,
    });
    const late = await chunkNow(ingestionId);
    expect(late.statusCode).toBe(409);
    expect(late.json().type).toBe('urn:ledgerflow:problem:session-expired');
  });
});
