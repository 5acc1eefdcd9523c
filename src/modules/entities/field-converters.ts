import { DECIMAL_INTEGER_DIGITS_MAX, DECIMAL_SCALE_MAX } from '../../lib/decimal.js';
import { isStorableText, unstorableCharacterOf } from '../../lib/storable-text.js';
import type { FieldType } from './entity.js';
import type { FieldError, FieldErrorCode } from './field-error.js';

/**
 * One converter per field type (docs/reference.md, Attribute types of entities). A converter is two
 * closures: the hot `convert`, which returns the converted value or {@link INVALID} and allocates
 * nothing but its result, and the cold `explain`, which is only called for a value `convert`
 * refused and appends the errors that say why. Splitting them keeps message building off the path
 * that every valid record takes.
 */

/** Returned by `convert` for a value that is not valid for the field type. */
export const INVALID: unique symbol = Symbol('invalid');

/** Converts one value of a field type; see the module comment. */
export interface FieldConverter {
  convert: (value: unknown) => unknown;
  explain: (field: string, value: unknown, errors: FieldError[]) => void;
}

/** Significant digits that a double holds exactly as written (docs/reference.md, Conventions). */
export const DECIMAL_NUMBER_SIGNIFICANT_DIGITS_MAX = 15;

/** Element errors reported per LIST field before the rest are summed up in one error. */
export const LIST_ELEMENT_ERRORS_MAX = 20;

/** Characters of an offending value quoted in a message. */
export const VALUE_PREVIEW_LENGTH_MAX_CHARS = 40;

const EXPECTED: Record<FieldType, string> = {
  TEXT: 'a JSON string',
  DATE: 'a calendar date written "YYYY-MM-DD", such as "2026-01-31"',
  DATETIME:
    'an RFC 3339 date-time with an offset, such as "2026-01-31T10:15:00Z" or "2026-01-31T10:15:00.5+01:00"',
  INTEGER: 'a whole number within ±9007199254740991, as a JSON number or a string such as "42" or "-7"',
  DECIMAL:
    'an exact decimal such as "1234.50" (a string of digits with an optional minus and an optional "." fraction, ' +
    'no exponent, no thousands separator) or a JSON number of at most 15 significant digits',
  BOOLEAN: 'true or false (a JSON boolean, or the string "true" or "false")',
  UUID: 'a UUID such as "3f2b8c1e-7d4a-4f6b-9c2e-1a5d8e0f7b3c"',
  LIST: 'a JSON array',
};

/**
 * How messages describe the accepted form of a field type, for example `a calendar date written
 * "YYYY-MM-DD"`; a LIST names its element form too. Pure; never throws.
 */
export function expectedFormOf(type: FieldType, elementType: FieldType = 'TEXT'): string {
  return type === 'LIST' ? `a JSON array whose elements are each ${EXPECTED[elementType]}` : EXPECTED[type];
}

/**
 * A short rendering of an offending value for a message: JSON for scalars, cut after
 * {@link VALUE_PREVIEW_LENGTH_MAX_CHARS} characters, and `an array` or `an object` for
 * structures, so that a message never grows with the record. Pure; never throws.
 */
export function previewOf(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return 'an object';
  if (typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint')
    return `a ${typeof value}`;
  const text = JSON.stringify(value) ?? String(value);
  return text.length <= VALUE_PREVIEW_LENGTH_MAX_CHARS
    ? text
    : `${text.slice(0, VALUE_PREVIEW_LENGTH_MAX_CHARS)}… (${text.length} characters)`;
}

function push(errors: FieldError[], field: string, code: FieldErrorCode, message: string): void {
  errors.push({ field, code, message });
}

function mismatch(type: FieldType, code: FieldErrorCode): FieldConverter['explain'] {
  return (field, value, errors) =>
    push(errors, field, code, `Field "${field}" must be ${EXPECTED[type]}; got ${previewOf(value)}.`);
}

// ---------------------------------------------------------------- calendar

const CHAR_0 = 48;
const CHAR_9 = 57;

/** Two decimal digits at `at` as a number, or -1. */
function twoDigits(text: string, at: number): number {
  const high = text.charCodeAt(at) - CHAR_0;
  const low = text.charCodeAt(at + 1) - CHAR_0;
  return high >= 0 && high <= 9 && low >= 0 && low <= 9 ? high * 10 + low : -1;
}

function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Whether `text` from `at` holds `YYYY-MM-DD` naming a real day (proleptic Gregorian). */
function isCalendarDateAt(text: string, at: number): boolean {
  const century = twoDigits(text, at);
  const yearOfCentury = twoDigits(text, at + 2);
  const month = twoDigits(text, at + 5);
  const day = twoDigits(text, at + 8);
  if (century < 0 || yearOfCentury < 0 || month < 1 || month > 12 || day < 1) return false;
  if (text.charCodeAt(at + 4) !== 45 || text.charCodeAt(at + 7) !== 45) return false; // '-'
  const year = century * 100 + yearOfCentury;
  const monthDays = month === 2 && isLeapYear(year) ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0);
  return day <= monthDays;
}

