/**
 * Exact decimal arithmetic for money: decimals are exact and never carried as binary floats
 * (docs/reference.md, Conventions). A thin layer over `decimal.js` that adds what money needs and
 * the library lacks: a strict parser (plain decimal notation only), and a *scale* (digits after the
 * point) carried with every value so that results print the way an accountant wrote them:
 * `"100.00"` negated is `"-100.00"`, and `"12.345" + "1.5"` is `"13.845"` (the scale of a sum is
 * the larger scale of its operands). Values are immutable.
 */

import type { Decimal as DecimalJs } from 'decimal.js';
import decimalJs from 'decimal.js';

/**
 * Significant digits of every intermediate result. Inputs are bounded by
 * {@link DECIMAL_INTEGER_DIGITS_MAX} and {@link DECIMAL_SCALE_MAX}, so sums of up to 10^12 of
 * them stay far below this and are therefore exact; the library would round beyond it.
 */
export const DECIMAL_PRECISION_DIGITS = 60;

/** Digits before the point that {@link parseDecimal} accepts. */
export const DECIMAL_INTEGER_DIGITS_MAX = 28;

/** Digits after the point that {@link parseDecimal} accepts. */
export const DECIMAL_SCALE_MAX = 18;

type DecimalJsConstructor = typeof DecimalJs;

// `decimal.js` ships CommonJS typings for an ES module whose default export is the class itself;
// under NodeNext the typings describe the default import as the module object instead. Take the
// class from wherever the running module put it.
const interop = decimalJs as unknown as DecimalJsConstructor & { Decimal?: DecimalJsConstructor };
const Exact: DecimalJsConstructor = (interop.Decimal ?? interop).clone({
  precision: DECIMAL_PRECISION_DIGITS,
  rounding: 6, // ROUND_HALF_EVEN; never reached for inputs within the limits above.
  toExpNeg: -9e15,
  toExpPos: 9e15,
});

/** An exact decimal with the scale it prints with. */
export interface Decimal {
  readonly value: DecimalJs;
  /** Digits after the point when printed, 0..DECIMAL_SCALE_MAX (or more after a sum). */
  readonly scale: number;
}

const DECIMAL_PATTERN = /^([+-]?)(\d+)(?:\.(\d+))?$/;

/** Zero with scale 0. */
export const ZERO: Decimal = Object.freeze({ value: new Exact(0), scale: 0 });

/**
 * Parses plain decimal notation (`-12.50`, `+3`, `0.001`) into an exact decimal, or returns
 * `undefined` when the text is anything else: exponents, `NaN`, `Infinity`, blanks, commas,
 * a bare point, or more digits than {@link DECIMAL_INTEGER_DIGITS_MAX} before /
 * {@link DECIMAL_SCALE_MAX} after the point. It never throws; the caller names the field at fault.
 */
export function parseDecimal(text: string): Decimal | undefined {
  const parts = plainParts(text);
  return parts === undefined ? undefined : { value: new Exact(text), scale: parts.fraction.length };
}

/** The parts of plain decimal notation within the limits; leading zeros are dropped. */
function plainParts(
  text: string,
): { negative: boolean; integerDigits: string; fraction: string } | undefined {
  const match = DECIMAL_PATTERN.exec(text);
  if (match === null) return undefined;
  const integerDigits = (match[2] ?? '').replace(/^0+(?=\d)/, '');
  const fraction = match[3] ?? '';
  if (integerDigits.length > DECIMAL_INTEGER_DIGITS_MAX || fraction.length > DECIMAL_SCALE_MAX) {
    return undefined;
  }
  return { negative: match[1] === '-', integerDigits, fraction };
}

/**
 * Digits of an integer that a binary float always holds exactly: 10^15 is below 2^53, so any
 * sum of two such integers is exact too, and `Number.isSafeInteger` tells when a longer sum is
 * not.
 */
export const EXACT_UNITS_DIGITS_MAX = 15;

/**
 * A decimal read as text, without a `decimal.js` value: what a hot path that only prints, signs
 * and balances amounts needs. Exact: `units` is an integer, never a fraction.
 */
export interface DecimalText {
  sign: -1 | 0 | 1;
  /** Digits after the point. */
  scale: number;
  /** What {@link toDecimalString} prints for the value: plain, `scale` digits, never `-0`. */
  text: string;
  /**
   * The value times 10^scale when it has at most {@link EXACT_UNITS_DIGITS_MAX} digits, so that
   * it is a safe integer; `NaN` otherwise (use {@link parseDecimal} for those).
   */
  units: number;
}

