/**
 * Reversals (docs/domain/accounting.md): a REVERSING journal type with NEXT_DAY is followed by a
 * reversal dated one day later, with the same lines on swapped sides, linked to the original both
 * ways.
 */
import { describe, expect, it } from 'vitest';
import { processBusinessEvent } from '../../src/modules/accounting/engine.js';
import { prepareAccounting } from '../../src/modules/accounting/prepare.js';
import {
  context,
  journalsOf,
  type LedgerRow,
  ledgerRows,
  recordsOf,
  saleEvent,
  testConfiguration,
} from './accounting-fixture.js';

const prepared = prepareAccounting(testConfiguration());

describe('reversing journals', () => {
  const accrual = saleEvent({ eventType: 'ACCRUAL', amount: '75.25', postingDate: '2026-03-10' });

  it('creates the reversal the next day with sides swapped', () => {
    const rows: LedgerRow[] = ledgerRows(journalsOf(processBusinessEvent(prepared, accrual, context())));
    expect(rows).toEqual([
      ['2026-03-10', 'IFRS', 'ACR', '4000 Expenses', '75.25', '', 'EUR'],
      ['2026-03-10', 'IFRS', 'ACR', '1600 Accrued liabilities', '', '75.25', 'EUR'],
      ['2026-03-11', 'IFRS', 'ACR', '4000 Expenses', '', '75.25', 'EUR'],
      ['2026-03-11', 'IFRS', 'ACR', '1600 Accrued liabilities', '75.25', '', 'EUR'],
    ]);
  });

  it('links original and reversal both ways, in the drafts and in the line records', () => {
    const [original, reversal] = journalsOf(processBusinessEvent(prepared, accrual, context()));
    expect(original).toMatchObject({ journalId: 'id-1', reversedBy: 'id-4' });
    expect(original?.reverses).toBeUndefined();
    expect(reversal).toMatchObject({ journalId: 'id-4', reverses: 'id-1' });
    expect(reversal?.reversedBy).toBeUndefined();
    expect(recordsOf(prepared, original).map((record) => [record.reverses, record.reversedBy])).toEqual([
      [null, 'id-4'],
      [null, 'id-4'],
    ]);
    expect(
      recordsOf(prepared, reversal).map((record) => [record.journalId, record.reverses, record.reversedBy]),
    ).toEqual([
      ['id-4', 'id-1', null],
      ['id-4', 'id-1', null],
    ]);
  });

  it('posts the reversal only when the business date reaches its day', () => {
    const [original, reversal] = journalsOf(processBusinessEvent(prepared, accrual, context()));
    expect([original?.status, reversal?.status]).toEqual(['posted', 'unposted']);
    const later = journalsOf(
      processBusinessEvent(prepared, accrual, context(new Date('2026-03-11T10:00:00Z'))),
    );
    expect(later.map((journal) => journal.status)).toEqual(['posted', 'posted']);
  });

  it('reverses across a month end into the next period', () => {
    const rows = ledgerRows(
      journalsOf(processBusinessEvent(prepared, { ...accrual, postingDate: '2026-03-31' }, context())),
    );
    expect(rows.map((row) => row[0])).toEqual(['2026-03-31', '2026-03-31', '2026-04-01', '2026-04-01']);
  });

  it('a permanent journal type has no reversal', () => {
    const journals = journalsOf(
      processBusinessEvent(prepared, saleEvent({ legalEntity: 'US01' }), context()),
    );
    expect(journals).toHaveLength(1);
    expect(journals[0]?.reversedBy).toBeUndefined();
  });
});
