import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  abs,
  add,
  compare,
  DECIMAL_INTEGER_DIGITS_MAX,
  DECIMAL_SCALE_MAX,
  decimal,
  decimalFromValue,
  decimalTextFromValue,
  EXACT_UNITS_DIGITS_MAX,
  equals,
  isZero,
  negate,
  negateDecimalText,
  parseDecimal,
  sign,
  subtract,
  sum,
  toDecimalString,
} from '../../../src/lib/decimal.js';

const text = (value: string) => toDecimalString(decimal(value));

describe('decimal (src/lib/decimal.ts)', () => {
  it.each(['0', '-1', '+3', '1.50', '0.001', '123456789012345.67', '00012.5'])('parses %s', (value) => {
    expect(parseDecimal(value)).toBeDefined();
  });

  it.each(['', ' 1', '1 ', '12,5', '1e3', '.5', '5.', 'NaN', 'Infinity', '--1', '0x10', '1_000'])(
    'rejects %j',
    (value) => {
      expect(parseDecimal(value)).toBeUndefined();
    },
  );

  it('rejects more digits than its limits', () => {
    expect(parseDecimal('9'.repeat(DECIMAL_INTEGER_DIGITS_MAX))).toBeDefined();
    expect(parseDecimal('9'.repeat(DECIMAL_INTEGER_DIGITS_MAX + 1))).toBeUndefined();
    expect(parseDecimal(`0.${'1'.repeat(DECIMAL_SCALE_MAX)}`)).toBeDefined();
    expect(parseDecimal(`0.${'1'.repeat(DECIMAL_SCALE_MAX + 1)}`)).toBeUndefined();
    expect(() => decimal('1e3')).toThrow(RangeError);
  });

  it('keeps values exact and prints them without exponent, keeping the scale', () => {
    expect(text('123456789012345.67')).toBe('123456789012345.67');
    expect(toDecimalString(add(decimal('12.345'), decimal('1.5')))).toBe('13.845');
    expect(toDecimalString(add(decimal('0.1'), decimal('0.2')))).toBe('0.3');
    expect(toDecimalString(sum(['123456789012345.67', '0.01', '-0.68'].map(decimal)))).toBe(
      '123456789012345.00',
    );
    expect(text('1.50')).toBe('1.50');
    expect(text('0.0000001')).toBe('0.0000001');
    expect(text('1000000000000000000000000000')).toBe('1000000000000000000000000000');
    expect(toDecimalString(sum([]))).toBe('0');
  });

  it('negates, takes absolute values and signs; zero is never negative', () => {
    expect(toDecimalString(negate(decimal('100.00')))).toBe('-100.00');
    expect(toDecimalString(negate(decimal('0.00')))).toBe('0.00');
    expect(toDecimalString(abs(decimal('-7.25')))).toBe('7.25');
    expect([sign(decimal('-2')), sign(decimal('-0')), sign(decimal('3'))]).toEqual([-1, 0, 1]);
    expect(isZero(decimal('-0.000'))).toBe(true);
    expect(toDecimalString(subtract(decimal('1'), decimal('0.25')))).toBe('0.75');
  });

  it('compares by value, ignoring scale', () => {
    expect(compare(decimal('1.50'), decimal('1.5'))).toBe(0);
    expect(equals(decimal('1.50'), decimal('1.5'))).toBe(true);
    expect(compare(decimal('-1'), decimal('0.5'))).toBe(-1);
    expect(compare(decimal('10'), decimal('9.999'))).toBe(1);
  });

  it('reads record values: strings and safe integers, nothing else', () => {
    expect(decimalFromValue('12.50')?.scale).toBe(2);
    expect(decimalFromValue(42)).toBeDefined();
    expect(decimalFromValue(0.1)).toBeUndefined();
    expect(decimalFromValue(2 ** 60)).toBeUndefined();
    expect(decimalFromValue(null)).toBeUndefined();
    expect(decimalFromValue(undefined)).toBeUndefined();
  });

  it('reads a value as text exactly as it parses and prints it, with integer units when they are exact', () => {
    const plain = fc
      .tuple(
        fc.constantFrom('', '+', '-'),
        fc.stringMatching(/^\d{1,30}$/),
        fc.option(fc.stringMatching(/^\d{1,20}$/), { nil: undefined }),
      )
      .map(
        ([signText, whole, fraction]) => `${signText}${whole}${fraction === undefined ? '' : `.${fraction}`}`,
      );
    const values = fc.oneof(
      plain,
      fc.string(),
      fc.integer(),
      fc.double(),
      fc.constantFrom(2 ** 60, -0, null, undefined, '-0.00', '+0', '1e3', '.5'),
    );
    fc.assert(
      fc.property(values, (value) => {
        const parsed = decimalFromValue(value);
        const read = decimalTextFromValue(value);
        if (parsed === undefined) {
          expect(read).toBeUndefined();
          return;
        }
        expect(read).toMatchObject({
          sign: sign(parsed),
          scale: parsed.scale,
          text: toDecimalString(parsed),
        });
        const digits =
          read?.text
            .replace(/^-/, '')
            .replace('.', '')
            .replace(/^0+(?=\d)/, '') ?? '';
        if (digits.length <= EXACT_UNITS_DIGITS_MAX) {
          expect(read?.units).toBe(Number(toDecimalString(parsed).replace('.', '')));
        } else {
          expect(read?.units).toBeNaN();
        }
        const negated = read === undefined ? undefined : negateDecimalText(read);
        expect(negated).toMatchObject({ sign: sign(negate(parsed)), text: toDecimalString(negate(parsed)) });
      }),
    );
  });
});
