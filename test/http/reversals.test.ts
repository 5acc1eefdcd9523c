import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ingestClosedSession, realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { expectCountersEqualCounts } from '../helpers/reprocessing.js';
import { expectBalancesKept } from '../storage/balances-oracle.js';

type Line = Record<string, unknown> & { account: string; transactionAmount: string; drCr: string };
type Journal = {
  journalId: string;
  status: string;
  coreDate: string;
  originalCoreDate: string | null;
  accountingConfig: string;
  journalType: string;
  reverses: string | null;
  reversedBy: string | null;
  withdrawnBy: string | null;
  reversalId: string | null;
  ingestionId: string;
  lines: Line[];
};

/** Friday 2026-11-20, 10:00 UTC: the business date of the Amsterdam node is 2026-11-20. */
const NOW = '2026-11-20T10:00:00Z';

let t: TestApp;
let operator: string;

beforeEach(async () => {
  t = await createTestApp({}, { clock: new ManualClock(NOW) });
  operator = await t.tokenFor(['bulk-operator']);
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

async function ingest(entity: string, data: unknown[]): Promise<string> {
  const ingestionId = await ingestClosedSession(t, operator, entity, data);
  await t.services.processor.drain();
  return ingestionId;
}

async function get(url: string) {
  const response = await t.call(operator, { method: 'GET', url });
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

async function journalsOf(query: string): Promise<Journal[]> {
  return (await get(`/api/v1/journals?${query}&limit=1000`)).data;
}

function reverse(body: unknown, options: { dryRun?: boolean; key?: string; token?: string } = {}) {
  return t.call(options.token ?? operator, {
    method: 'POST',
    url: `/api/v1/reversals${options.dryRun ? '?dryRun=true' : ''}`,
    payload: body as Record<string, unknown>,
    headers: options.key === undefined ? {} : { 'idempotency-key': options.key },
  });
}

/** Every journal balances per currency, and a reversal and its original cancel out line by line. */
function expectReversalOf(reversal: Journal, original: Journal): void {
  expect(reversal.reverses).toBe(original.journalId);
  expect(reversal.ingestionId).toBe(original.ingestionId);
  expect(reversal.accountingConfig).toBe(original.accountingConfig);
  expect(reversal.journalType).toBe(original.journalType);
  expect(reversal.originalCoreDate).toBe(original.coreDate);
  expect(reversal.lines.map((l) => [l.account, l.transactionAmount.replace(/^-/, ''), l.drCr])).toEqual(
    original.lines.map((l) => [
      l.account,
      l.transactionAmount.replace(/^-/, ''),
      l.drCr === 'DR' ? 'CR' : 'DR',
    ]),
  );
}

async function checkBooks(): Promise<void> {
  await expectBalancesKept(t.store, ['2026-11-19', '2026-11-20', '2026-12-01']);
  await expectCountersEqualCounts(t.store, t.clock);
}

describe('POST /api/v1/reversals by journal ids', () => {
  it('reverses one journal into its open period, links both ways, and reports it already reversed the second time', async () => {
    const ingestionId = await ingest('businessEvent', [businessEvent({ effectiveDate: '2026-11-18' })]);
    const before = await journalsOf(`ingestionId=${ingestionId}`);
    const original = before.find((j) => j.accountingConfig === 'IFRS');
    if (original === undefined) throw new Error('no IFRS journal');

    const created = await reverse({
      selection: { journalIds: [original.journalId] },
      reason: 'wrong amount',
    });
    expect(created.statusCode, created.body).toBe(201);
    const answer = created.json();
    expect(answer).toMatchObject({
      reason: 'wrong amount',
      selection: { journalIds: [original.journalId] },
      postingDate: null,
      journals: 1,
      lines: original.lines.length,
      alreadyReversed: 0,
      notReversible: 0,
      reversalJournals: `/api/v1/journals?reversalId=${answer.reversalId}`,
    });
    expect(created.headers.location).toBe(`/api/v1/reversals/${answer.reversalId}`);
    expect(answer.reversalJournalIds).toHaveLength(1);
    expect(answer.totals.length).toBeGreaterThan(0);

    const [reversal] = await journalsOf(`reversalId=${answer.reversalId}`);
    if (reversal === undefined) throw new Error('no reversal journal');
    expect(reversal.journalId).toBe(answer.reversalJournalIds[0]);
    expectReversalOf(reversal, original);
    expect(reversal).toMatchObject({
      coreDate: '2026-11-18',
      status: 'posted',
      reversalId: answer.reversalId,
    });
    const withdrawn = await get(`/api/v1/journals/${original.journalId}`);
    expect(withdrawn).toMatchObject({ withdrawnBy: reversal.journalId, reversedBy: reversal.journalId });
    // The other basis' journal of the same event stands.
    const other = before.find((j) => j.accountingConfig !== 'IFRS');
    expect((await get(`/api/v1/journals/${other?.journalId}`)).withdrawnBy).toBeNull();
    await checkBooks();

    const again = await reverse({ selection: { journalIds: [original.journalId] }, reason: 'again' });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({
      reversalId: null,
      journals: 0,
      alreadyReversed: 1,
      alreadyReversedIds: [original.journalId],
      reversalJournalIds: [],
    });
    expect(again.headers.location).toBeUndefined();
    // A reversal journal is never reversed itself.
    const ofReversal = await reverse({ selection: { journalIds: [reversal.journalId] }, reason: 'undo' });
    expect(ofReversal.statusCode, ofReversal.body).toBe(200);
    expect(ofReversal.json()).toMatchObject({
      reversalId: null,
      journals: 0,
      notReversible: 1,
      notReversibleIds: [reversal.journalId],
    });
    await checkBooks();

    const stored = await get(`/api/v1/reversals/${answer.reversalId}`);
    expect(stored).toMatchObject({
      reversalId: answer.reversalId,
      journals: 1,
      createdBy: expect.any(String),
    });
    // The two requests that reversed nothing recorded nothing: one reversal, one audit entry.
    const list = await get('/api/v1/reversals?limit=2');
    expect(list.totalSize).toBe(1);
    expect(list.data.map((r: { reversalId: string }) => r.reversalId)).toEqual([answer.reversalId]);
    expect(list.next).toBeNull();

    const audit = await t.store.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'journals.reverse')
      .orderBy('id')
      .execute();
    expect(audit).toHaveLength(1);
    const auditLog = await get('/api/v1/audit-log?limit=1');
    expect(auditLog.data[0]).toMatchObject({
      action: 'journals.reverse',
      details: { reversalId: answer.reversalId, journals: 1 },
    });
    expect(JSON.parse(audit[0]?.details ?? '{}')).toMatchObject({
      reversalId: answer.reversalId,
      reason: 'wrong amount',
      selection: { journalIds: [original.journalId] },
      journals: 1,
    });
  });

  it('answers 404 naming an unknown id and reverses nothing', async () => {
    const ingestionId = await ingest('businessEvent', [businessEvent()]);
    const [journal] = await journalsOf(`ingestionId=${ingestionId}`);
    const response = await reverse({
      selection: { journalIds: [journal?.journalId, '00000000-0000-7000-8000-000000000000'] },
      reason: 'typo',
    });
    expect(response.statusCode, response.body).toBe(404);
    expect(response.json().errors).toEqual([{ path: '/selection/journalIds/1', message: 'no such journal' }]);
    expect((await journalsOf(`ingestionId=${ingestionId}`)).every((j) => j.withdrawnBy === null)).toBe(true);
  });
});

describe('POST /api/v1/reversals by session, origin journal and range', () => {
  it('withdraws every journal of a session, automatic reversals with their journals, and the balances return to zero', async () => {
    const ingestionId = await ingest('businessEvent', [
      businessEvent({ effectiveDate: '2026-11-18' }),
      businessEvent({ eventType: 'INTEREST_ACCRUAL', effectiveDate: '2026-11-18', amount: '12.34' }),
    ]);
    const journals = await journalsOf(`ingestionId=${ingestionId}`);
    const automatic = journals.filter((j) => j.reverses !== null);
    expect(automatic.length).toBeGreaterThan(0);

    const dry = await reverse({ selection: { ingestionId }, reason: 'wrong feed' }, { dryRun: true });
    expect(dry.statusCode, dry.body).toBe(200);
    expect(dry.json()).toMatchObject({
      dryRun: true,
      journals: journals.length,
      alreadyReversed: 0,
      notReversible: 0,
    });
    // A dry run writes nothing.
    expect((await journalsOf(`ingestionId=${ingestionId}`)).length).toBe(journals.length);
    expect(await get('/api/v1/reversals')).toMatchObject({ totalSize: 0 });

    const created = await reverse({ selection: { ingestionId }, reason: 'wrong feed' });
    expect(created.statusCode, created.body).toBe(201);
    const { dryRun: _dry, ...counts } = dry.json();
    expect(created.json()).toMatchObject(counts);
    const after = await journalsOf(`ingestionId=${ingestionId}`);
    expect(after).toHaveLength(journals.length * 2);
    const byId = new Map(after.map((j) => [j.journalId, j]));
    for (const journal of journals) {
      const now = byId.get(journal.journalId);
      const reversal = byId.get(now?.withdrawnBy ?? '');
      if (reversal === undefined) throw new Error(`journal ${journal.journalId} not withdrawn`);
      expectReversalOf(reversal, journal);
    }
    // Again: every selected journal, automatic reversals included, is reported already reversed.
    const again = await reverse({ selection: { ingestionId }, reason: 'wrong feed' });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ journals: 0, alreadyReversed: journals.length, notReversible: 0 });
    // Every posted balance of the session is back to zero.
    const balances = (await get('/api/v1/balances')).data as { balance: string }[];
    expect(balances.length).toBeGreaterThan(0);
    for (const b of balances) expect(Number(b.balance)).toBe(0);
    await checkBooks();
  });

  it('withdraws the journals of one origin journal id', async () => {
    const line = (origin: string, account: string, amount: string) => ({
      coreDate: '2026-11-19',
      journalType: 'PERM',
      accountingConfig: 'IFRS',
      account,
      transactionAmount: amount,
      transactionCurrency: 'EUR',
      originJournalId: origin,
      legalEntity: 'LF_NL',
      branch: 'AMS',
    });
    const ingestionId = await ingest('journal', [
      line('ORIGIN-1', '1300', '250.00'),
      line('ORIGIN-1', '2100', '-250.00'),
      line('ORIGIN-2', '1300', '70.00'),
      line('ORIGIN-2', '2100', '-70.00'),
    ]);
    const created = await reverse({ selection: { originJournalId: 'ORIGIN-1' }, reason: 'sent twice' });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({
      journals: 1,
      lines: 2,
      totals: [
        { accountingConfig: 'IFRS', account: '1300', currency: 'EUR', debit: '0', credit: '250.00' },
        { accountingConfig: 'IFRS', account: '2100', currency: 'EUR', debit: '250.00', credit: '0' },
      ],
    });
    const journals = await journalsOf(`ingestionId=${ingestionId}`);
    expect(journals.filter((j) => j.withdrawnBy !== null)).toHaveLength(1);
    await checkBooks();
  });

  it('withdraws the journals of one accounting configuration in a core-date range, both days included', async () => {
    await ingest('businessEvent', [
      businessEvent({ effectiveDate: '2026-11-16' }),
      businessEvent({ effectiveDate: '2026-11-17' }),
      businessEvent({ effectiveDate: '2026-11-18' }),
    ]);
    const created = await reverse({
      selection: { accountingConfig: 'LOCAL_GAAP', from: '2026-11-17', to: '2026-11-18' },
      reason: 'rule fixed',
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ journals: 2 });
    const withdrawn = (await journalsOf('from=2026-11-16')).filter((j) => j.withdrawnBy !== null);
    expect(withdrawn.map((j) => [j.accountingConfig, j.coreDate]).sort()).toEqual([
      ['LOCAL_GAAP', '2026-11-17'],
      ['LOCAL_GAAP', '2026-11-18'],
    ]);
    const nothing = await reverse({
      selection: { accountingConfig: 'LOCAL_GAAP', from: '2025-01-01', to: '2025-01-31' },
      reason: 'none',
    });
    expect(nothing.statusCode).toBe(422);
    expect(nothing.json().type).toBe('urn:ledgerflow:problem:nothing-to-reverse');
    await checkBooks();
  });
});

