import { describe, expect, it } from 'vitest';
import { DECIMAL_INTEGER_DIGITS_MAX, DECIMAL_SCALE_MAX } from '../../../src/lib/decimal.js';
import type { EntityAttribute, EntityDefinition, FieldType } from '../../../src/modules/entities/entity.js';
import { normalizeFieldType } from '../../../src/modules/entities/entity.js';
import {
  decimalOfNumber,
  isCalendarDate,
  isRfc3339DateTime,
  LIST_ELEMENT_ERRORS_MAX,
} from '../../../src/modules/entities/field-converters.js';
import type { FieldError } from '../../../src/modules/entities/field-error.js';
import {
  compileRecordValidator,
  type RecordValidation,
  validateChunk,
} from '../../../src/modules/entities/record-validator.js';

function entityOf(attributes: Partial<EntityAttribute>[]): EntityDefinition {
  return {
    namespace: 'test',
    name: 'thing',
    description: '',
    temporalityType: 'Transaction',
    type: 'DefinedEntity',
    kind: 'user',
    attributes: attributes.map((attribute, index) => ({
      name: `f${index}`,
      label: `F${index}`,
      mandatory: false,
      type: 'TEXT',
      ...attribute,
    })),
  };
}

/** Validates `{ value: input }` against one attribute `value` of the given type. */
function one(type: FieldType, input: unknown, extra: Partial<EntityAttribute> = {}): RecordValidation {
  const validator = compileRecordValidator(entityOf([{ name: 'value', type, ...extra }]));
  return validator.validate({ value: input });
}

function converted(type: FieldType, input: unknown, extra: Partial<EntityAttribute> = {}): unknown {
  const result = one(type, input, extra);
  if (!result.ok)
    throw new Error(`expected ${JSON.stringify(input)} to pass: ${JSON.stringify(result.errors)}`);
  return result.value.value;
}

