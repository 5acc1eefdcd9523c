import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { trialBalanceHash } from '../../src/modules/periods/trial-balance.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ingestClosedSession, realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';

/**
 * Periods closed, locked and reopened by hand (issue 27): listing, the refusal of an early close
 * while work is pending, the snapshot of a close against the balances, a lock that refuses a
 * posting, a reversal and an override into it, a reopening that lets postings and reprocessing of
 * `closed-period` errors through, and the snapshots kept across closes.
 */

/** Friday 2026-11-20, 10:00 UTC: the Amsterdam node's business date is 2026-11-20; October is closed. */
const NOW = '2026-11-20T10:00:00Z';
const AMS = { legalEntity: 'LF_NL', branch: 'AMS' };
const NOVEMBER = { accountingConfig: 'LOCAL_GAAP', node: AMS, firstDay: '2026-11-01' };

type Period = {
  firstDay: string;
  state: string;
  basis: string;
  current: boolean;
  actedBy: string | null;
  reason: string | null;
  snapshots: number;
  node: Record<string, string>;
};

let t: TestApp;
let operator: string;
let controller: string;

beforeEach(async () => {
  t = await createTestApp({}, { clock: new ManualClock(NOW) });
  operator = await t.tokenFor(['bulk-operator']);
  controller = await t.tokenFor(['admin']);
  const put = await t.call(operator, {
    method: 'PUT',
    url: '/api/v1/configuration/bulk',
    payload: realisticConfiguration(),
  });
  expect(put.statusCode, put.body).toBe(200);
});
afterEach(async () => {
  await t.close();
});