describe('the dates of reversal journals', () => {
  it('dates the reversal of a journal in a closed period on the first day of the earliest open period', async () => {
    t.clock.set('2026-10-20T10:00:00Z');
    operator = await t.tokenFor(['bulk-operator']);
    const ingestionId = await ingest('businessEvent', [businessEvent({ effectiveDate: '2026-10-15' })]);
    const journals = await journalsOf(`ingestionId=${ingestionId}`);
    expect(journals.map((j) => j.coreDate)).toEqual(['2026-10-15', '2026-10-15']);

    // A month later October is closed (past every node config's grace time).
    t.clock.set(NOW);
    operator = await t.tokenFor(['bulk-operator']);
    const closed = await reverse({ selection: { ingestionId }, reason: 'late', postingDate: '2026-10-31' });
    expect(closed.statusCode, closed.body).toBe(422);
    expect(closed.json()).toMatchObject({
      type: 'urn:ledgerflow:problem:posting-date-closed',
      errors: [{ path: '/postingDate' }],
    });
    const created = await reverse({ selection: { ingestionId }, reason: 'late' });
    expect(created.statusCode, created.body).toBe(201);
    const reversals = await journalsOf(`reversalId=${created.json().reversalId}`);
    expect(reversals.map((j) => [j.coreDate, j.originalCoreDate, j.status])).toEqual([
      ['2026-11-01', '2026-10-15', 'posted'],
      ['2026-11-01', '2026-10-15', 'posted'],
    ]);
    // As of the end of October the books still show the journals; from November they are gone.
    const october = (await get('/api/v1/balances?asOf=2026-10-31')).data as { balance: string }[];
    expect(october.some((b) => Number(b.balance) !== 0)).toBe(true);
    for (const b of (await get('/api/v1/balances')).data as { balance: string }[])
      expect(Number(b.balance)).toBe(0);
    await checkBooks();
  });

  it('leaves the reversal of a posting date after the business date unposted until the business date reaches it', async () => {
    const ingestionId = await ingest('businessEvent', [businessEvent({ effectiveDate: '2026-11-18' })]);
    const created = await reverse({
      selection: { ingestionId },
      reason: 'next week',
      postingDate: '2026-11-25',
    });
    expect(created.statusCode, created.body).toBe(201);
    const reversals = await journalsOf(`reversalId=${created.json().reversalId}`);
    expect(reversals.map((j) => [j.coreDate, j.status])).toEqual([
      ['2026-11-25', 'unposted'],
      ['2026-11-25', 'unposted'],
    ]);
    await checkBooks();
    const early = await reverse({ selection: { ingestionId }, reason: 'x', postingDate: '2026-11-17' });
    // Already reversed: a posting date before a journal's core date is refused only for the
    // journals that get a reversal (November is open, so the period does not refuse it).
    expect(early.statusCode, early.body).toBe(200);
    expect(early.json()).toMatchObject({ reversalId: null, journals: 0 });

    t.clock.set('2026-11-25T10:00:00Z');
    await t.services.processor.postDue();
    operator = await t.tokenFor(['bulk-operator']);
    const posted = await journalsOf(`reversalId=${created.json().reversalId}`);
    expect(posted.map((j) => j.status)).toEqual(['posted', 'posted']);
    await checkBooks();
  });

  it('gives an unposted journal an unposted reversal on its date, and both post the same day', async () => {
    const ingestionId = await ingest('businessEvent', [businessEvent({ effectiveDate: '2026-11-24' })]);
    const created = await reverse({ selection: { ingestionId }, reason: 'sent too early' });
    expect(created.statusCode, created.body).toBe(201);
    const reversals = await journalsOf(`reversalId=${created.json().reversalId}`);
    expect(reversals.map((j) => [j.coreDate, j.status])).toEqual([
      ['2026-11-24', 'unposted'],
      ['2026-11-24', 'unposted'],
    ]);
    // Unposted, neither moves a balance yet.
    expect((await get('/api/v1/balances')).data).toEqual([]);
    await checkBooks();

    t.clock.set('2026-11-24T10:00:00Z');
    await t.services.processor.postDue();
    operator = await t.tokenFor(['bulk-operator']);
    const all = await journalsOf(`ingestionId=${ingestionId}`);
    expect(all.map((j) => j.status)).toEqual(['posted', 'posted', 'posted', 'posted']);
    for (const b of (await get('/api/v1/balances')).data as { balance: string }[])
      expect(Number(b.balance)).toBe(0);
    await checkBooks();
  });

  it('refuses a posting date before the core date of a journal', async () => {
    const ingestionId = await ingest('businessEvent', [businessEvent({ effectiveDate: '2026-11-18' })]);
    const response = await reverse({ selection: { ingestionId }, reason: 'x', postingDate: '2026-11-17' });
    expect(response.statusCode, response.body).toBe(422);
    expect(response.json().errors[0]).toMatchObject({ path: '/postingDate' });
    expect((await journalsOf(`ingestionId=${ingestionId}`)).every((j) => j.withdrawnBy === null)).toBe(true);
  });
});

