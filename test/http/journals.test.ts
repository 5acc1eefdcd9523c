import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ingestClosedSession, realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';

type Line = Record<string, unknown> & { account: string; transactionAmount: string; drCr: string };
type Journal = {
  journalId: string;
  status: string;
  coreDate: string;
  accountingConfig: string;
  journalType: string;
  reverses: string | null;
  reversedBy: string | null;
  ingestionId: string;
  lines: Line[];
};

async function setUp(
  t: TestApp,
): Promise<{ token: string; ingest(entity: string, data: unknown[]): Promise<string> }> {
  const operator = await t.tokenFor(['bulk-operator']);
  expect(
    (
      await t.call(operator, {
        method: 'PUT',
        url: '/api/v1/configuration/bulk',
        payload: realisticConfiguration(),
      })
    ).statusCode,
  ).toBe(200);
  return {
    token: operator,
    ingest: (entity, data) => ingestClosedSession(t, operator, entity, data),
  };
}

/** Accepted records become journals in the background; their read side. */
describe('processing and the journals API (business date pinned to Friday 2026-11-20)', () => {
  let t: TestApp;
  let env: Awaited<ReturnType<typeof setUp>>;
  beforeAll(async () => {
    t = await createTestApp({ businessDate: '2026-11-20' });
    env = await setUp(t);
  });
  afterAll(async () => t?.close());

  const get = async (url: string) => {
    const response = await t.call(env.token, { method: 'GET', url });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };
  const journalsOf = async (ingestionId: string): Promise<Journal[]> =>
    (await get(`/api/v1/journals?ingestionId=${ingestionId}&limit=1000`)).data;

  it('posts an event in every basis assigned to its node, exactly, and completes the session', async () => {
    const ingestionId = await env.ingest('businessEvent', [
      businessEvent({ amount: '123456789012345.67' }),
      businessEvent({ amount: '12.345' }),
    ]);
    expect((await get(`/api/v1/ingestions/${ingestionId}`)).processingStatus).toBe('pending');
    expect(await t.services.processor.drain()).toBe(2);
    expect(await get(`/api/v1/ingestions/${ingestionId}`)).toMatchObject({ processingStatus: 'completed' });
    const journals = await journalsOf(ingestionId);
    expect(journals).toHaveLength(4);
    expect(journals.map((j) => j.accountingConfig).sort()).toEqual([
      'IFRS',
      'IFRS',
      'LOCAL_GAAP',
      'LOCAL_GAAP',
    ]);
    for (const journal of journals) {
      expect(journal).toMatchObject({
        status: 'posted',
        coreDate: '2026-11-20',
        journalType: 'PERM',
        reverses: null,
        reversedBy: null,
        ingestionId,
      });
      expect(journal.lines.map((l) => [l.account, l.drCr])).toEqual([
        ['1300', 'DR'],
        ['2100', 'CR'],
      ]);
      expect(journal.lines[0]).toMatchObject({
        journalId: journal.journalId,
        journalLineNo: 1,
        ingestionId,
        transactionCurrency: 'EUR',
      });
    }
    const big = journals.find((j) => j.lines[0]?.transactionAmount === '123456789012345.67');
    expect(big?.lines[1]?.transactionAmount).toBe('-123456789012345.67');
    const small = journals.find((j) => j.lines[0]?.transactionAmount === '12.345');
    expect(small?.lines[1]?.transactionAmount).toBe('-12.345');
    const one = await get(`/api/v1/journals/${big?.journalId}`);
    expect(one).toEqual(big);
    const balances = (await get('/api/v1/balances?accountingConfig=IFRS&account=1300')).data;
    expect(balances).toEqual([
      {
        accountingConfig: 'IFRS',
        node: { branch: 'AMS', legalEntity: 'LF_NL' },
        account: '1300',
        currency: 'EUR',
        balance: '123456789012358.015',
      },
    ]);
    // asOf bounds the core date; without it every posted journal counts.
    expect((await get('/api/v1/balances?accountingConfig=IFRS&account=1300&asOf=2026-11-19')).data).toEqual(
      [],
    );
    expect((await get('/api/v1/balances?currency=USD')).data).toEqual([]);
    const badDate = await t.call(env.token, { method: 'GET', url: '/api/v1/balances?asOf=2026-02-30' });
    expect(badDate.statusCode).toBe(400);
  });

  it('produces nothing in a basis that is not assigned to the node', async () => {
    const ingestionId = await env.ingest('businessEvent', [
      businessEvent({ legalEntity: 'LF_US', branch: 'NYC', amount: '50' }),
    ]);
    await t.services.processor.drain();
    const journals = await journalsOf(ingestionId);
    expect(journals.map((j) => j.accountingConfig)).toEqual(['IFRS']);
  });

  it('reverses a REVERSING journal the next day, linked both ways; the reversal waits for its date', async () => {
    const ingestionId = await env.ingest('businessEvent', [
      businessEvent({ eventType: 'INTEREST_ACCRUAL', amount: '7.25' }),
    ]);
    await t.services.processor.drain();
    const journals = (await journalsOf(ingestionId)).filter((j) => j.accountingConfig === 'IFRS');
    const original = journals.find((j) => j.reverses === null);
    const reversal = journals.find((j) => j.reverses !== null);
    expect(original).toMatchObject({
      coreDate: '2026-11-20',
      status: 'posted',
      reversedBy: reversal?.journalId,
    });
    expect(reversal).toMatchObject({
      coreDate: '2026-11-21',
      status: 'unposted',
      reverses: original?.journalId,
    });
    expect(reversal?.lines.map((l) => [l.account, l.drCr, l.transactionAmount])).toEqual([
      ['1350', 'CR', '-7.25'],
      ['8100', 'DR', '7.25'],
    ]);
  });

  it('records processing errors with their rule, and the session completes with errors', async () => {
    const ingestionId = await env.ingest('businessEvent', [
      businessEvent({ eventType: 'NOT_CONFIGURED' }),
      businessEvent({ legalEntity: 'LF_XX' }),
      businessEvent(),
    ]);
    await t.services.processor.drain();
    expect((await get(`/api/v1/ingestions/${ingestionId}`)).processingStatus).toBe('completed_with_errors');
    const errors = await get(`/api/v1/processing-errors?ingestionId=${ingestionId}`);
    expect(errors.totalSize).toBe(2);
    expect(errors.data.map((e: { code: string }) => e.code)).toEqual(['unknown-event-type', 'unknown-node']);
    expect(errors.data[0]).toMatchObject({
      ingestionId,
      namespace: 'ledger',
      entity: 'businessEvent',
      message: expect.stringContaining('NOT_CONFIGURED'),
    });
    const filtered = await get('/api/v1/processing-errors?code=unknown-node');
    expect(filtered.data.every((e: { code: string }) => e.code === 'unknown-node')).toBe(true);
    const sessionErrors = await get(`/api/v1/ingestions/${ingestionId}/errors`);
    expect(
      sessionErrors.data.map(
        (e: { kind: string; errors: { code: string }[] }) => `${e.kind}:${e.errors[0]?.code}`,
      ),
    ).toEqual(['processing:unknown-event-type', 'processing:unknown-node']);
    expect(sessionErrors.data.map((e: { chunkSeq: number; index: number }) => [e.chunkSeq, e.index])).toEqual(
      [
        [1, 0],
        [1, 1],
      ],
    );
    const metrics = await get('/api/v1/statistics/operational-dashboard/journal-metrics');
    expect(metrics.errors).toBeGreaterThanOrEqual(2);
  });

  it('turns directly ingested journal lines into journals with system ids, and refuses unbalanced ones', async () => {
    const line = (origin: string, account: string, amount: string) => ({
      coreDate: '2026-11-20',
      journalType: 'PERM',
      accountingConfig: 'IFRS',
      account,
      transactionAmount: amount,
      transactionCurrency: 'EUR',
      originJournalId: origin,
      legalEntity: 'LF_NL',
      branch: 'AMS',
    });
    const ingestionId = await env.ingest('journal', [
      line('J-1', '1300', '250.00'),
      line('J-1', '2100', '-250.00'),
      line('J-2', '1300', '10.00'),
      line('J-2', '2100', '-9.99'),
    ]);
    await t.services.processor.drain();
    const journals = await journalsOf(ingestionId);
    expect(journals).toHaveLength(1);
    expect(
      journals[0]?.lines.map((l) => [l.account, l.drCr, l.transactionAmount, l.originJournalId]),
    ).toEqual([
      ['1300', 'DR', '250.00', 'J-1'],
      ['2100', 'CR', '-250.00', 'J-1'],
    ]);
    expect(journals[0]?.lines[0]?.lineId).toMatch(/^[0-9a-f-]{36}$/);
    const errors = await get(`/api/v1/processing-errors?ingestionId=${ingestionId}`);
    expect(errors.data.map((e: { code: string }) => e.code)).toEqual(['unbalanced', 'unbalanced']);
  });

  it('filters journals by status, basis and core date, paginated, and 404s an unknown journal', async () => {
    const unposted = await get('/api/v1/journals?status=unposted');
    expect(unposted.data.every((j: Journal) => j.status === 'unposted')).toBe(true);
    const page = await get(
      '/api/v1/journals?accountingConfig=LOCAL_GAAP&limit=1&from=2026-11-20&to=2026-11-21',
    );
    expect(page).toMatchObject({ limit: 1, page: 0 });
    expect(page.totalPages).toBe(page.totalSize);
    expect(page.data[0].accountingConfig).toBe('LOCAL_GAAP');
    expect(
      (
        await t.call(env.token, {
          method: 'GET',
          url: '/api/v1/journals/00000000-0000-0000-0000-000000000000',
        })
      ).statusCode,
    ).toBe(404);
    expect(
      (await t.call(env.token, { method: 'GET', url: '/api/v1/journals?from=2026-13-01' })).statusCode,
    ).toBe(400);
    const byDay = await get(
      '/api/v1/statistics/operational-dashboard/journal-metrics-by-day?from=2026-11-20&to=2026-11-22',
    );
    expect(byDay.data.map((d: { date: string }) => d.date)).toEqual(['2026-11-20', '2026-11-21']);
    const processing = await get('/api/v1/statistics/processing');
    expect(processing.data).toContainEqual(
      expect.objectContaining({ namespace: 'ledger', entity: 'businessEvent', pending: 0, failed: 2 }),
    );
  });
});