async function get(url: string) {
  const response = await t.call(operator, { method: 'GET', url });
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

function act(action: 'close' | 'lock' | 'reopen', body: Record<string, unknown>, token = controller) {
  return t.call(token, { method: 'POST', url: `/api/v1/periods/${action}`, payload: body });
}

async function periodsOf(accountingConfig: string, extra = ''): Promise<Period[]> {
  return (await get(`/api/v1/periods?accountingConfig=${accountingConfig}${extra}`)).periods;
}

async function ingest(entity: string, data: unknown[]): Promise<string> {
  const ingestionId = await ingestClosedSession(t, operator, entity, data);
  await t.services.processor.drain();
  return ingestionId;
}

async function errorsOf(ingestionId: string): Promise<{ code: string; message: string }[]> {
  return (await get(`/api/v1/processing-errors?ingestionId=${ingestionId}`)).data;
}

async function journalsOf(
  ingestionId: string,
): Promise<{ coreDate: string; accountingConfig: string; originalCoreDate: string | null }[]> {
  return (await get(`/api/v1/journals?ingestionId=${ingestionId}&limit=1000`)).data;
}

describe('the periods list', () => {
  it('lists the twelve periods up to the current one per node, with their state and why', async () => {
    const local = await periodsOf('LOCAL_GAAP');
    expect(local).toHaveLength(12);
    expect(local.every((p) => p.node.branch === 'AMS')).toBe(true);
    expect(local[0]?.firstDay).toBe('2025-12-01');
    expect(local.at(-1)).toMatchObject({
      firstDay: '2026-11-01',
      state: 'open',
      basis: 'calendar',
      current: true,
    });
    expect(local.at(-2)).toMatchObject({
      firstDay: '2026-10-01',
      state: 'closed',
      basis: 'calendar',
      current: false,
    });
    // IFRS is assigned to both nodes.
    expect(await periodsOf('IFRS')).toHaveLength(24);
    const one = await periodsOf(
      'IFRS',
      `&node=${encodeURIComponent(JSON.stringify(AMS))}&from=2026-10-15&to=2026-12-02`,
    );
    expect(one.map((p) => [p.firstDay, p.state])).toEqual([
      ['2026-10-01', 'closed'],
      ['2026-11-01', 'open'],
      ['2026-12-01', 'open'],
    ]);
  });

  it('shows the previous period in its grace time', async () => {
    t.clock.set('2026-11-02T10:00:00Z');
    const local = await periodsOf('LOCAL_GAAP');
    expect(local.at(-2)).toMatchObject({ firstDay: '2026-10-01', state: 'grace', basis: 'grace' });
  });

  it('answers 404 for an unknown accounting configuration or a node it is not assigned to, 400 for a bad node or range', async () => {
    expect(
      (await t.call(operator, { method: 'GET', url: '/api/v1/periods?accountingConfig=NOPE' })).statusCode,
    ).toBe(404);
    const us = encodeURIComponent(JSON.stringify({ legalEntity: 'LF_US', branch: 'NYC' }));
    expect(
      (
        await t.call(operator, {
          method: 'GET',
          url: `/api/v1/periods?accountingConfig=LOCAL_GAAP&node=${us}`,
        })
      ).statusCode,
    ).toBe(404);
    const bad = await t.call(operator, {
      method: 'GET',
      url: '/api/v1/periods?accountingConfig=IFRS&node=%5B1%5D',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors).toEqual([
      { path: '/querystring/node', message: 'must be a JSON object of strings' },
    ]);
    const long = await t.call(operator, {
      method: 'GET',
      url: '/api/v1/periods?accountingConfig=IFRS&from=2020-01-01&to=2026-01-01',
    });
    expect(long.statusCode).toBe(400);
    const backwards = await t.call(operator, {
      method: 'GET',
      url: '/api/v1/periods?accountingConfig=IFRS&from=2026-05-01&to=2026-01-01',
    });
    expect(backwards.json().errors).toEqual([{ path: '/to', message: 'must be on or after from' }]);
  });
});

describe('the years a period may be in', () => {
  it('refuses a period or a day before year 1 or after year 9999, naming the member, and changes nothing', async () => {
    const days: [string, string][] = [
      ['0000-12-01', '/firstDay'],
      ['10000-01-01', '/firstDay'],
    ];
    for (const [firstDay, path] of days) {
      for (const action of ['close', 'lock', 'reopen'] as const) {
        const refused = await act(action, { ...NOVEMBER, firstDay, reason: 'year zero' });
        expect(refused.statusCode, `${action} ${firstDay}: ${refused.body}`).toBe(400);
        expect(refused.json()).toMatchObject({
          type: 'urn:ledgerflow:problem:validation-failed',
          errors: [{ path: expect.stringMatching(new RegExp(`${path}$`)) }],
        });
      }
    }
    expect((await act('lock', { ...NOVEMBER, firstDay: '0000-12-01' })).json().errors).toEqual([
      { path: '/firstDay', message: 'must be a date from 0001-01-01 to 9999-12-31' },
    ]);
    // Not a period of an unknown node either: the request's own rule comes first.
    const unknownNode = await act('lock', {
      ...NOVEMBER,
      node: { legalEntity: 'LF_US', branch: 'NYC' },
      firstDay: '0000-12-01',
    });
    expect(unknownNode.statusCode).toBe(400);
    expect(await t.store.db.selectFrom('period_states').selectAll().execute()).toEqual([]);

    const list = (query: string) =>
      t.call(operator, { method: 'GET', url: `/api/v1/periods?accountingConfig=LOCAL_GAAP&${query}` });
    const ranges: [string, string][] = [
      ['from=0000-11-01&to=0001-01-31', '/from'],
      ['from=0000-01-01&to=0000-12-31', '/from'],
      ['from=9999-12-01&to=10000-01-31', '/querystring/to'],
    ];
    for (const [query, path] of ranges) {
      const refused = await list(query);
      expect(refused.statusCode, `${query}: ${refused.body}`).toBe(400);
      expect(refused.json().errors.map((e: { path: string }) => e.path)).toEqual([path]);
    }
    expect((await list('from=0000-11-01&to=0001-01-31')).json().errors).toEqual([
      { path: '/from', message: 'must be a date from 0001-01-01 to 9999-12-31' },
    ]);
    const node = encodeURIComponent(JSON.stringify(AMS));
    const snapshots = await t.call(operator, {
      method: 'GET',
      url: `/api/v1/periods/snapshots?accountingConfig=LOCAL_GAAP&node=${node}&firstDay=0000-12-01`,
    });
    expect(snapshots.statusCode, snapshots.body).toBe(400);
    expect(snapshots.json().errors).toEqual([
      { path: '/firstDay', message: 'must be a date from 0001-01-01 to 9999-12-31' },
    ]);

    // The first and the last month of the years allowed are listed.
    const first = await list('from=0001-01-01&to=0001-01-31');
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().periods.map((p: Period) => p.firstDay)).toEqual(['0001-01-01']);
    const last = await list('from=9999-12-31&to=9999-12-31');
    expect(last.statusCode, last.body).toBe(200);
    expect(last.json().periods.map((p: Period) => [p.firstDay, p.state])).toEqual([['9999-12-01', 'open']]);
  });
});

describe('closing a period early', () => {
  it('is refused with the counts while records wait for processing or journals dated in it are unposted', async () => {
    await ingestClosedSession(t, operator, 'businessEvent', [businessEvent({ effectiveDate: '2026-11-10' })]);
    const waiting = await act('close', NOVEMBER);
    expect(waiting.statusCode, waiting.body).toBe(409);
    expect(waiting.json()).toMatchObject({
      type: 'urn:ledgerflow:problem:period-work-pending',
      pending: { waitingRecords: 1, unpostedJournals: 0 },
    });
    await t.services.processor.drain();
    await ingest('businessEvent', [businessEvent({ effectiveDate: '2026-11-25' })]);
    const unposted = await act('close', NOVEMBER);
    expect(unposted.statusCode, unposted.body).toBe(409);
    expect(unposted.json().pending).toEqual({ waitingRecords: 0, unpostedJournals: 1 });
    expect((await periodsOf('LOCAL_GAAP')).at(-1)).toMatchObject({ state: 'open', snapshots: 0 });
  });

  it('closes otherwise, keeps a snapshot equal to the balances at close, and refuses postings dated in it', async () => {
    await ingest('businessEvent', [
      businessEvent({ effectiveDate: '2026-10-05', amount: '300.00' }),
      businessEvent({ effectiveDate: '2026-11-10', amount: '1000.00' }),
      businessEvent({ effectiveDate: '2026-11-12', amount: '12.345' }),
    ]);
    t.clock.set('2026-11-20T10:00:00Z');
    const closed = await act('close', NOVEMBER);
    expect(closed.statusCode, closed.body).toBe(200);
    const { period, snapshot } = closed.json();
    expect(period).toMatchObject({
      firstDay: '2026-11-01',
      state: 'closed',
      basis: 'closed-by-hand',
      snapshots: 1,
    });
    expect(period.actedBy).toMatch(/@example\.test$/);
    expect(snapshot).toMatchObject({ action: 'close', firstDay: '2026-11-01', lastDay: '2026-11-30' });

    const kept = await get(`/api/v1/periods/snapshots/${snapshot.snapshotId}`);
    const balances = (await get('/api/v1/balances?accountingConfig=LOCAL_GAAP&asOf=2026-11-30')).data as {
      node: Record<string, string>;
      account: string;
      currency: string;
      balance: string;
    }[];
    const ofNode = balances.filter((b) => b.node.branch === 'AMS');
    expect(ofNode.length).toBeGreaterThan(0);
    expect(kept.balances).toEqual(
      ofNode.map((b) => ({ account: b.account, currency: b.currency, balance: b.balance })),
    );
    expect(kept.hash).toBe(
      trialBalanceHash(
        {
          accountingConfig: 'LOCAL_GAAP',
          // The node's canonical JSON: member names sorted.
          node: '{"branch":"AMS","legalEntity":"LF_NL"}',
          firstDay: '2026-11-01',
          lastDay: '2026-11-30',
        },
        kept.balances,
      ),
    );

    const refused = await ingest('businessEvent', [businessEvent({ effectiveDate: '2026-11-18' })]);
    const [error] = await errorsOf(refused);
    expect(error?.code).toBe('closed-period');
    expect(error?.message).toContain('closed by hand');

    // Closing again is a conflict; the audit log holds the close.
    const again = await act('close', NOVEMBER);
    expect(again.statusCode).toBe(409);
    expect(again.json().type).toBe('urn:ledgerflow:problem:period-state-conflict');
  });

  it('refuses a period after the current one, a day that does not start a period, and callers without periods:manage', async () => {
    const future = await act('close', { ...NOVEMBER, firstDay: '2026-12-01' });
    expect(future.statusCode).toBe(409);
    expect(future.json().detail).toContain('after the current one');
    const mid = await act('close', { ...NOVEMBER, firstDay: '2026-11-15' });
    expect(mid.statusCode).toBe(400);
    expect(mid.json().errors).toEqual([
      { path: '/firstDay', message: 'must be the first day of a period (of a calendar month)' },
    ]);
    expect((await act('close', NOVEMBER, operator)).statusCode).toBe(403);
    const unknown = await act('close', { ...NOVEMBER, node: { legalEntity: 'LF_US', branch: 'NYC' } });
    expect(unknown.statusCode).toBe(404);
  });
});

describe('a locked period', () => {
  it('refuses a posting, a reversal and an override into it', async () => {
    const before = await ingest('businessEvent', [businessEvent({ effectiveDate: '2026-11-10' })]);
    for (const accountingConfig of ['LOCAL_GAAP', 'IFRS']) {
      const locked = await act('lock', { ...NOVEMBER, accountingConfig });
      expect(locked.statusCode, locked.body).toBe(200);
      expect(locked.json()).toMatchObject({
        period: { state: 'locked', basis: 'locked-by-hand' },
        snapshot: { action: 'lock' },
      });
    }

    // A posting dated in it fails closed-period.
    const posting = await ingest('businessEvent', [businessEvent({ effectiveDate: '2026-11-18' })]);
    expect((await errorsOf(posting)).map((e) => e.code)).toEqual(['closed-period']);
    expect((await errorsOf(posting))[0]?.message).toContain('locked by hand');

    // A reversal is not dated in it: a posting date in it is refused, and without one the
    // reversal goes to the first open period after it.
    const dated = await t.call(operator, {
      method: 'POST',
      url: '/api/v1/reversals',
      payload: { selection: { ingestionId: before }, reason: 'wrong', postingDate: '2026-11-20' },
    });
    expect(dated.statusCode, dated.body).toBe(422);
    expect(dated.json().type).toBe('urn:ledgerflow:problem:posting-date-closed');
    const reversed = await t.call(operator, {
      method: 'POST',
      url: '/api/v1/reversals',
      payload: { selection: { ingestionId: before }, reason: 'wrong' },
    });
    expect(reversed.statusCode, reversed.body).toBe(201);
    const reversals = (await get(`/api/v1/journals?reversalId=${reversed.json().reversalId}`)).data as {
      coreDate: string;
    }[];
    expect(reversals.map((j) => j.coreDate)).toEqual(['2026-12-01', '2026-12-01']);

    // IFRS overrides the posting date at this node: a direct journal of closed October moves past
    // locked November to December, never into November.
    const line = (account: string, amount: string) => ({
      coreDate: '2026-10-15',
      journalType: 'PERM',
      accountingConfig: 'IFRS',
      account,
      transactionAmount: amount,
      transactionCurrency: 'EUR',
      originJournalId: 'LATE-1',
      legalEntity: 'LF_NL',
      branch: 'AMS',
    });
    const late = await ingest('journal', [line('1300', '80.00'), line('2100', '-80.00')]);
    expect(await errorsOf(late)).toEqual([]);
    expect((await journalsOf(late)).map((j) => [j.coreDate, j.originalCoreDate])).toEqual([
      ['2026-12-01', '2026-10-15'],
    ]);

    // Closing a locked period is a conflict.
    expect((await act('close', NOVEMBER)).json().type).toBe('urn:ledgerflow:problem:period-state-conflict');
  });
});

describe('reopening a period', () => {
  it('needs a reason, and lets postings and the reprocessing of closed-period errors through', async () => {
    // The pain of issue 27: data of March fails closed-period in November.
    const march = await ingest('businessEvent', [businessEvent({ effectiveDate: '2026-03-15' })]);
    expect((await errorsOf(march)).map((e) => e.code)).toEqual(['closed-period']);

    const blank = await act('reopen', { ...NOVEMBER, firstDay: '2026-03-01', reason: '  ' });
    expect(blank.statusCode).toBe(400);
    expect(blank.json().errors).toEqual([{ path: '/reason', message: 'must not be blank' }]);
    const missing = await act('reopen', { ...NOVEMBER, firstDay: '2026-03-01' });
    expect(missing.statusCode).toBe(400);
    const open = await act('reopen', { ...NOVEMBER, reason: 'open already' });
    expect(open.statusCode).toBe(409);
    expect(open.json().type).toBe('urn:ledgerflow:problem:period-state-conflict');

    for (const accountingConfig of ['LOCAL_GAAP', 'IFRS']) {
      const reopened = await act('reopen', {
        accountingConfig,
        node: AMS,
        firstDay: '2026-03-01',
        reason: 'late adjustment for March',
      });
      expect(reopened.statusCode, reopened.body).toBe(200);
      expect(reopened.json()).toMatchObject({
        period: { state: 'open', basis: 'reopened', reason: 'late adjustment for March' },
        snapshot: null,
      });
    }
    const run = await t.call(operator, {
      method: 'POST',
      url: '/api/v1/processing-errors/reprocess',
      payload: { code: 'closed-period' },
    });
    expect(run.statusCode, run.body).toBe(202);
    await t.services.processor.drain();
    expect(await get(`/api/v1/processing-errors?ingestionId=${march}`)).toMatchObject({ data: [] });
    expect((await journalsOf(march)).map((j) => j.coreDate)).toEqual(['2026-03-15', '2026-03-15']);

    // New postings into the reopened period post too; April, still closed, does not.
    const more = await ingest('businessEvent', [businessEvent({ effectiveDate: '2026-03-31' })]);
    expect(await errorsOf(more)).toEqual([]);
    const april = await ingest('businessEvent', [businessEvent({ effectiveDate: '2026-04-02' })]);
    expect((await errorsOf(april)).map((e) => e.code)).toEqual(['closed-period']);
  });

  it('keeps every snapshot when a period is closed, reopened and closed again', async () => {
    await ingest('businessEvent', [businessEvent({ effectiveDate: '2026-11-10', amount: '5.00' })]);
    expect((await act('close', NOVEMBER)).statusCode).toBe(200);
    expect((await act('reopen', { ...NOVEMBER, reason: 'missed accrual' })).statusCode).toBe(200);
    await ingest('businessEvent', [businessEvent({ effectiveDate: '2026-11-11', amount: '7.00' })]);
    expect((await act('close', NOVEMBER)).statusCode).toBe(200);
    const node = encodeURIComponent(JSON.stringify(AMS));
    const snapshots = (
      await get(`/api/v1/periods/snapshots?accountingConfig=LOCAL_GAAP&node=${node}&firstDay=2026-11-01`)
    ).data as {
      hash: string;
      takenAt: string;
    }[];
    expect(snapshots).toHaveLength(2);
    expect(snapshots[0]?.hash).not.toBe(snapshots[1]?.hash);
    expect((await periodsOf('LOCAL_GAAP')).at(-1)).toMatchObject({ state: 'closed', snapshots: 2 });
    const audit = await t.store.db
      .selectFrom('audit_log')
      .select(['action', 'details'])
      .where('action', 'like', 'periods.%')
      .orderBy('id')
      .execute();
    expect(audit.map((a) => a.action)).toEqual(['periods.close', 'periods.reopen', 'periods.close']);
    expect(JSON.parse(audit[1]?.details ?? '{}')).toMatchObject({
      before: 'closed',
      after: 'reopened',
      reason: 'missed accrual',
    });
  });
});