describe('at most once, idempotency and validation', () => {
  it('two identical requests at once without a key: one reverses, the other reports the journals already reversed', async () => {
    const ingestionId = await ingest(
      'businessEvent',
      Array.from({ length: 30 }, (_, i) => businessEvent({ amount: `${100 + i}.00` })),
    );
    const answers = await Promise.all([
      reverse({ selection: { ingestionId }, reason: 'twice' }),
      reverse({ selection: { ingestionId }, reason: 'twice' }),
    ]);
    const journals = answers.map((a) => a.json().journals as number).sort((a, b) => a - b);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 201]);
    expect(journals).toEqual([0, 60]);
    expect(answers.map((a) => a.json().alreadyReversed).sort((a, b) => a - b)).toEqual([0, 60]);
    expect(await journalsOf(`ingestionId=${ingestionId}`)).toHaveLength(120);
    await checkBooks();
  });

  it('answers the first answer again for the same key and request, and 422 for another request under it', async () => {
    const ingestionId = await ingest('businessEvent', [businessEvent(), businessEvent({ amount: '5.00' })]);
    const body = { selection: { ingestionId }, reason: 'retry-safe' };
    const answers = await Promise.all([reverse(body, { key: 'k-1' }), reverse(body, { key: 'k-1' })]);
    expect(answers.map((a) => a.statusCode)).toEqual([201, 201]);
    expect(answers[0]?.json().reversalId).toBe(answers[1]?.json().reversalId);
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(1);
    // Members in another order are the same request.
    const later = await reverse({ reason: 'retry-safe', selection: { ingestionId } }, { key: 'k-1' });
    expect(later.statusCode).toBe(201);
    expect(later.headers['idempotent-replayed']).toBe('true');
    expect(later.json()).toEqual(answers[0]?.json());
    const other = await reverse({ selection: { ingestionId }, reason: 'another' }, { key: 'k-1' });
    expect(other.statusCode).toBe(422);
    expect(other.json().type).toBe('urn:ledgerflow:problem:idempotency-key-reused');
    // Keys are per client: another client's same key is its own request.
    const otherClient = await t.tokenFor(['admin']);
    const own = await reverse(body, { key: 'k-1', token: otherClient });
    expect(own.statusCode).toBe(200);
    expect(own.json()).toMatchObject({ reversalId: null, journals: 0, alreadyReversed: 4 });
    // It reversed nothing, so it recorded nothing: one reversal in all.
    expect(await get('/api/v1/reversals')).toMatchObject({ totalSize: 1 });

    // An upload that wipes the processing data takes the reversal with it: its key answers so.
    const wiped = await t.call(operator, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk',
      payload: realisticConfiguration(),
    });
    expect(wiped.statusCode, wiped.body).toBe(200);
    const gone = await reverse(body, { key: 'k-1' });
    expect(gone.statusCode, gone.body).toBe(404);
    expect(gone.json().detail).toContain('deleted with the processing data');
  });

  it('names the member at fault', async () => {
    const cases: [unknown, string][] = [
      [{ selection: { ingestionId: 'x' } }, '/reason'],
      [{ selection: { ingestionId: 'x' }, reason: '' }, '/reason'],
      [{ selection: { ingestionId: 'x' }, reason: 'x'.repeat(501) }, '/reason'],
      [{ selection: { ingestionId: 'x' }, reason: '   ' }, '/reason'],
      [{ selection: {}, reason: 'r' }, '/selection'],
      [{ selection: { ingestionId: 'x', originJournalId: 'y' }, reason: 'r' }, '/selection'],
      [{ selection: { journalIds: [] }, reason: 'r' }, '/selection/journalIds'],
      [{ selection: { journalIds: Array(1001).fill('x') }, reason: 'r' }, '/selection/journalIds'],
      [{ selection: { accountingConfig: 'IFRS', from: '2026-11-02' }, reason: 'r' }, '/selection/to'],
      [
        { selection: { accountingConfig: 'IFRS', from: '2026-11-02', to: '2026-11-01' }, reason: 'r' },
        '/selection/to',
      ],
      [
        { selection: { accountingConfig: 'IFRS', from: '2026-02-30', to: '2026-03-01' }, reason: 'r' },
        '/selection/from',
      ],
      [{ selection: { ingestionId: 'x' }, reason: 'r', postingDate: 'tomorrow' }, '/postingDate'],
      [{ selection: { ingestionId: 'x', extra: 1 }, reason: 'r' }, '/selection/extra'],
    ];
    for (const [body, path] of cases) {
      const response = await reverse(body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(
        (response.json().errors as { path: string }[]).map((e) => e.path),
        JSON.stringify(body),
      ).toContain(path);
    }
    const unknown = await reverse({ selection: { ingestionId: 'no-such-session' }, reason: 'r' });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().type).toBe('urn:ledgerflow:problem:nothing-to-reverse');
    const missing = await t.call(operator, { method: 'GET', url: '/api/v1/reversals/no-such' });
    expect(missing.statusCode).toBe(404);
  });
});