/** `YYYY-MM-DD`, a real calendar day (RFC 3339 `full-date`). */
export function isCalendarDate(text: string): boolean {
  return text.length === 10 && isCalendarDateAt(text, 0);
}

const MINUTES_PER_DAY = 1440;
const LAST_MINUTE_OF_DAY = MINUTES_PER_DAY - 1;

/**
 * RFC 3339 section 5.6 `date-time`: full-date, `T`, `HH:MM:SS`, an optional fraction and a
 * mandatory offset (`Z` or `±HH:MM`); `T` and `Z` in either case. A leap second (`:60`) is
 * accepted only where one can occur, at 23:59 UTC (RFC 3339 section 5.7).
 */
export function isRfc3339DateTime(text: string): boolean {
  if (text.length < 20 || !isCalendarDateAt(text, 0)) return false;
  const separator = text.charCodeAt(10);
  if (separator !== 84 && separator !== 116) return false; // 'T' | 't'
  const hour = twoDigits(text, 11);
  const minute = twoDigits(text, 14);
  const second = twoDigits(text, 17);
  if (text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) return false; // ':'
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60) return false;
  let at = 19;
  if (text.charCodeAt(at) === 46) {
    // '.' then at least one digit
    at += 1;
    const fractionStart = at;
    while (at < text.length && isDigit(text.charCodeAt(at))) at += 1;
    if (at === fractionStart) return false;
  }
  let offsetMinutes = 0;
  const zone = text.charCodeAt(at);
  if (zone === 90 || zone === 122) {
    // 'Z' | 'z'
    if (at + 1 !== text.length) return false;
  } else if (zone === 43 || zone === 45) {
    // '+' | '-'
    if (at + 6 !== text.length || text.charCodeAt(at + 3) !== 58) return false;
    const offsetHour = twoDigits(text, at + 1);
    const offsetMinute = twoDigits(text, at + 4);
    if (offsetHour < 0 || offsetHour > 23 || offsetMinute < 0 || offsetMinute > 59) return false;
    offsetMinutes = (zone === 43 ? 1 : -1) * (offsetHour * 60 + offsetMinute);
  } else {
    return false;
  }
  if (second === 60) {
    const utcMinute =
      (((hour * 60 + minute - offsetMinutes) % MINUTES_PER_DAY) + MINUTES_PER_DAY) % MINUTES_PER_DAY;
    return utcMinute === LAST_MINUTE_OF_DAY;
  }
  return true;
}

// ---------------------------------------------------------------- numbers

const INTEGER_TEXT = /^-?\d+$/;
/** Integers below this magnitude have at most 15 digits, so `String` is already their answer. */
const PLAIN_INTEGER_NUMBER_LIMIT = 1e15;

/** A finite number as a plain decimal string (no exponent), e.g. 1e21 -> "1000000000000000000000". */
function plainDecimalOf(value: number): string {
  const text = String(value);
  const exponentAt = text.indexOf('e');
  if (exponentAt < 0) return text;
  const negative = text.charCodeAt(0) === 45;
  const mantissa = text.slice(negative ? 1 : 0, exponentAt);
  const exponent = Number(text.slice(exponentAt + 1));
  const pointAt = mantissa.indexOf('.');
  const digits = pointAt < 0 ? mantissa : mantissa.slice(0, pointAt) + mantissa.slice(pointAt + 1);
  const integerDigits = (pointAt < 0 ? mantissa.length : pointAt) + exponent;
  let plain: string;
  if (integerDigits <= 0) plain = `0.${'0'.repeat(-integerDigits)}${digits}`;
  else if (integerDigits >= digits.length) plain = digits + '0'.repeat(integerDigits - digits.length);
  else plain = `${digits.slice(0, integerDigits)}.${digits.slice(integerDigits)}`;
  return negative ? `-${plain}` : plain;
}

