import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServices } from '../../src/composition/services.js';
import { ManualClock } from '../../src/lib/clock.js';
import { openStore } from '../../src/storage/store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ingestClosedSession, uploadRealisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent, loanRecord } from '../helpers/records.js';
import { expectCountersEqualCounts } from '../helpers/reprocessing.js';
import { TEST_DIALECT } from '../helpers/store.js';

/**
 * Issue 24: business events rolled back by sending them again as `ledger/businessEventRollback`
 * records; their journals are withdrawn by reversal journals, once, and a corrected event then
 * posts normally. Every test runs on SQLite and PostgreSQL.
 */

interface ApiLine {
  account: string;
  transactionAmount: string;
  drCr: string;
}
interface ApiJournal {
  journalId: string;
  status: string;
  coreDate: string;
  journalType: string;
  accountingConfig: string;
  ingestionId: string;
  reverses: string | null;
  reversedBy: string | null;
  reversalId: string | null;
  lines: ApiLine[];
}

let t: TestApp;
let operator: string;

beforeEach(async () => {
  t = await createTestApp({}, { clock: new ManualClock(new Date('2026-11-26T10:00:00Z')) });
  operator = await t.tokenFor(['bulk-operator']);
  await uploadRealisticConfiguration(t, operator);
});
afterEach(async () => {
  await t.close();
});

/** Sends `data` as one closed session of `ledger/<entity>` and processes it. */
async function send(entity: string, data: unknown[]): Promise<string> {
  const ingestionId = await ingestClosedSession(t, operator, entity, data);
  await t.services.processor.drain();
  return ingestionId;
}