/** `-a` as text: the same scale, and zero stays unsigned. */
export function negateDecimalText(a: DecimalText): DecimalText {
  if (a.sign === 0) return a;
  return {
    sign: a.sign === 1 ? -1 : 1,
    scale: a.scale,
    text: a.sign === 1 ? `-${a.text}` : a.text.slice(1),
    units: -a.units,
  };
}

/**
 * Reads a validated record value as {@link decimalFromValue} does (plain notation within the
 * limits, or a safe integer number), as text and integer units. Returns `undefined` exactly when
 * `decimalFromValue` does.
 */
export function decimalTextFromValue(value: unknown): DecimalText | undefined {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) text = String(value);
  else return undefined;
  const parts = plainParts(text);
  if (parts === undefined) return undefined;
  const { integerDigits, fraction } = parts;
  const digits = integerDigits + fraction;
  const magnitude = digits.length <= EXACT_UNITS_DIGITS_MAX ? Number(digits) : Number.NaN;
  const zero = Number.isNaN(magnitude) ? !/[1-9]/.test(digits) : magnitude === 0;
  const negative = parts.negative && !zero;
  return {
    sign: zero ? 0 : negative ? -1 : 1,
    scale: fraction.length,
    text: `${negative ? '-' : ''}${integerDigits}${fraction === '' ? '' : `.${fraction}`}`,
    units: negative ? -magnitude : magnitude,
  };
}

/**
 * Reads a decimal from a validated record value: a string in plain decimal notation, or a
 * JavaScript number that is a safe integer (a number with a fraction may already have lost
 * exactness, so it is refused; senders are asked to use strings). Returns `undefined` for anything
 * else, including `null` and missing values.
 */
export function decimalFromValue(value: unknown): Decimal | undefined {
  if (typeof value === 'string') return parseDecimal(value);
  if (typeof value === 'number' && Number.isSafeInteger(value)) return parseDecimal(String(value));
  return undefined;
}

/**
 * Parses like {@link parseDecimal} but throws a `RangeError` naming the text when it is not a
 * decimal. Meant for literals in code and tests, never for input.
 */
export function decimal(text: string): Decimal {
  const parsed = parseDecimal(text);
  if (parsed === undefined)
    throw new RangeError(`not a plain decimal within limits: ${JSON.stringify(text)}`);
  return parsed;
}

/** The exact sum `a + b`, with the larger of the two scales. */
export function add(a: Decimal, b: Decimal): Decimal {
  return { value: a.value.plus(b.value), scale: Math.max(a.scale, b.scale) };
}

/** The exact difference `a - b`, with the larger of the two scales. */
export function subtract(a: Decimal, b: Decimal): Decimal {
  return { value: a.value.minus(b.value), scale: Math.max(a.scale, b.scale) };
}

/** `-a` with the same scale (the negation of zero is zero). */
export function negate(a: Decimal): Decimal {
  return { value: a.value.negated(), scale: a.scale };
}

/** `|a|` with the same scale. */
export function abs(a: Decimal): Decimal {
  return a.value.isNegative() ? negate(a) : a;
}

/** -1, 0 or 1; a negative zero is 0. */
export function sign(a: Decimal): -1 | 0 | 1 {
  if (a.value.isZero()) return 0;
  return a.value.isNegative() ? -1 : 1;
}

/** -1, 0 or 1 as `a` is less than, equal to or greater than `b` by value (scale is ignored). */
export function compare(a: Decimal, b: Decimal): -1 | 0 | 1 {
  const order = a.value.comparedTo(b.value);
  return order < 0 ? -1 : order > 0 ? 1 : 0;
}

/** Whether `a` and `b` have the same value (`"1.50"` equals `"1.5"`). */
export function equals(a: Decimal, b: Decimal): boolean {
  return a.value.equals(b.value);
}

/** Whether `a` is zero (`"0.00"`, `"-0"`). */
export function isZero(a: Decimal): boolean {
  return a.value.isZero();
}

/** The exact sum of all values (zero with scale 0 for none), with the largest scale among them. */
export function sum(values: Iterable<Decimal>): Decimal {
  let total = ZERO;
  for (const value of values) total = add(total, value);
  return total;
}

/**
 * Plain notation with exactly `scale` digits after the point: never an exponent, never `-0`.
 * `toDecimalString(decimal("123456789012345.67"))` is `"123456789012345.67"`.
 */
export function toDecimalString(a: Decimal): string {
  return a.value.toFixed(a.scale);
}