/** Significant digits of a plain decimal string: leading and trailing zeros do not count. */
function significantDigitsOf(plain: string): number {
  let first = 0;
  let last = plain.length - 1;
  while (first <= last && !isNonZeroDigit(plain.charCodeAt(first))) first += 1;
  while (last >= first && !isNonZeroDigit(plain.charCodeAt(last))) last -= 1;
  if (first > last) return 0;
  const pointAt = plain.indexOf('.', first);
  return last - first + 1 - (pointAt >= 0 && pointAt < last ? 1 : 0);
}

function isNonZeroDigit(code: number): boolean {
  return code > CHAR_0 && code <= CHAR_9;
}

/**
 * The canonical decimal string of a JSON number, or `undefined` when the number has more than
 * {@link DECIMAL_NUMBER_SIGNIFICANT_DIGITS_MAX} significant digits (its shortest round-trip form
 * has them, so the sender wrote at least as many, and a double cannot hold them as written, so it
 * is refused with a message asking for a string) or is not finite.
 */
export function decimalOfNumber(value: number): string | undefined {
  if (Number.isInteger(value) && value < PLAIN_INTEGER_NUMBER_LIMIT && value > -PLAIN_INTEGER_NUMBER_LIMIT) {
    return String(value); // at most 15 digits; String(-0) is "0"
  }
  if (!Number.isFinite(value)) return undefined;
  const plain = plainDecimalOf(value);
  return significantDigitsOf(plain) > DECIMAL_NUMBER_SIGNIFICANT_DIGITS_MAX ? undefined : plain;
}

/** Whether `code` is an ASCII digit. */
function isDigit(code: number): boolean {
  return code >= CHAR_0 && code <= CHAR_9;
}

/**
 * Why a string is not an exact decimal (`-?digits(.digits)?`) that the accounting engine can carry
 * (at most {@link DECIMAL_INTEGER_DIGITS_MAX} digits before the point, leading zeros aside, and
 * {@link DECIMAL_SCALE_MAX} after it: src/lib/decimal.ts), or `undefined` when it is one. A
 * character loop rather than a regular expression with groups, because it runs for every decimal of
 * every record.
 */
function decimalStringProblem(text: string): 'invalid-decimal' | 'decimal-precision' | undefined {
  const length = text.length;
  let at = text.charCodeAt(0) === 45 ? 1 : 0; // '-'
  const integerStart = at;
  while (at < length && isDigit(text.charCodeAt(at))) at += 1;
  const integerEnd = at;
  if (integerEnd === integerStart) return 'invalid-decimal';
  let fractionDigits = 0;
  if (at < length) {
    if (text.charCodeAt(at) !== 46) return 'invalid-decimal'; // '.'
    at += 1;
    const fractionStart = at;
    while (at < length && isDigit(text.charCodeAt(at))) at += 1;
    if (at === fractionStart || at !== length) return 'invalid-decimal';
    fractionDigits = at - fractionStart;
  }
  let significantStart = integerStart;
  while (significantStart < integerEnd - 1 && text.charCodeAt(significantStart) === CHAR_0)
    significantStart += 1;
  const integerDigits = integerEnd - significantStart;
  return integerDigits > DECIMAL_INTEGER_DIGITS_MAX || fractionDigits > DECIMAL_SCALE_MAX
    ? 'decimal-precision'
    : undefined;
}

/** The canonical decimal string of a JSON number within every limit, or `undefined`. */
function decimalOfNumberWithinLimits(value: number): string | undefined {
  const plain = decimalOfNumber(value);
  return plain !== undefined && decimalStringProblem(plain) === undefined ? plain : undefined;
}

const DECIMAL_LIMITS =
  `at most ${DECIMAL_INTEGER_DIGITS_MAX} digits before the decimal point and ` +
  `${DECIMAL_SCALE_MAX} after it`;

