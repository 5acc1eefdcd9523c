import { describe, expect, it } from 'vitest';
import { add, decimal, toDecimalString, ZERO } from '../../src/lib/decimal.js';
import type { JournalDraft } from '../../src/modules/accounting/store.js';
import { balanceMovesOf } from '../../src/storage/accounting/balances.js';

const NODE = Object.freeze({ legalEntity: 'LF_NL', branch: 'AMS' });

function draft(lines: { account: string; amount: string }[], status: 'posted' | 'unposted' = 'posted') {
  return {
    draft: {
      status,
      accountingConfig: 'IFRS',
      node: NODE,
      coreDate: '2026-11-20',
      lines: lines.map((l) => ({ ...l, currency: 'EUR' })),
    } as unknown as JournalDraft,
  };
}

/**
 * A chunk's moves are summed per key before the upserts, on integer units while they stay safe
 * and exact decimals beyond: the text is always what `lib/decimal.ts` prints for the sum.
 */
describe('the balance moves of a chunk', () => {
  it('sum per key exactly, with the larger scale, past the safe integers, unposted journals left out', () => {
    const amounts = [
      '100.50',
      '-100.5',
      '0.001',
      '9007199254740.991',
      '9007199254740.991',
      '123456789012345.67',
      '-0.00',
      '7',
      '-999999999999999999999999.999999',
      '0.000000000000000001',
    ];
    const journals = amounts.map((amount) => draft([{ account: '1300', amount }]));
    journals.push(draft([{ account: '1300', amount: '5' }], 'unposted'));
    journals.push(
      draft([
        { account: '2100', amount: '-1.10' },
        { account: '2100', amount: '1.1' },
      ]),
    );
    const moves = balanceMovesOf(journals, (node) => JSON.stringify(node));
    const expected = toDecimalString(amounts.reduce((total, a) => add(total, decimal(a)), ZERO));
    expect(moves.map((m) => [m.account, m.amount])).toEqual([
      ['1300', expected],
      ['2100', '0.00'],
    ]);
    expect(expected).toBe('-999999999858528812478165.346998999999999999');
  });

  it('print small sums as decimal.js does: zero at the scale, no sign on zero', () => {
    const moves = balanceMovesOf(
      [
        draft([
          { account: '1', amount: '-0.50' },
          { account: '1', amount: '0.5' },
        ]),
      ],
      String,
    );
    expect(moves[0]?.amount).toBe('0.00');
    const negative = balanceMovesOf([draft([{ account: '1', amount: '-0.05' }])], String);
    expect(negative[0]?.amount).toBe('-0.05');
  });
});