/** What a reversal request records besides its journals: its row, its audit entry and its event. */
async function recorded(): Promise<{ reversals: number; audit: number; events: number }> {
  const count = async (rows: Promise<unknown[]>) => (await rows).length;
  return {
    reversals: await count(t.store.db.selectFrom('reversals').select('id').execute()),
    audit: await count(
      t.store.db.selectFrom('audit_log').select('id').where('action', '=', 'journals.reverse').execute(),
    ),
    events: await count(
      t.store.db.selectFrom('events').select('event_id').where('type', '=', 'reversal.completed').execute(),
    ),
  };
}

describe('a request that reverses nothing records nothing', () => {
  it('writes no reversal, audit entry or event when every selected journal is reversed already, with a key or without, and for a dry run', async () => {
    const ingestionId = await ingest('businessEvent', [businessEvent(), businessEvent({ amount: '7.00' })]);
    const body = { selection: { ingestionId }, reason: 'sent twice' };
    const first = await reverse(body, { key: 'first' });
    expect(first.statusCode, first.body).toBe(201);
    const reversed = first.json().journals as number;
    expect(await recorded()).toEqual({ reversals: 1, audit: 1, events: 1 });

    // The same key and body: the first answer again, nothing new.
    const replay = await reverse(body, { key: 'first' });
    expect(replay.statusCode, replay.body).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(first.json());

    // The same selection again, without a key and under a new key: the counts, and no reversal.
    for (const key of [undefined, 'second']) {
      const again = await reverse(body, key === undefined ? {} : { key });
      expect(again.statusCode, again.body).toBe(200);
      expect(again.headers.location).toBeUndefined();
      expect(again.json()).toEqual({
        reversalId: null,
        reason: 'sent twice',
        selection: { ingestionId },
        postingDate: null,
        journals: 0,
        lines: 0,
        alreadyReversed: reversed,
        notReversible: 0,
        alreadyReversedIds: expect.any(Array),
        notReversibleIds: [],
        totals: [],
        reversalJournalIds: [],
      });
    }
    // Its key held nothing: the same key says the same again, never a reversal made meanwhile.
    const sameKey = await reverse(body, { key: 'second' });
    expect(sameKey.json()).toMatchObject({ reversalId: null, alreadyReversed: reversed });

    const dry = await reverse(body, { dryRun: true });
    expect(dry.statusCode, dry.body).toBe(200);
    expect(dry.json()).toMatchObject({ dryRun: true, journals: 0, alreadyReversed: reversed });

    // A selection that matches no journal is refused, with a key or without, dry run or not.
    const none = { selection: { ingestionId: 'in_no_such_session' }, reason: 'nothing' };
    for (const options of [{}, { key: 'third' }, { dryRun: true }]) {
      const refused = await reverse(none, options);
      expect(refused.statusCode, refused.body).toBe(422);
      expect(refused.json().type).toBe('urn:ledgerflow:problem:nothing-to-reverse');
    }

    expect(await recorded()).toEqual({ reversals: 1, audit: 1, events: 1 });
    expect((await get('/api/v1/reversals')).data.map((r: { reversalId: string }) => r.reversalId)).toEqual([
      first.json().reversalId,
    ]);
    await checkBooks();
  });
});