describe('posting when the business date comes (clock not pinned)', () => {
  let t: TestApp;
  let env: Awaited<ReturnType<typeof setUp>>;
  beforeAll(async () => {
    t = await createTestApp({ postingIntervalMs: 20, accessTokenTtlSeconds: 86_400 });
    t.clock.set('2026-11-20T12:00:00Z');
    env = await setUp(t);
  });
  afterAll(async () => t?.close());

  it('keeps a future journal unposted and posts it, with no request, once its date comes', async () => {
    t.services.processor.start();
    const ingestionId = await env.ingest('businessEvent', [
      businessEvent({ effectiveDate: '2026-11-23', amount: '99.99' }),
    ]);
    const list = async () =>
      (await t.call(env.token, { method: 'GET', url: `/api/v1/journals?ingestionId=${ingestionId}` })).json()
        .data as Journal[];
    await expect
      .poll(async () => (await list()).map((j) => j.status), { timeout: 10_000 })
      .toEqual(['unposted', 'unposted']);
    // 23:00 on Friday in Amsterdam, the node's time zone: still Friday's business date.
    t.clock.set('2026-11-20T22:00:00Z');
    expect(await t.services.processor.postDue()).toBe(0);
    // 00:30 on Saturday there: weekends are not working days, so the business date is Monday.
    t.clock.set('2026-11-20T23:30:00Z');
    await expect
      .poll(async () => (await list()).map((j) => j.status), { timeout: 10_000 })
      .toEqual(['posted', 'posted']);
  });
});

