/**
 * The error of one field of one record, as the chunk endpoint lists it (`errors: [{ field, code,
 * message }]`; docs/reference.md, Chunks). Codes name the broken rule and are stable once
 * published; see {@link FIELD_ERROR_CODES}.
 */
export interface FieldError {
  /** Attribute name, `name[3]` for an element of a list, or `''` for the record itself. */
  field: string;
  code: FieldErrorCode;
  /** A sentence naming the field and the expected form. */
  message: string;
}

/**
 * Every code a record validation can produce, with the rule it names. `invalid-type` means the
 * JSON type is none that the field accepts (a number for a TEXT field); `invalid-<type>` means
 * the JSON type is accepted but the value is not a valid one (`"2026-02-30"` for a DATE).
 */
export const FIELD_ERROR_CODES = {
  'invalid-record': 'The record is not a JSON object.',
  required: 'A mandatory field is missing, null, or (TEXT) empty.',
  'unknown-field': 'The record has a field that is not an attribute of the entity.',
  'invalid-type': 'The JSON type of the value is none that the field type accepts.',
  'invalid-date': 'Not a real calendar day written YYYY-MM-DD.',
  'invalid-datetime': 'Not an RFC 3339 date-time with an offset.',
  'invalid-integer': 'Not a whole number within the safe integer range (±(2^53 - 1)).',
  'invalid-decimal': 'Not an exact decimal: optional minus, digits, optional "." and digits.',
  'decimal-precision': 'More significant digits than can be carried exactly.',
  'invalid-boolean': 'Not true or false.',
  'invalid-uuid': 'Not a UUID in the RFC 4122 textual form.',
  'invalid-text':
    'Text that cannot be stored as sent: it holds a NUL character (U+0000) or an unpaired UTF-16 surrogate.',
  'too-many-errors':
    'Further errors were left out: of the elements of a list, or of a record past the bytes its errors may take.',
  'record-too-large':
    "The failed record is too large for the session's error list to keep it with its errors; its errors are kept without it.",
  'nesting-too-deep':
    'The record nests arrays and objects deeper than any entity allows; it is not repeated in the answer.',
} as const;

export type FieldErrorCode = keyof typeof FIELD_ERROR_CODES;