describe('a posting date in a closed or locked period', () => {
  /** The Amsterdam node as the store keeps it (members sorted), as refusals name it. */
  const AMS = '{"branch":"AMS","legalEntity":"LF_NL"}';

  async function period(action: 'close' | 'lock' | 'reopen', admin: string): Promise<void> {
    for (const accountingConfig of ['IFRS', 'LOCAL_GAAP']) {
      const response = await t.call(admin, {
        method: 'POST',
        url: `/api/v1/periods/${action}`,
        payload: {
          accountingConfig,
          node: { legalEntity: 'LF_NL', branch: 'AMS' },
          firstDay: '2026-11-01',
          ...(action === 'reopen' ? { reason: 'late invoice' } : {}),
        },
      });
      expect(response.statusCode, response.body).toBe(200);
    }
  }

  /** The request and its dry run are refused alike, naming the period, its state and the node; nothing moves. */
  async function expectRefused(body: Record<string, unknown>, period: string, state: string) {
    const before = await recorded();
    for (const dryRun of [false, true]) {
      const response = await reverse(body, { dryRun });
      expect(response.statusCode, response.body).toBe(422);
      const problem = response.json();
      expect(problem.type).toBe('urn:ledgerflow:problem:posting-date-closed');
      expect(problem.detail).toMatch(
        new RegExp(
          `^postingDate ${body.postingDate} is in period ${period} of node ${AMS.replace(/[{}]/g, '\\$&')} and accounting configuration (IFRS|LOCAL_GAAP), which is ${state}: `,
        ),
      );
      expect(problem.errors).toEqual([
        { path: '/postingDate', message: expect.stringContaining(`period ${period} of node ${AMS}`) },
      ]);
    }
    expect(await recorded()).toEqual(before);
  }

  it('refuses it, naming the period and its state, by the calendar, closed by hand or locked, and takes it once reopened', async () => {
    const admin = await t.tokenFor(['admin']);
    const ingestionId = await ingest('businessEvent', [businessEvent({ effectiveDate: '2026-11-10' })]);
    const journals = await journalsOf(`ingestionId=${ingestionId}`);
    const body = (postingDate: string) => ({ selection: { ingestionId }, reason: 'wrong', postingDate });

    // October is past every node config's grace time on 2026-11-20.
    await expectRefused(body('2026-10-31'), '2026-10', 'closed by the calendar');
    await period('close', admin);
    await expectRefused(body('2026-11-25'), '2026-11', 'closed by hand');
    await period('lock', admin);
    await expectRefused(body('2026-11-25'), '2026-11', 'locked');
    // Nothing was moved to an open day: every journal stands, none has a reversal.
    expect(await journalsOf(`ingestionId=${ingestionId}`)).toEqual(journals);

    await period('reopen', admin);
    const created = await reverse(body('2026-11-25'));
    expect(created.statusCode, created.body).toBe(201);
    const reversals = await journalsOf(`reversalId=${created.json().reversalId}`);
    expect(reversals.map((j) => [j.coreDate, j.status])).toEqual([
      ['2026-11-25', 'unposted'],
      ['2026-11-25', 'unposted'],
    ]);
    await checkBooks();
  });

  it('refuses it for journals reversed already too, so that the answer does not depend on what was reversed before', async () => {
    const ingestionId = await ingest('businessEvent', [businessEvent({ effectiveDate: '2026-11-10' })]);
    const created = await reverse({ selection: { ingestionId }, reason: 'wrong' });
    expect(created.statusCode, created.body).toBe(201);
    const [reversal] = await journalsOf(`reversalId=${created.json().reversalId}`);
    await expectRefused(
      { selection: { ingestionId }, reason: 'again', postingDate: '2026-10-15' },
      '2026-10',
      'closed by the calendar',
    );
    // A reversal journal selected alone (never reversed itself) is refused the same way.
    await expectRefused(
      { selection: { journalIds: [reversal?.journalId] }, reason: 'undo', postingDate: '2026-09-30' },
      '2026-09',
      'closed by the calendar',
    );
  });
});