async function journalsOf(ingestionId: string): Promise<ApiJournal[]> {
  const response = await t.call(operator, {
    method: 'GET',
    url: `/api/v1/journals?ingestionId=${ingestionId}&limit=100`,
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data as ApiJournal[];
}

async function errorsOf(ingestionId: string): Promise<{ code: string; message: string }[]> {
  const response = await t.call(operator, {
    method: 'GET',
    url: `/api/v1/processing-errors?ingestionId=${ingestionId}`,
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data as { code: string; message: string }[];
}

/** The API's balances that are not zero. */
async function nonZeroBalances(): Promise<{ account: string; accountingConfig: string; balance: string }[]> {
  const response = await t.call(operator, { method: 'GET', url: '/api/v1/balances' });
  expect(response.statusCode, response.body).toBe(200);
  return (response.json().data as { account: string; accountingConfig: string; balance: string }[]).filter(
    (row) => !/^-?0(\.0+)?$/.test(row.balance),
  );
}

/** The withdrawal marks of journals, by journal id. */
async function withdrawnBy(): Promise<Map<string, string | null>> {
  const rows = await t.store.db.selectFrom('journals').select(['journal_id', 'withdrawn_by']).execute();
  return new Map(rows.map((r) => [r.journal_id, r.withdrawn_by]));
}

/** Each reversal journal of `journals` against the original it reverses: same lines, sides swapped. */
function expectReversalsCancel(journals: readonly ApiJournal[]): void {
  const byId = new Map(journals.map((j) => [j.journalId, j]));
  for (const reversal of journals.filter((j) => j.reverses !== null)) {
    const original = byId.get(reversal.reverses ?? '');
    expect(original).toBeDefined();
    expect(reversal.lines.map((l) => [l.account, l.transactionAmount.replace(/^-/, '')])).toEqual(
      original?.lines.map((l) => [l.account, l.transactionAmount.replace(/^-/, '')]),
    );
    expect(reversal.lines.map((l) => l.drCr)).toEqual(
      original?.lines.map((l) => (l.drCr === 'DR' ? 'CR' : 'DR')),
    );
  }
}

describe('rollback of business events', () => {
  it('withdraws the journals of a direct business event, identical by value (1000.00 is 1000.0), and balances come back to zero', async () => {
    const original = await send('businessEvent', [businessEvent({ amount: '1000.00' })]);
    const posted = await journalsOf(original);
    expect(posted).toHaveLength(2);
    expect(await nonZeroBalances()).not.toEqual([]);

    // The same event, its keys in another order and its amount written otherwise.
    const { amount: _amount, ...rest } = businessEvent();
    const rollback = await send('businessEventRollback', [{ amount: '1000.0', ...rest }]);
    expect(await errorsOf(rollback)).toEqual([]);
    const session = await t.call(operator, { method: 'GET', url: `/api/v1/ingestions/${rollback}` });
    expect(session.json()).toMatchObject({ processingStatus: 'completed' });

    // The reversals carry the original's session, and reverse each original once.
    const after = await journalsOf(original);
    expect(after).toHaveLength(4);
    const reversals = after.filter((j) => j.reverses !== null);
    expect(reversals.map((j) => j.reverses).sort()).toEqual(posted.map((j) => j.journalId).sort());
    for (const reversal of reversals) {
      expect(reversal).toMatchObject({ status: 'posted', coreDate: '2026-11-20', ingestionId: original });
    }
    expectReversalsCancel(after);
    const marks = await withdrawnBy();
    for (const journal of posted)
      expect(marks.get(journal.journalId)).toBe(
        reversals.find((r) => r.reverses === journal.journalId)?.journalId,
      );
    // The reversal records the rollback record it came from, and both dates.
    const stored = await t.store.db
      .selectFrom('journals')
      .select(['record_id', 'original_core_date', 'event_fingerprint'])
      .where('reverses', 'is not', null)
      .execute();
    const rollbackRecord = await t.store.db
      .selectFrom('records')
      .select('record_id')
      .where('ingestion_id', '=', rollback)
      .executeTakeFirstOrThrow();
    for (const row of stored) {
      expect(Number(row.record_id)).toBe(Number(rollbackRecord.record_id));
      expect(row.original_core_date).toBe('2026-11-20');
      expect(row.event_fingerprint).toBeNull();
    }
    expect(await nonZeroBalances()).toEqual([]);

    // Re-post: the corrected event posts normally.
    const corrected = await send('businessEvent', [businessEvent({ amount: '1200.00' })]);
    expect(await errorsOf(corrected)).toEqual([]);
    expect(await journalsOf(corrected)).toHaveLength(2);
    const balances = await nonZeroBalances();
    expect(balances.length).toBeGreaterThan(0);
    for (const row of balances) expect(row.balance.replace('-', '')).toMatch(/^1200(\.0+)?$/);
  });

  it('answers rollback-target-not-found for an event never processed, and the record posts when reprocessed after its twin arrives', async () => {
    const rollback = await send('businessEventRollback', [businessEvent({ amount: '77.00' })]);
    const [error, ...more] = await errorsOf(rollback);
    expect(more).toEqual([]);
    expect(error?.code).toBe('rollback-target-not-found');
    expect(error?.message).toContain('"LOAN_DISBURSEMENT"');
    expect(error?.message).toMatch(/fingerprint [A-Za-z0-9_-]{22}/);
    expect(error?.message).toContain('amount "77.00"');

    const original = await send('businessEvent', [businessEvent({ amount: '77' })]);
    expect(await nonZeroBalances()).not.toEqual([]);
    const run = await t.call(operator, {
      method: 'POST',
      url: '/api/v1/processing-errors/reprocess',
      payload: { code: 'rollback-target-not-found' },
    });
    expect(run.statusCode, run.body).toBe(202);
    await t.services.processor.drain();
    expect(await errorsOf(rollback)).toEqual([]);
    expect(await journalsOf(original)).toHaveLength(4);
    expect(await nonZeroBalances()).toEqual([]);
  });

  it('rolls back duplicates one at a time: two identical events, two rollbacks withdraw both, a third is already-rolled-back', async () => {
    const first = await send('businessEvent', [businessEvent()]);
    const second = await send('businessEvent', [businessEvent()]);
    const twice = await send('businessEventRollback', [businessEvent(), businessEvent()]);
    expect(await errorsOf(twice)).toEqual([]);
    expect(await journalsOf(first)).toHaveLength(4);
    expect(await journalsOf(second)).toHaveLength(4);
    expect(await nonZeroBalances()).toEqual([]);

    const third = await send('businessEventRollback', [businessEvent()]);
    // The statistics, read from counters kept with the writes, count the reversals and the error.
    await expectCountersEqualCounts(t.store, t.clock);
    const [error] = await errorsOf(third);
    expect(error?.code).toBe('already-rolled-back');
    const withdrawn = [...(await withdrawnBy()).entries()].filter(([, by]) => by !== null);
    // It names the journals and what withdrew them.
    const [journalId, by] = withdrawn[0] ?? ['', ''];
    expect(error?.message).toContain(`journal ${journalId} withdrawn by ${by}`);
    expect(await nonZeroBalances()).toEqual([]);
  });

  it('shares the at-most-once rule with reversals by selection: a rollback after a reversal finds nothing left', async () => {
    const posted = await send('businessEvent', [businessEvent()]);
    const journals = await journalsOf(posted);
    const reversed = await t.call(operator, {
      method: 'POST',
      url: '/api/v1/reversals',
      payload: { selection: { ingestionId: posted }, reason: 'sent twice by the upstream system' },
    });
    expect(reversed.statusCode, reversed.body).toBe(201);
    const rollback = await send('businessEventRollback', [businessEvent()]);
    const [error] = await errorsOf(rollback);
    expect(error?.code).toBe('already-rolled-back');
    // Every original has one correction, made by the request, and no other.
    const after = await journalsOf(posted);
    for (const original of journals) {
      const corrections = after.filter((j) => j.reverses === original.journalId && j.reversalId !== null);
      expect(corrections).toHaveLength(1);
    }
    expect(after.length).toBe(journals.length * 2);
    expect(await nonZeroBalances()).toEqual([]);
    await expectCountersEqualCounts(t.store, t.clock);
  });

  it('withdraws the automatic reversal of a REVERSING journal type with its original', async () => {
    const original = await send('businessEvent', [
      businessEvent({ eventType: 'INTEREST_ACCRUAL', amount: '3.33', effectiveDate: '2026-11-19' }),
    ]);
    const posted = await journalsOf(original);
    expect(posted.filter((j) => j.reverses !== null).length).toBeGreaterThan(0);
    const rollback = await send('businessEventRollback', [
      businessEvent({ eventType: 'INTEREST_ACCRUAL', amount: '3.330', effectiveDate: '2026-11-19' }),
    ]);
    expect(await errorsOf(rollback)).toEqual([]);
    const after = await journalsOf(original);
    expect(after).toHaveLength(posted.length * 2);
    const marks = await withdrawnBy();
    for (const journal of posted) expect(marks.get(journal.journalId)).not.toBeNull();
    expectReversalsCancel(after);
    expect(await nonZeroBalances()).toEqual([]);
  });

  it('withdraws the journals of an event a flow built from another entity', async () => {
    const loan = loanRecord(0, { transactionType: 'DISBURSE', amount: '2500.50', valueDate: '2026-11-18' });
    const opened = await t.call(operator, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace: 'loans', entity: 'loanTransaction' },
    });
    const ingestionId = opened.json().ingestionId as string;
    const chunk = await t.call(operator, {
      method: 'POST',
      url: `/api/v1/ingestions/${ingestionId}`,
      payload: { data: [loan] },
    });
    expect(chunk.statusCode, chunk.body).toBe(201);
    await t.services.processor.drain();
    const posted = await journalsOf(ingestionId);
    expect(posted).toHaveLength(2);

    // The business event the flow built: its mapping copies these attributes.
    const rollback = await send('businessEventRollback', [
      {
        eventType: 'LOAN_DISBURSEMENT',
        effectiveDate: '2026-11-18',
        amount: '2500.5',
        currency: loan.currency,
        legalEntity: loan.legalEntity,
        branch: loan.branch,
        productCode: loan.productCode,
      },
    ]);
    expect(await errorsOf(rollback)).toEqual([]);
    const after = await journalsOf(ingestionId);
    expect(after).toHaveLength(4);
    expectReversalsCancel(after);
    expect(await nonZeroBalances()).toEqual([]);
  });

  it('dates a reversal whose original lies in a closed period on the first day of the earliest open period', async () => {
    const original = await send('businessEvent', [businessEvent({ effectiveDate: '2026-11-20' })]);
    t.clock.set(new Date('2027-01-20T10:00:00Z'));
    operator = await t.tokenFor(['bulk-operator']);
    await t.services.processor.postDue();
    const rollback = await send('businessEventRollback', [businessEvent({ effectiveDate: '2026-11-20' })]);
    expect(await errorsOf(rollback)).toEqual([]);
    const reversals = (await journalsOf(original)).filter((j) => j.reverses !== null);
    expect(reversals).toHaveLength(2);
    for (const reversal of reversals)
      expect(reversal).toMatchObject({ coreDate: '2027-01-01', status: 'posted' });
    const stored = await t.store.db
      .selectFrom('journals')
      .select('original_core_date')
      .where('reverses', 'is not', null)
      .execute();
    expect(stored.map((r) => r.original_core_date)).toEqual(['2026-11-20', '2026-11-20']);
    expect(await nonZeroBalances()).toEqual([]);
  });

  it('gives an unposted event unposted reversals, which post with it', async () => {
    const original = await send('businessEvent', [
      businessEvent({ effectiveDate: '2026-11-30', amount: '50' }),
    ]);
    expect((await journalsOf(original)).map((j) => j.status)).toEqual(['unposted', 'unposted']);
    const rollback = await send('businessEventRollback', [
      businessEvent({ effectiveDate: '2026-11-30', amount: '50' }),
    ]);
    expect(await errorsOf(rollback)).toEqual([]);
    expect((await journalsOf(original)).map((j) => j.status)).toEqual([
      'unposted',
      'unposted',
      'unposted',
      'unposted',
    ]);
    t.clock.set(new Date('2026-11-30T12:00:00Z'));
    operator = await t.tokenFor(['bulk-operator']);
    expect(await t.services.processor.postDue()).toBe(4);
    expect((await journalsOf(original)).every((j) => j.status === 'posted')).toBe(true);
    expect(await nonZeroBalances()).toEqual([]);
  });
});

describe.runIf(TEST_DIALECT === 'postgres')('rollbacks racing on PostgreSQL', () => {
  it('withdraws an event once when two instances process rollbacks of it at the same time', async () => {
    const original = await send('businessEvent', [businessEvent({ amount: '640.00' })]);
    const [first] = await journalsOf(original);
    const secondStore = openStore(t.url);
    const second = createServices(
      secondStore,
      t.clock,
      { accessTokenTtlSeconds: 300, refreshTokenTtlSeconds: 1800, businessDate: undefined },
      { processing: 'here' },
    );
    // A third connection holds the first journal's row, so that both instances have found the
    // same twin and wait to withdraw it before either can: the interleaving under test.
    const holder = new pg.Client({ connectionString: t.url });
    await holder.connect();
    try {
      await ingestClosedSession(t, operator, 'businessEventRollback', [businessEvent({ amount: '640' })]);
      await ingestClosedSession(t, operator, 'businessEventRollback', [businessEvent({ amount: '640.0' })]);
      await holder.query('begin');
      await holder.query('select 1 from journals where journal_id = $1 for update', [first?.journalId]);
      const drains = Promise.all([t.services.processor.drain(), second.processor.drain()]);
      const deadline = Date.now() + 10_000;
      for (;;) {
        // Read from the test's own pool: inside the holder's transaction the activity view would
        // stay the snapshot of its first read.
        const { rows } = await sql<{ n: number }>`
          select count(*)::int as n from pg_stat_activity
          where wait_event_type = 'Lock' and datname = current_database()`.execute(t.store.db);
        if (rows[0]?.n === 2) break;
        if (Date.now() > deadline) throw new Error('the two rollbacks never waited on the same journal');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await holder.query('commit');
      await drains;

      const codes = (await t.store.db.selectFrom('processing_errors').select('code').execute()).map(
        (e) => e.code,
      );
      expect(codes).toEqual(['already-rolled-back']);
      const journals = await journalsOf(original);
      expect(journals).toHaveLength(4);
      expectReversalsCancel(journals);
      expect(await nonZeroBalances()).toEqual([]);
    } finally {
      await holder.end();
      await second.close();
      await secondStore.close();
    }
  });
});