// ---------------------------------------------------------------- converters

/**
 * The message of a text the stores cannot keep as sent (src/lib/storable-text.ts): `what` names
 * it, such as `Field "memo"`.
 */
export function unstorableTextMessage(what: string, value: string): string {
  return (
    `${what} holds ${unstorableCharacterOf(value) ?? 'a character that cannot be stored'}, ` +
    'which cannot be stored; text must not contain NUL characters or unpaired UTF-16 surrogates.'
  );
}

// Only TEXT needs the storable check: every other type that takes a string admits only ASCII
// digits, letters and punctuation.
const text: FieldConverter = {
  convert: (value) => (typeof value === 'string' && isStorableText(value) ? value : INVALID),
  explain: (field, value, errors) => {
    if (typeof value !== 'string') return mismatch('TEXT', 'invalid-type')(field, value, errors);
    push(errors, field, 'invalid-text', unstorableTextMessage(`Field "${field}"`, value));
  },
};

const date: FieldConverter = {
  convert: (value) => (typeof value === 'string' && isCalendarDate(value) ? value : INVALID),
  explain: (field, value, errors) => {
    if (typeof value !== 'string') return mismatch('DATE', 'invalid-type')(field, value, errors);
    push(
      errors,
      field,
      'invalid-date',
      `Field "${field}" must be ${EXPECTED.DATE}, a day that exists in the calendar; got ${previewOf(value)}.`,
    );
  },
};

const LOWER_CASE_T_OR_Z = /[tz]/;

const dateTime: FieldConverter = {
  // Kept as sent, except that a lower-case `t` or `z` (RFC 3339 allows them) is upper-cased.
  convert: (value) => {
    if (typeof value !== 'string' || !isRfc3339DateTime(value)) return INVALID;
    return LOWER_CASE_T_OR_Z.test(value) ? value.toUpperCase() : value;
  },
  explain: (field, value, errors) => {
    if (typeof value !== 'string') return mismatch('DATETIME', 'invalid-type')(field, value, errors);
    mismatch('DATETIME', 'invalid-datetime')(field, value, errors);
  },
};

const integer: FieldConverter = {
  convert: (value) => {
    if (typeof value === 'number') return Number.isSafeInteger(value) ? value + 0 : INVALID; // -0 -> 0
    if (typeof value !== 'string' || !INTEGER_TEXT.test(value)) return INVALID;
    const parsed = Number(value);
    return Number.isSafeInteger(parsed) ? parsed + 0 : INVALID;
  },
  explain: (field, value, errors) => {
    if (typeof value !== 'number' && typeof value !== 'string') {
      return mismatch('INTEGER', 'invalid-type')(field, value, errors);
    }
    mismatch('INTEGER', 'invalid-integer')(field, value, errors);
  },
};

const decimal: FieldConverter = {
  // A string keeps its digits as sent (money is exact); a number becomes its plain form.
  convert: (value) => {
    if (typeof value === 'string') return decimalStringProblem(value) === undefined ? value : INVALID;
    if (typeof value === 'number') return decimalOfNumberWithinLimits(value) ?? INVALID;
    return INVALID;
  },
  explain: (field, value, errors) => {
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return mismatch('DECIMAL', 'invalid-decimal')(field, value, errors);
      if (decimalOfNumber(value) === undefined) {
        return push(
          errors,
          field,
          'decimal-precision',
          `Field "${field}" is a JSON number with more than ${DECIMAL_NUMBER_SIGNIFICANT_DIGITS_MAX} significant ` +
            `digits, which a binary float cannot carry exactly; send it as a string, such as "123456789012345.67".`,
        );
      }
      return push(
        errors,
        field,
        'decimal-precision',
        `Field "${field}" must have ${DECIMAL_LIMITS}; got ${previewOf(value)}.`,
      );
    }
    if (typeof value !== 'string') return mismatch('DECIMAL', 'invalid-type')(field, value, errors);
    if (decimalStringProblem(value) === 'decimal-precision') {
      return push(
        errors,
        field,
        'decimal-precision',
        `Field "${field}" must have ${DECIMAL_LIMITS}; got ${previewOf(value)}.`,
      );
    }
    mismatch('DECIMAL', 'invalid-decimal')(field, value, errors);
  },
};

