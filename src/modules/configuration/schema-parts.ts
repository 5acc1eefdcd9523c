/**
 * The small pieces the schemas of the Configuration Data document are built from (`model.ts`,
 * `flow-schemas.ts`): an enumeration, a name, a day, a map, a closed object.
 */
import { type TSchema, Type } from '@sinclair/typebox';

/**
 * A closed string enumeration as a plain JSON Schema `enum`. A TypeBox union of literals would
 * become `anyOf` of `const`, whose Ajv errors are one per member; `enum` yields one error that
 * lists the allowed values.
 */
export function stringEnum<const T extends readonly string[]>(values: T, description: string) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], description });
}

/** A non-empty string with a description. */
export function name(description: string) {
  return Type.String({ minLength: 1, description });
}

/** A calendar day `YYYY-MM-DD`; the `date` format of ajv-formats rejects days like 2026-02-30. */
export function day(description: string) {
  return Type.String({ format: 'date', description, examples: ['2026-01-01'] });
}

/** A map from free string keys to values of one schema (JSON object with arbitrary keys). */
export function map<T extends TSchema>(value: T, description: string) {
  return Type.Record(Type.String(), value, { description });
}

/** What every object schema of the document is: closed to unknown members. */
export const closed = { additionalProperties: false } as const;
