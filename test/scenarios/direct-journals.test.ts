/**
 * Direct journals (docs/domain/accounting.md): journal lines sent by an upstream system. Lines with
 * the same originJournalId in one chunk form one journal; they pass the same checks as generated
 * journals and get system ids, posting status and reversals.
 */
import { describe, expect, it } from 'vitest';
import { processDirectJournals } from '../../src/modules/accounting/engine.js';
import { prepareAccounting } from '../../src/modules/accounting/prepare.js';
import { context, journalsOf, ledgerRows, recordsOf, testConfiguration } from './accounting-fixture.js';

const prepared = prepareAccounting(testConfiguration());

/** A sender's line: field names of the test journal definition. */
function line(originJournalId: string, account: string, amount: string, more: Record<string, unknown> = {}) {
  return {
    originJournalId,
    originJournalLineId: `${originJournalId}-${account}`,
    coreDate: '2026-03-10',
    journalType: 'STD',
    basis: 'IFRS',
    account,
    amount,
    currency: 'EUR',
    legalEntity: 'NL01',
    memo: 'upstream memo',
    ...more,
  };
}

describe('journals ingested directly', () => {
  it('groups lines by originJournalId in order of first appearance', () => {
    const groups = processDirectJournals(
      prepared,
      [
        line('GL-1', '1000 Cash', '50.00'),
        line('GL-2', '1000 Cash', '-7.5'),
        line('GL-1', '8000 Revenue', '-50.00'),
        line('GL-2', '4000 Expenses', '7.50'),
      ],
      context(),
    );
    expect(groups.map((group) => [group.originJournalId, group.recordIndexes])).toEqual([
      ['GL-1', [0, 2]],
      ['GL-2', [1, 3]],
    ]);
    expect(groups.flatMap((group) => ledgerRows(journalsOf(group.outcome)))).toEqual([
      ['2026-03-10', 'IFRS', 'STD', '1000 Cash', '50.00', '', 'EUR'],
      ['2026-03-10', 'IFRS', 'STD', '8000 Revenue', '', '50.00', 'EUR'],
      ['2026-03-10', 'IFRS', 'STD', '1000 Cash', '', '7.5', 'EUR'],
      ['2026-03-10', 'IFRS', 'STD', '4000 Expenses', '7.50', '', 'EUR'],
    ]);
  });

  it('fills the system fields and keeps the sender fields', () => {
    const [group] = processDirectJournals(
      prepared,
      [line('GL-1', '1000 Cash', '50.00'), line('GL-1', '8000 Revenue', '-50.00')],
      context(),
    );
    const [journal] = journalsOf(group?.outcome ?? { ok: true, journals: [] });
    expect(journal).toMatchObject({
      journalId: 'id-1',
      originJournalId: 'GL-1',
      status: 'posted',
      ingestionId: 'in_test',
    });
    expect(recordsOf(prepared, journal)[1]).toEqual({
      journalId: 'id-1',
      lineId: 'id-3',
      lineNo: 2,
      coreDate: '2026-03-10',
      journalType: 'STD',
      basis: 'IFRS',
      account: '8000 Revenue',
      amount: '-50.00',
      currency: 'EUR',
      ingestionId: 'in_test',
      legalEntity: 'NL01',
      reverses: null,
      reversedBy: null,
      originJournalId: 'GL-1',
      originJournalLineId: 'GL-1-8000 Revenue',
      reference: null,
      memo: 'upstream memo',
    });
  });

  it('follows the reversal rule of its journal type', () => {
    const [group] = processDirectJournals(
      prepared,
      [
        line('GL-9', '4000 Expenses', '12.00', { journalType: 'ACR' }),
        line('GL-9', '1600 Accrued', '-12.00', { journalType: 'ACR' }),
      ],
      context(),
    );
    const journals = journalsOf(group?.outcome ?? { ok: true, journals: [] });
    expect(ledgerRows(journals)).toEqual([
      ['2026-03-10', 'IFRS', 'ACR', '4000 Expenses', '12.00', '', 'EUR'],
      ['2026-03-10', 'IFRS', 'ACR', '1600 Accrued', '', '12.00', 'EUR'],
      ['2026-03-11', 'IFRS', 'ACR', '4000 Expenses', '', '12.00', 'EUR'],
      ['2026-03-11', 'IFRS', 'ACR', '1600 Accrued', '12.00', '', 'EUR'],
    ]);
    expect(
      journals.map((journal) => [journal.journalId, journal.reverses, journal.reversedBy, journal.status]),
    ).toEqual([
      ['id-1', undefined, 'id-4', 'posted'],
      ['id-4', 'id-1', undefined, 'unposted'],
    ]);
  });

  it('follows the posting rules: a future journal is unposted, a closed period moves with the override', () => {
    const [future, moved] = processDirectJournals(
      prepared,
      [
        line('F', '1000 Cash', '1', { coreDate: '2026-03-20' }),
        line('F', '8000 Revenue', '-1', { coreDate: '2026-03-20' }),
        line('M', '1000 Cash', '1', { coreDate: '2026-02-10', basis: 'LOCAL_GAAP' }),
        line('M', '8000 Revenue', '-1', { coreDate: '2026-02-10', basis: 'LOCAL_GAAP' }),
      ],
      context(),
    );
    expect(journalsOf(future?.outcome ?? { ok: true, journals: [] })[0]?.status).toBe('unposted');
    expect(journalsOf(moved?.outcome ?? { ok: true, journals: [] })[0]).toMatchObject({
      coreDate: '2026-03-01',
      originalCoreDate: '2026-02-10',
    });
  });

  it('fails one origin journal without touching the others of the chunk', () => {
    const groups = processDirectJournals(
      prepared,
      [
        line('BAD', '1000 Cash', '10.00'),
        line('BAD', '8000 Revenue', '-9.99'),
        line('GOOD', '1000 Cash', '10.00'),
        line('GOOD', '8000 Revenue', '-10.00'),
      ],
      context(),
    );
    expect(groups.map((group) => (group.outcome.ok ? 'ok' : group.outcome.error.code))).toEqual([
      'unbalanced',
      'ok',
    ]);
    expect(groups[0]?.outcome).toEqual({
      ok: false,
      error: {
        code: 'unbalanced',
        message:
          'origin journal "BAD" (accounting configuration "IFRS", journal type "STD", core date 2026-03-10) does ' +
          'not balance in EUR: debits 10.00, credits 9.99',
      },
    });
  });
});
