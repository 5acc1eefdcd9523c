import { describe, expect, it } from 'vitest';
import type { EntityDefinition } from '../../../src/modules/entities/entity.js';
import { compileRecordValidator } from '../../../src/modules/entities/record-validator.js';
import {
  CHUNK_RECORDS_MAX,
  FAILED_RECORD_ERRORS_BYTES_MAX,
  FAILED_RECORD_KEPT_BYTES_MAX,
  SESSION_ERRORS_KEPT_MAX,
} from '../../../src/modules/ingestion/chunk-body.js';
import type { FailedRecord, FieldErrorView } from '../../../src/modules/ingestion/store.js';
import {
  keptFailure,
  listedFailure,
  validateChunkBody,
} from '../../../src/modules/ingestion/validated-chunk.js';

const entity: EntityDefinition = {
  namespace: 'test',
  name: 'thing',
  description: '',
  temporalityType: 'Transaction',
  type: 'DefinedEntity',
  kind: 'user',
  attributes: [{ name: 'amount', label: 'Amount', mandatory: true, type: 'DECIMAL' }],
};

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** An error of an unknown member named `name`, as the validator writes it. */
const unknownMember = (name: string): FieldErrorView => ({
  field: name,
  code: 'unknown-field',
  message: `Field "${name}" is not an attribute of entity test/thing.`,
});

describe('listedFailure', () => {
  it('lists a failed record with a few errors as it is', () => {
    const failed: FailedRecord = { index: 3, record: { a: 1 }, errors: [unknownMember('a')] };
    expect(listedFailure(failed)).toBe(failed);
  });

  it('lists the first errors within the bound, then one that counts the others', () => {
    const errors = Array.from({ length: 1000 }, (_, i) => unknownMember(`m${i}`));
    const listed = listedFailure({ index: 0, record: {}, errors });
    const note = listed.errors.at(-1);
    const shown = listed.errors.slice(0, -1);
    expect(shown).toEqual(errors.slice(0, shown.length));
    expect(bytes(shown)).toBeLessThanOrEqual(FAILED_RECORD_ERRORS_BYTES_MAX);
    // One more would not have fitted.
    expect(bytes(errors.slice(0, shown.length + 1))).toBeGreaterThan(FAILED_RECORD_ERRORS_BYTES_MAX);
    expect(note).toEqual({
      field: '',
      code: 'too-many-errors',
      message: `The record has ${1000 - shown.length} more errors; only the first ${shown.length} are listed (at most 8,192 bytes of them).`,
    });
  });

  it('measures the errors in UTF-8 bytes, escapes included', () => {
    // Three bytes a character in UTF-8, six as an escaped control character.
    const wide = Array.from({ length: 100 }, (_, i) => unknownMember(`€${i}`.repeat(20)));
    const controls = Array.from({ length: 100 }, (_, i) => unknownMember(`\u0001${i}`.repeat(20)));
    for (const errors of [wide, controls]) {
      const shown = listedFailure({ index: 0, record: null, errors }).errors.slice(0, -1);
      expect(bytes(shown)).toBeLessThanOrEqual(FAILED_RECORD_ERRORS_BYTES_MAX);
      expect(bytes(errors.slice(0, shown.length + 1))).toBeGreaterThan(FAILED_RECORD_ERRORS_BYTES_MAX);
    }
  });

  it('lists no error of a record whose first error is past the bound alone, and says so', () => {
    const errors = [unknownMember('x'.repeat(FAILED_RECORD_ERRORS_BYTES_MAX))];
    expect(listedFailure({ index: 0, record: null, errors }).errors).toEqual([
      expect.objectContaining({
        code: 'too-many-errors',
        message: expect.stringMatching(/^The record has 1 more errors; only the first 0/),
      }),
    ]);
  });
});

describe('keptFailure', () => {
  it('keeps a failed record as listed while record and errors fit the bound', () => {
    const listed: FailedRecord = {
      index: 1,
      record: { note: 'x'.repeat(1000) },
      errors: [unknownMember('note')],
    };
    expect(keptFailure(listed)).toBe(listed);
  });

  it('keeps a larger one without its record, and says how large it was', () => {
    const record = { note: 'x'.repeat(FAILED_RECORD_KEPT_BYTES_MAX) };
    const listed: FailedRecord = { index: 1, record, errors: [unknownMember('note')] };
    const kept = keptFailure(listed);
    expect(kept.record).toBeNull();
    expect(kept.errors).toEqual([
      unknownMember('note'),
      {
        field: '',
        code: 'record-too-large',
        message: `The record takes ${bytes(record).toLocaleString('en-US')} bytes as JSON, more than the error list keeps of a failed record with its errors (8,192); it is not repeated here.`,
      },
    ]);
  });

  it('bounds every kept failed record, errors cut or not', () => {
    const errors = Array.from({ length: 5000 }, (_, i) => unknownMember(`member-${i}`));
    const kept = keptFailure(listedFailure({ index: 0, record: { big: 'y'.repeat(100_000) }, errors }));
    // The errors within their bound, and two notes of a few hundred bytes.
    expect(bytes(kept.record) + bytes(kept.errors)).toBeLessThan(FAILED_RECORD_KEPT_BYTES_MAX + 1024);
  });
});

describe('validateChunkBody', () => {
  it('collects as many failed records as a session keeps, counts them all, and lists and keeps the same', () => {
    const body = Buffer.from(JSON.stringify({ data: Array.from({ length: CHUNK_RECORDS_MAX }, () => ({})) }));
    const chunk = validateChunkBody(body, compileRecordValidator(entity));
    expect(chunk.failedCount).toBe(CHUNK_RECORDS_MAX);
    expect(chunk.failed).toHaveLength(SESSION_ERRORS_KEPT_MAX);
    expect(chunk.kept).toEqual(chunk.failed);
    expect(chunk.failed.at(-1)?.index).toBe(SESSION_ERRORS_KEPT_MAX - 1);
  });
});