/** SQLite processes a chunk in parts of at most 500 records, so ingestion never waits long for the lock. */
describe('processing of a chunk larger than one write', () => {
  const big = {} as {
    t: TestApp;
    env: Awaited<ReturnType<typeof setUp>>;
    get(url: string): Promise<Record<string, unknown>>;
  };
  beforeAll(async () => {
    big.t = await createTestApp({ businessDate: '2026-11-20' });
    big.env = await setUp(big.t);
    big.get = async (url) => {
      const response = await big.t.call(big.env.token, { method: 'GET', url });
      expect(response.statusCode, response.body).toBe(200);
      return response.json();
    };
  });
  afterAll(async () => big.t?.close());

  it('processes a chunk of 1,200 events whole, in parts of at most 500 on SQLite, each event once', async () => {
    const EVENTS = 1_200;
    const ingestionId = await big.env.ingest(
      'businessEvent',
      Array.from({ length: EVENTS }, (_, i) => businessEvent({ amount: `${i + 1}.00` })),
    );
    expect(await big.t.services.processor.drain()).toBe(EVENTS);
    expect(await big.get(`/api/v1/ingestions/${ingestionId}`)).toMatchObject({
      processingStatus: 'completed',
    });
    const page = await big.get(`/api/v1/journals?ingestionId=${ingestionId}&limit=1`);
    expect(page.totalSize).toBe(2 * EVENTS);
  });
});