function errorsOf(result: RecordValidation): FieldError[] {
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result.value)}`);
  return result.errors;
}

function codes(result: RecordValidation): string[] {
  return errorsOf(result).map((error) => `${error.field}:${error.code}`);
}

describe('normalizeFieldType', () => {
  it('maps the lower-case, upper-case and typeName spellings', () => {
    expect(normalizeFieldType('text')).toBe('TEXT');
    expect(normalizeFieldType('date')).toBe('DATE');
    expect(normalizeFieldType('DATETIME')).toBe('DATETIME');
    expect(normalizeFieldType('decimal')).toBe('DECIMAL');
    expect(normalizeFieldType('amount')).toBe('DECIMAL');
    expect(normalizeFieldType('AMOUNT')).toBe('DECIMAL');
    expect(normalizeFieldType('integer')).toBe('INTEGER');
    expect(normalizeFieldType('uuid')).toBe('UUID');
    expect(normalizeFieldType('BOOLEAN')).toBe('BOOLEAN');
    expect(normalizeFieldType('ListType')).toBe('LIST');
    expect(normalizeFieldType('money')).toBeUndefined();
  });
});

describe('TEXT', () => {
  it('accepts a JSON string as it is', () => {
    expect(converted('TEXT', 'hello')).toBe('hello');
    expect(converted('TEXT', '')).toBe('');
  });
  it('rejects other JSON types with invalid-type', () => {
    expect(codes(one('TEXT', 12))).toEqual(['value:invalid-type']);
    expect(codes(one('TEXT', { a: 1 }))).toEqual(['value:invalid-type']);
  });
  it('rejects text no store keeps as sent (a NUL, a lone surrogate) with invalid-text, and keeps pairs', () => {
    for (const text of ['a\u0000b', '\u0000', 'x\ud800', '\udc00x', '\ud83d\ude00\ud83d', 'a\ude00\ud83d']) {
      expect(codes(one('TEXT', text)), JSON.stringify(text)).toEqual(['value:invalid-text']);
    }
    expect(errorsOf(one('TEXT', 'a\u0000'))[0]?.message).toBe(
      'Field "value" holds a NUL character (U+0000), which cannot be stored; text must not contain NUL ' +
        'characters or unpaired UTF-16 surrogates.',
    );
    expect(converted('TEXT', 'maison \u{1F3E0} \u00e9')).toBe('maison \u{1F3E0} \u00e9');
  });
  it('names the element of a nested list and a member name that holds such text', () => {
    expect(codes(one('LIST', [['ok'], ['ok', 'no\u0000']], { elementType: 'LIST' }))).toEqual([
      'value[1][1]:invalid-text',
    ]);
    const validator = compileRecordValidator(entityOf([{ name: 'value', type: 'TEXT' }]));
    expect(codes(validator.validate({ value: 'v', 'k\u0000': 1, 'k\ud800': 2, other: 3 }))).toEqual([
      'k\u0000:invalid-text',
      'k\ud800:invalid-text',
      'other:unknown-field',
    ]);
  });
});

describe('DATE', () => {
  it('accepts a real calendar day', () => {
    expect(converted('DATE', '2026-01-31')).toBe('2026-01-31');
    expect(converted('DATE', '2024-02-29')).toBe('2024-02-29');
    expect(converted('DATE', '2000-02-29')).toBe('2000-02-29');
  });
  it('rejects days that do not exist and other forms with invalid-date', () => {
    for (const bad of [
      '2026-02-30',
      '2026-02-29',
      '1900-02-29',
      '2026-04-31',
      '2026-13-01',
      '2026-00-10',
      '2026-1-5',
      '31.01.2026',
      '2026-01-31T00:00:00Z',
    ]) {
      expect(codes(one('DATE', bad)), bad).toEqual(['value:invalid-date']);
    }
    expect(isCalendarDate('2026-12-31')).toBe(true);
  });
  it('rejects a number with invalid-type', () => {
    expect(codes(one('DATE', 20260131))).toEqual(['value:invalid-type']);
  });
});

describe('DATETIME', () => {
  it('accepts RFC 3339 with an offset and upper-cases t and z', () => {
    expect(converted('DATETIME', '2026-01-31T10:15:00Z')).toBe('2026-01-31T10:15:00Z');
    expect(converted('DATETIME', '2026-01-31T10:15:00.123456+01:00')).toBe(
      '2026-01-31T10:15:00.123456+01:00',
    );
    expect(converted('DATETIME', '2026-01-31t10:15:00z')).toBe('2026-01-31T10:15:00Z');
  });
  it('accepts a leap second only at 23:59 UTC', () => {
    expect(isRfc3339DateTime('2016-12-31T23:59:60Z')).toBe(true);
    expect(isRfc3339DateTime('2017-01-01T00:59:60+01:00')).toBe(true);
    expect(isRfc3339DateTime('2016-12-31T12:59:60Z')).toBe(false);
  });
  it('rejects a missing offset, a bad day or time with invalid-datetime', () => {
    for (const bad of [
      '2026-01-31T10:15:00',
      '2026-02-30T10:15:00Z',
      '2026-01-31T24:00:00Z',
      '2026-01-31 10:15:00Z',
      '2026-01-31T10:15:00.Z',
      '2026-01-31T10:15:00+0100',
    ]) {
      expect(codes(one('DATETIME', bad)), bad).toEqual(['value:invalid-datetime']);
    }
    expect(codes(one('DATETIME', 1767225600))).toEqual(['value:invalid-type']);
  });
});

describe('INTEGER', () => {
  it('accepts a safe JSON integer and converts a string of one to a number', () => {
    expect(converted('INTEGER', 42)).toBe(42);
    expect(converted('INTEGER', '42')).toBe(42);
    expect(converted('INTEGER', '-7')).toBe(-7);
    expect(converted('INTEGER', Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
    expect(Object.is(converted('INTEGER', -0), 0)).toBe(true);
  });
  it('rejects fractions, out-of-range numbers and other strings with invalid-integer', () => {
    for (const bad of [4.5, 2 ** 53, '9007199254740992', '4.0', ' 42', '+4', '1e3', '']) {
      expect(codes(one('INTEGER', bad)), String(bad)).toEqual(['value:invalid-integer']);
    }
  });
  it('rejects a boolean with invalid-type', () => {
    expect(codes(one('INTEGER', true))).toEqual(['value:invalid-type']);
  });
});

describe('DECIMAL', () => {
  it('keeps every digit of a string as sent', () => {
    expect(converted('DECIMAL', '1234.50')).toBe('1234.50');
    expect(converted('DECIMAL', '123456789012345.67')).toBe('123456789012345.67');
    expect(converted('DECIMAL', '12.345')).toBe('12.345');
    expect(converted('DECIMAL', '-0.001')).toBe('-0.001');
    expect(converted('DECIMAL', '98765432109876543210.0123456789')).toBe('98765432109876543210.0123456789');
  });
  it('converts a JSON number to its canonical decimal string', () => {
    expect(converted('DECIMAL', 12.5)).toBe('12.5');
    expect(converted('DECIMAL', 42)).toBe('42');
    expect(converted('DECIMAL', -0.25)).toBe('-0.25');
    expect(converted('DECIMAL', 1e21)).toBe('1000000000000000000000');
    expect(converted('DECIMAL', 1.5e-7)).toBe('0.00000015');
    expect(converted('DECIMAL', 123456789012345)).toBe('123456789012345');
    expect(converted('DECIMAL', 0.123456789012345)).toBe('0.123456789012345');
  });
  it('rejects a JSON number of 16 significant digits with decimal-precision, asking for a string', () => {
    const [error] = errorsOf(one('DECIMAL', 1234567890123456));
    expect(error?.code).toBe('decimal-precision');
    expect(error?.message).toContain('send it as a string');
    expect(codes(one('DECIMAL', 0.1234567890123456))).toEqual(['value:decimal-precision']);
    expect(decimalOfNumber(1234567890123450)).toBe('1234567890123450');
  });
  it('rejects more digits than the accounting engine carries with decimal-precision (src/lib/decimal.ts)', () => {
    const integerDigits = '9'.repeat(DECIMAL_INTEGER_DIGITS_MAX);
    const fraction = '5'.repeat(DECIMAL_SCALE_MAX);
    expect(converted('DECIMAL', `-${integerDigits}.${fraction}`)).toBe(`-${integerDigits}.${fraction}`);
    expect(converted('DECIMAL', `0000${integerDigits}`)).toBe(`0000${integerDigits}`);
    expect(codes(one('DECIMAL', `1${integerDigits}`))).toEqual(['value:decimal-precision']);
    expect(codes(one('DECIMAL', `0.${fraction}1`))).toEqual(['value:decimal-precision']);
    expect(codes(one('DECIMAL', 1e30))).toEqual(['value:decimal-precision']);
    expect(codes(one('DECIMAL', 1.5e-20))).toEqual(['value:decimal-precision']);
  });
  it('rejects separators, exponents and other forms with invalid-decimal', () => {
    for (const bad of ['12,5', '1,234.50', '1e5', '.5', '5.', '+5', ' 5', 'abc', '', '--1', '1.2.3']) {
      expect(codes(one('DECIMAL', bad)), bad).toEqual(['value:invalid-decimal']);
    }
  });
  it('rejects a boolean with invalid-type', () => {
    expect(codes(one('DECIMAL', false))).toEqual(['value:invalid-type']);
  });
});

describe('BOOLEAN', () => {
  it('accepts JSON booleans and converts the strings "true" and "false"', () => {
    expect(converted('BOOLEAN', true)).toBe(true);
    expect(converted('BOOLEAN', false)).toBe(false);
    expect(converted('BOOLEAN', 'true')).toBe(true);
    expect(converted('BOOLEAN', 'false')).toBe(false);
  });
  it('rejects other strings with invalid-boolean and numbers with invalid-type', () => {
    expect(codes(one('BOOLEAN', 'TRUE'))).toEqual(['value:invalid-boolean']);
    expect(codes(one('BOOLEAN', 'yes'))).toEqual(['value:invalid-boolean']);
    expect(codes(one('BOOLEAN', 1))).toEqual(['value:invalid-type']);
  });
});

describe('UUID', () => {
  it('accepts the RFC 4122 textual form and lower-cases it', () => {
    expect(converted('UUID', '3f2b8c1e-7d4a-4f6b-9c2e-1a5d8e0f7b3c')).toBe(
      '3f2b8c1e-7d4a-4f6b-9c2e-1a5d8e0f7b3c',
    );
    expect(converted('UUID', '3F2B8C1E-7D4A-4F6B-9C2E-1A5D8E0F7B3C')).toBe(
      '3f2b8c1e-7d4a-4f6b-9c2e-1a5d8e0f7b3c',
    );
    expect(converted('UUID', '00000000-0000-0000-0000-000000000000')).toBe(
      '00000000-0000-0000-0000-000000000000',
    );
  });
  it('rejects other forms with invalid-uuid', () => {
    for (const bad of [
      '3f2b8c1e7d4a4f6b9c2e1a5d8e0f7b3c',
      '{3f2b8c1e-7d4a-4f6b-9c2e-1a5d8e0f7b3c}',
      '3f2b8c1e-7d4a-4f6b-9c2e-1a5d8e0f7b3g',
      '3f2b8c1e-7d4a-4f6b-9c2e-1a5d8e0f7b3',
    ]) {
      expect(codes(one('UUID', bad)), bad).toEqual(['value:invalid-uuid']);
    }
    expect(codes(one('UUID', 7))).toEqual(['value:invalid-type']);
  });
});

describe('LIST', () => {
  it('accepts an array of TEXT by default', () => {
    expect(converted('LIST', ['a', 'b'])).toEqual(['a', 'b']);
    expect(converted('LIST', [])).toEqual([]);
  });
  it('converts every element with the element type', () => {
    expect(converted('LIST', ['1', 2], { elementType: 'INTEGER' })).toEqual([1, 2]);
    expect(converted('LIST', [12.5, '0.10'], { elementType: 'DECIMAL' })).toEqual(['12.5', '0.10']);
  });
  it('names failing elements field[index] with their own codes', () => {
    const result = one('LIST', ['2026-01-01', 'nope', 5, '2026-02-30'], { elementType: 'DATE' });
    expect(codes(result)).toEqual([
      'value[1]:invalid-date',
      'value[2]:invalid-type',
      'value[3]:invalid-date',
    ]);
  });
  it('rejects a non-array with invalid-type', () => {
    expect(codes(one('LIST', 'a,b'))).toEqual(['value:invalid-type']);
  });
  it('caps element errors and says how many failed', () => {
    const result = one('LIST', new Array(LIST_ELEMENT_ERRORS_MAX + 5).fill(1));
    const errors = errorsOf(result);
    expect(errors).toHaveLength(LIST_ELEMENT_ERRORS_MAX + 1);
    expect(errors.at(-1)?.code).toBe('too-many-errors');
    expect(errors.at(-1)?.message).toContain(String(LIST_ELEMENT_ERRORS_MAX + 5));
  });
});

describe('records', () => {
  const entity = entityOf([
    { name: 'reference', type: 'TEXT', mandatory: true },
    { name: 'bookingDate', type: 'DATE', mandatory: true },
    { name: 'amount', type: 'DECIMAL', mandatory: true },
    { name: 'quantity', type: 'INTEGER' },
    { name: 'note', type: 'TEXT' },
  ]);
  const validator = compileRecordValidator(entity);

  it('returns a new object in configured order, omitting absent and null optional fields', () => {
    const input = { amount: 12.5, note: null, bookingDate: '2026-01-31', reference: 'R1' };
    const result = validator.validate(input);
    expect(result).toEqual({
      ok: true,
      value: { reference: 'R1', bookingDate: '2026-01-31', amount: '12.5' },
    });
    if (result.ok) {
      expect(Object.keys(result.value)).toEqual(['reference', 'bookingDate', 'amount']);
      expect(result.value).not.toBe(input);
    }
  });

  it('reports a mandatory field that is missing, null or empty text with required', () => {
    const errors = errorsOf(validator.validate({ reference: '', bookingDate: null }));
    expect(errors.map((error) => `${error.field}:${error.code}`)).toEqual([
      'reference:required',
      'bookingDate:required',
      'amount:required',
    ]);
    expect(errors[0]?.message).toBe('Field "reference" is mandatory but empty.');
    expect(errors[1]?.message).toBe('Field "bookingDate" is mandatory but null.');
    expect(errors[2]?.message).toBe('Field "amount" is mandatory but missing.');
  });

  it('keeps an empty string in an optional TEXT field', () => {
    expect(validator.validate({ reference: 'R', bookingDate: '2026-01-01', amount: '1', note: '' })).toEqual({
      ok: true,
      value: { reference: 'R', bookingDate: '2026-01-01', amount: '1', note: '' },
    });
  });

  it('lists every failing field in attribute order, then unknown fields', () => {
    const result = validator.validate({
      extra: 1,
      quantity: 'many',
      amount: '12,5',
      bookingDate: '2026-02-30',
      reference: 7,
      other: true,
    });
    expect(codes(result)).toEqual([
      'reference:invalid-type',
      'bookingDate:invalid-date',
      'amount:invalid-decimal',
      'quantity:invalid-integer',
      'extra:unknown-field',
      'other:unknown-field',
    ]);
  });

  it('reports an unknown field of an otherwise valid record', () => {
    const errors = errorsOf(
      validator.validate({ reference: 'R', bookingDate: '2026-01-01', amount: '1', colour: 'red' }),
    );
    expect(errors).toEqual([
      {
        field: 'colour',
        code: 'unknown-field',
        message: 'Field "colour" is not an attribute of entity test/thing.',
      },
    ]);
  });

  it('writes messages that name the field and the expected form', () => {
    const [error] = errorsOf(
      validator.validate({ reference: 'R', bookingDate: '2026-01-01', amount: '12,5' }),
    );
    expect(error?.message).toContain('"amount"');
    expect(error?.message).toContain('"1234.50"');
    expect(error?.message).toContain('"12,5"');
  });

  it('rejects a record that is not a JSON object with invalid-record', () => {
    for (const bad of [null, 'x', 3, ['a']]) {
      expect(codes(validator.validate(bad))).toEqual([':invalid-record']);
    }
  });

  it('does not mistake Object.prototype members for fields', () => {
    const special = compileRecordValidator(
      entityOf([
        { name: 'constructor', type: 'TEXT', mandatory: true },
        { name: '__proto__', type: 'TEXT' },
      ]),
    );
    expect(codes(special.validate({}))).toEqual(['constructor:required']);
    const result = special.validate(JSON.parse('{"constructor":"c","__proto__":"p"}'));
    expect(result.ok && Object.keys(result.value)).toEqual(['constructor', '__proto__']);
    expect(
      codes(compileRecordValidator(entityOf([{ name: 'a' }])).validate(JSON.parse('{"__proto__":"p"}'))),
    ).toEqual(['__proto__:unknown-field']);
  });

  it('refuses to compile an entity with two attributes of one name', () => {
    expect(() => compileRecordValidator(entityOf([{ name: 'a' }, { name: 'a' }]))).toThrow(/two attributes/);
  });
});

describe('validateChunk', () => {
  it('splits records into accepted values and failed records with their indexes', () => {
    const validator = compileRecordValidator(
      entityOf([{ name: 'amount', type: 'DECIMAL', mandatory: true }]),
    );
    const records = [{ amount: '1.10' }, { amount: 'x' }, { amount: 2 }, 'oops'];
    const result = validateChunk(validator, records);
    expect(result.accepted).toEqual([
      { index: 0, value: { amount: '1.10' } },
      { index: 2, value: { amount: '2' } },
    ]);
    expect(
      result.failed.map((failure) => [failure.index, failure.record, failure.errors.map((e) => e.code)]),
    ).toEqual([
      [1, { amount: 'x' }, ['invalid-decimal']],
      [3, 'oops', ['invalid-record']],
    ]);
  });
});