const boolean: FieldConverter = {
  // The strings "true" and "false" are accepted (exactly so) because CSV and other text
  // sources have no boolean type, as INTEGER and DECIMAL accept strings for the same reason.
  convert: (value) => {
    if (typeof value === 'boolean') return value;
    if (value === 'true') return true;
    if (value === 'false') return false;
    return INVALID;
  },
  explain: (field, value, errors) => {
    if (typeof value !== 'string') return mismatch('BOOLEAN', 'invalid-type')(field, value, errors);
    mismatch('BOOLEAN', 'invalid-boolean')(field, value, errors);
  },
};

const UUID_LENGTH_CHARS = 36;

/**
 * Whether `text` is a UUID in the RFC 4122 section 3 textual form (8-4-4-4-12 hex digits, any
 * version and variant, either case): 0 when not, 1 when lower case, 2 when it has upper case.
 * A character loop, because it runs for every UUID of every record.
 */
function uuidForm(text: string): 0 | 1 | 2 {
  if (text.length !== UUID_LENGTH_CHARS) return 0;
  let upper = false;
  for (let at = 0; at < UUID_LENGTH_CHARS; at += 1) {
    const code = text.charCodeAt(at);
    if (at === 8 || at === 13 || at === 18 || at === 23) {
      if (code !== 45) return 0; // '-'
    } else if (code >= 65 && code <= 70) {
      upper = true; // 'A'..'F'
    } else if (!isDigit(code) && (code < 97 || code > 102)) {
      return 0; // not 'a'..'f'
    }
  }
  return upper ? 2 : 1;
}

const uuid: FieldConverter = {
  convert: (value) => {
    if (typeof value !== 'string') return INVALID;
    const form = uuidForm(value);
    return form === 1 ? value : form === 2 ? value.toLowerCase() : INVALID;
  },
  explain: (field, value, errors) => {
    if (typeof value !== 'string') return mismatch('UUID', 'invalid-type')(field, value, errors);
    mismatch('UUID', 'invalid-uuid')(field, value, errors);
  },
};

function list(element: FieldConverter, elementType: FieldType): FieldConverter {
  const expected = expectedFormOf('LIST', elementType);
  return {
    convert: (value) => {
      if (!Array.isArray(value)) return INVALID;
      const converted: unknown[] = new Array(value.length);
      for (let index = 0; index < value.length; index += 1) {
        const item = element.convert(value[index]);
        if (item === INVALID) return INVALID;
        converted[index] = item;
      }
      return converted;
    },
    explain: (field, value, errors) => {
      if (!Array.isArray(value)) {
        return push(
          errors,
          field,
          'invalid-type',
          `Field "${field}" must be ${expected}; got ${previewOf(value)}.`,
        );
      }
      let failed = 0;
      for (let index = 0; index < value.length; index += 1) {
        const item: unknown = value[index];
        if (element.convert(item) !== INVALID) continue;
        failed += 1;
        if (failed <= LIST_ELEMENT_ERRORS_MAX) element.explain(`${field}[${index}]`, item, errors);
      }
      if (failed > LIST_ELEMENT_ERRORS_MAX) {
        push(
          errors,
          field,
          'too-many-errors',
          `Field "${field}" has ${failed} invalid elements; only the first ${LIST_ELEMENT_ERRORS_MAX} are listed.`,
        );
      }
    },
  };
}

const SCALARS: Record<Exclude<FieldType, 'LIST'>, FieldConverter> = {
  TEXT: text,
  DATE: date,
  DATETIME: dateTime,
  INTEGER: integer,
  DECIMAL: decimal,
  BOOLEAN: boolean,
  UUID: uuid,
};

/**
 * The converter of a field type. A LIST converts every element with the converter of `elementType`
 * (default TEXT); a LIST of LIST is a list of lists of TEXT. Pure and cheap; the record validator
 * calls it once per attribute when it compiles an entity.
 */
export function converterOf(type: FieldType, elementType: FieldType = 'TEXT'): FieldConverter {
  if (type !== 'LIST') return SCALARS[type];
  return list(converterOf(elementType), elementType);
}
