import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ReversalTotals,
  type ReversibleJournal,
  reversalDateOf,
  reversalJournalOf,
} from '../../../src/modules/accounting/reversal-journals.js';

const WINDOW = { businessDate: '2026-11-20', earliestOpenFirstDay: '2026-11-01' };

function journal(lines: [string, string][], coreDate = '2026-11-18'): ReversibleJournal {
  return {
    journalId: 'j-1',
    ingestionId: 'in-1',
    coreDate,
    journalType: 'PERM',
    accountingConfig: 'IFRS',
    node: { legalEntity: 'LF_NL', branch: 'AMS' },
    originJournalId: 'ORIGIN-1',
    lines: lines.map(([account, amount], i) => ({
      lineId: `l-${i}`,
      lineNo: i + 1,
      account,
      amount,
      currency: 'EUR',
      extras: { productCode: 'MORTGAGE' },
    })),
  };
}

/** The dating rule of a reversal journal, as a table: journal date, posting date asked → reversal date and status. */
describe('reversalDateOf (open periods from 2026-11-01, business date 2026-11-20)', () => {
  const cases: [string, string | undefined, string, string][] = [
    ['2026-11-18', undefined, '2026-11-18', 'posted'],
    ['2026-11-01', undefined, '2026-11-01', 'posted'],
    ['2026-10-31', undefined, '2026-11-01', 'posted'],
    ['2025-02-10', undefined, '2026-11-01', 'posted'],
    ['2026-11-27', undefined, '2026-11-27', 'unposted'],
    ['2026-12-03', undefined, '2026-12-03', 'unposted'],
    ['2026-11-18', '2026-11-19', '2026-11-19', 'posted'],
    ['2026-10-15', '2026-11-02', '2026-11-02', 'posted'],
    ['2026-11-18', '2026-11-25', '2026-11-25', 'unposted'],
  ];
  it.each(cases)(
    'a journal of %s with posting date %s is reversed on %s, %s',
    (original, asked, coreDate, status) => {
      expect(reversalDateOf(original, WINDOW, asked)).toEqual({ ok: true, coreDate, status });
    },
  );

  it('refuses a posting date in a closed period or before the journal', () => {
    expect(reversalDateOf('2026-10-15', WINDOW, '2026-10-31')).toEqual({
      ok: false,
      refusal: 'posting-date-in-closed-period',
      firstOpenDay: '2026-11-01',
    });
    expect(reversalDateOf('2026-11-18', WINDOW, '2026-11-17')).toMatchObject({
      ok: false,
      refusal: 'posting-date-before-original',
    });
  });

  it('never dates a reversal in a closed period or before its journal', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 800 }), (days) => {
        const original = new Date(Date.UTC(2025, 0, 1) + days * 86_400_000).toISOString().slice(0, 10);
        const dating = reversalDateOf(original, WINDOW, undefined);
        if (!dating.ok) return false;
        return dating.coreDate >= WINDOW.earliestOpenFirstDay && dating.coreDate >= original;
      }),
    );
  });
});

describe('reversalJournalOf', () => {
  it('swaps the sides of every line and keeps everything else', () => {
    let n = 0;
    const original = journal([
      ['1300', '250.00'],
      ['2100', '-200.00'],
      ['4000', '-50.00'],
    ]);
    const reversal = reversalJournalOf(
      original,
      { coreDate: '2026-11-19', status: 'posted' },
      {
        journalId: 'r-1',
        newId: () => {
          n += 1;
          return `rl-${n}`;
        },
      },
    );
    expect(reversal).toEqual({
      journalId: 'r-1',
      coreDate: '2026-11-19',
      originalCoreDate: '2026-11-18',
      journalType: 'PERM',
      accountingConfig: 'IFRS',
      node: original.node,
      ingestionId: 'in-1',
      status: 'posted',
      reverses: 'j-1',
      originJournalId: 'ORIGIN-1',
      lines: [
        {
          lineId: 'rl-1',
          lineNo: 1,
          account: '1300',
          amount: '-250.00',
          currency: 'EUR',
          drCr: 'CR',
          extras: { productCode: 'MORTGAGE' },
        },
        {
          lineId: 'rl-2',
          lineNo: 2,
          account: '2100',
          amount: '200.00',
          currency: 'EUR',
          drCr: 'DR',
          extras: { productCode: 'MORTGAGE' },
        },
        {
          lineId: 'rl-3',
          lineNo: 3,
          account: '4000',
          amount: '50.00',
          currency: 'EUR',
          drCr: 'DR',
          extras: { productCode: 'MORTGAGE' },
        },
      ],
    });
  });

  it('cancels its journal line by line, exactly', () => {
    const amount = fc
      .tuple(fc.bigInt({ min: 1n, max: 10n ** 20n }), fc.integer({ min: 0, max: 6 }), fc.boolean())
      .map(([units, scale, negative]) => {
        const digits = units.toString().padStart(scale + 1, '0');
        const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
        return negative ? `-${text}` : text;
      });
    fc.assert(
      fc.property(fc.array(amount, { minLength: 1, maxLength: 8 }), (amounts) => {
        const original = journal(amounts.map((a, i) => [`A${i}`, a]));
        const reversal = reversalJournalOf(
          original,
          { coreDate: '2026-11-18', status: 'posted' },
          {
            journalId: 'r',
            newId: () => 'l',
          },
        );
        return reversal.lines.every((line, i) => {
          const asNumber = (t: string) => BigInt(t.replace('.', ''));
          return (
            asNumber(line.amount) === -asNumber(original.lines[i]?.amount ?? '0') &&
            line.amount.replace('-', '') === original.lines[i]?.amount.replace('-', '')
          );
        });
      }),
    );
  });
});

describe('ReversalTotals', () => {
  it('sums the reversal lines per accounting configuration, account and currency, sides swapped', () => {
    const totals = new ReversalTotals();
    totals.addReversalOf(
      journal([
        ['1300', '250.00'],
        ['2100', '-250.00'],
      ]),
    );
    totals.addReversalOf(
      journal([
        ['1300', '0.5'],
        ['2100', '-0.5'],
      ]),
    );
    expect(totals.rows()).toEqual([
      { accountingConfig: 'IFRS', account: '1300', currency: 'EUR', debit: '0', credit: '250.50' },
      { accountingConfig: 'IFRS', account: '2100', currency: 'EUR', debit: '250.50', credit: '0' },
    ]);
  });
});
