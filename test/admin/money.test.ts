import { describe, expect, it } from 'vitest';
import { amountHtml, formatAmount, magnitudeOf, sumsByCurrency } from '../../src/http/admin/money.js';
import { toDecimalString } from '../../src/lib/decimal.js';

describe('formatAmount', () => {
  it.each([
    ['0', '0'],
    ['0.00', '0.00'],
    ['-0.00', '0.00'],
    ['5', '5'],
    ['999.99', '999.99'],
    ['1000', '1,000'],
    ['1234567.89', '1,234,567.89'],
    ['-1234567.89', '-1,234,567.89'],
    ['+1234.5', '1,234.5'],
    ['-100.00', '-100.00'],
    ['000123456.70', '123,456.70'],
    ['12345.123456789012345678', '12,345.123456789012345678'],
    ['0.000000000000000001', '0.000000000000000001'],
    [
      '9999999999999999999999999999.999999999999999999',
      '9,999,999,999,999,999,999,999,999,999.999999999999999999',
    ],
  ])('shows %s as %s', (amount, shown) => {
    expect(formatAmount(amount)).toBe(shown);
  });

  it('keeps every digit that a binary float would lose', () => {
    expect(formatAmount('90071992547409931.01')).toBe('90,071,992,547,409,931.01');
  });

  it('returns text that is not a plain decimal unchanged', () => {
    for (const text of ['', '1e5', 'NaN', '1,000.00', '12.', '.5', 'abc']) {
      expect(formatAmount(text)).toBe(text);
    }
  });
});

describe('amounts on a page', () => {
  it('carries the currency and the exact stored value', () => {
    expect(amountHtml('-1234.50', 'EUR').value).toBe(
      '<data class="amount" value="-1234.50">-1,234.50</data>&nbsp;<span class="currency">EUR</span>',
    );
  });

  it('sums per currency exactly, in the order the currencies occur', () => {
    const sums = sumsByCurrency([
      { amount: '0.10', currency: 'USD' },
      { amount: '0.1', currency: 'EUR' },
      { amount: '0.20', currency: 'USD' },
      { amount: '1234567890123456789.99', currency: 'EUR' },
    ]);
    expect([...sums].map(([c, d]) => [c, d === undefined ? undefined : toDecimalString(d)])).toEqual([
      ['USD', '0.30'],
      ['EUR', '1234567890123456790.09'],
    ]);
  });

  it('does not sum a currency one of whose amounts is not a decimal', () => {
    const sums = sumsByCurrency([
      { amount: '1.00', currency: 'EUR' },
      { amount: 'n/a', currency: 'EUR' },
      { amount: '2.00', currency: 'EUR' },
    ]);
    expect(sums.get('EUR')).toBeUndefined();
  });

  it('drops the sign of a magnitude', () => {
    expect([magnitudeOf('-12.50'), magnitudeOf('+3'), magnitudeOf('7')]).toEqual(['12.50', '3', '7']);
  });
});
