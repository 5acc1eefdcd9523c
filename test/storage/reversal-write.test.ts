import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newTimeOrderedUuid } from '../../src/lib/ids.js';
import { type WithdrawalContext, withdrawJournals } from '../../src/storage/accounting/reversal-write.js';
import { createBulkInsert } from '../../src/storage/bulk-insert.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { testClock } from '../helpers/clock.js';
import { ingestClosedSession, realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { expectCountersEqualCounts } from '../helpers/reprocessing.js';
import { expectBalancesKept } from './balances-oracle.js';

/** Everything open from 2026-11-01, business date 2026-11-20. */
const CONTEXT: WithdrawalContext = {
  reversalId: null,
  at: '2026-11-20T10:00:00.000Z',
  revision: 1,
  openWindowOf: () => ({ businessDate: '2026-11-20', earliestOpenFirstDay: '2026-11-01' }),
  newId: newTimeOrderedUuid,
};

type Row = {
  journal_id: string;
  reverses: string | null;
  reversed_by: string | null;
  withdrawn_by: string | null;
};

let t: TestApp;
let journals: Row[];

/** The journals of one disbursement (two, permanent) and one accrual (two, each with its automatic reversal). */
beforeEach(async () => {
  t = await createTestApp({}, { clock: testClock() });
  const token = await t.tokenFor(['bulk-operator']);
  const put = await t.call(token, {
    method: 'PUT',
    url: '/api/v1/configuration/bulk',
    payload: realisticConfiguration(),
  });
  expect(put.statusCode).toBe(200);
  await ingestClosedSession(t, token, 'businessEvent', [
    businessEvent({ effectiveDate: '2026-11-18' }),
    businessEvent({ eventType: 'INTEREST_ACCRUAL', effectiveDate: '2026-11-18', amount: '7.70' }),
  ]);
  await t.services.processor.drain();
  journals = await t.store.db
    .selectFrom('journals')
    .select(['journal_id', 'reverses', 'reversed_by', 'withdrawn_by'])
    .orderBy('journal_id')
    .execute();
  expect(journals).toHaveLength(6);
});
afterEach(async () => {
  await t.close();
});

function withdraw(ids: readonly string[], context: Partial<WithdrawalContext> = {}) {
  const bulkInsert = createBulkInsert(t.store);
  return t.store.db
    .transaction()
    .execute((trx) => withdrawJournals(trx, bulkInsert, t.store.adapter, ids, { ...CONTEXT, ...context }));
}

/** `withdrawJournals`, the write that reversals by selection and business-event rollbacks share. */
describe('withdrawJournals', () => {
  it('withdraws a journal with its automatic reversal, reports the rest, and keeps balances and counters', async () => {
    const accrual = journals.find((j) => j.reverses === null && j.reversed_by !== null);
    const automatic = journals.find((j) => j.journal_id === accrual?.reversed_by);
    const lone = journals.find((j) => j.reverses !== null && j.journal_id !== automatic?.journal_id);
    if (accrual === undefined || automatic === undefined || lone === undefined) throw new Error('fixture');

    const result = await withdraw([
      accrual.journal_id,
      automatic.journal_id,
      lone.journal_id,
      'no-such-journal',
    ]);
    expect(result.reversed.map((r) => r.journalId).sort()).toEqual(
      [accrual.journal_id, automatic.journal_id].sort(),
    );
    expect(result).toMatchObject({
      alreadyReversed: [],
      notReversible: [lone.journal_id],
      unknown: ['no-such-journal'],
    });
    const after = await t.store.db
      .selectFrom('journals')
      .select(['journal_id', 'withdrawn_by', 'reversed_by', 'reverses'])
      .where('journal_id', 'in', [accrual.journal_id, automatic.journal_id])
      .execute();
    for (const row of after) {
      const reversal = result.reversed.find((r) => r.journalId === row.journal_id)?.reversalJournalId;
      expect(row.withdrawn_by).toBe(reversal);
    }
    // The accrual keeps its automatic reversal as `reversed_by`; the automatic one gets its correction.
    expect(after.find((r) => r.journal_id === accrual.journal_id)?.reversed_by).toBe(automatic.journal_id);
    expect(after.find((r) => r.journal_id === automatic.journal_id)?.reversed_by).toBe(
      result.reversed.find((r) => r.journalId === automatic.journal_id)?.reversalJournalId,
    );
    await expectBalancesKept(t.store, ['2026-11-18', '2026-11-19', '2026-11-20']);
    await expectCountersEqualCounts(t.store, t.clock);

    const again = await withdraw([accrual.journal_id, automatic.journal_id]);
    expect(again).toMatchObject({
      reversed: [],
      alreadyReversed: [accrual.journal_id, automatic.journal_id],
    });
  });

  it('leaves the balances and counters to the caller when asked, handing it their moves and counts', async () => {
    const permanent = journals.filter((j) => j.reverses === null && j.reversed_by === null);
    const balances = () =>
      t.store.db.selectFrom('balances').selectAll().orderBy('account').orderBy('accounting_config').execute();
    const before = await balances();
    const result = await withdraw(
      permanent.map((j) => j.journal_id),
      { deferBalancesAndCounters: true },
    );
    expect(result.reversed).toHaveLength(2);
    expect(result.journalCounts.reduce((n, c) => n + c.journals, 0)).toBe(2);
    expect(result.journalCounts.reduce((n, c) => n + c.lines, 0)).toBe(result.lines);
    expect(result.journalCounts.every((c) => c.posted === 1 && c.coreDate === '2026-11-18')).toBe(true);
    expect(result.balanceMoves.length).toBeGreaterThan(0);
    // Nothing was added to the kept balances: that is the caller's, with the moves handed to it.
    expect(await balances()).toEqual(before);
  });

  it('withdraws a journal once when two transactions withdraw it at once', async () => {
    const journalId = journals.find((j) => j.reverses === null && j.reversed_by === null)?.journal_id ?? '';
    const [a, b] = await Promise.all([withdraw([journalId]), withdraw([journalId])]);
    const outcomes = [a, b].map((r) => [r.reversed.length, r.alreadyReversed.length]).sort();
    expect(outcomes).toEqual([
      [0, 1],
      [1, 0],
    ]);
    const reversals = await t.store.db
      .selectFrom('journals')
      .select('journal_id')
      .where('reverses', '=', journalId)
      .execute();
    expect(reversals).toHaveLength(1);
    await expectBalancesKept(t.store, ['2026-11-20']);
  });

  it('refuses a posting date in a closed period before writing anything', async () => {
    const journalId = journals.find((j) => j.reverses === null)?.journal_id ?? '';
    await expect(withdraw([journalId], { postingDate: '2026-10-31' })).rejects.toMatchObject({
      code: 'posting-date-closed',
    });
    const row = await t.store.db
      .selectFrom('journals')
      .select('withdrawn_by')
      .where('journal_id', '=', journalId)
      .executeTakeFirstOrThrow();
    expect(row.withdrawn_by).toBeNull();
  });
});
