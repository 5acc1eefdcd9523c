import { FormatRegistry, type Static, type TSchema } from '@sinclair/typebox';
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler';
import { CliError, EXIT_REFUSED } from '../output.js';

/**
 * The string formats the API schemas use, as TypeBox checks them (TypeBox refuses a format it
 * does not know). The shapes only: the service has checked the values themselves.
 */
const FORMAT_PATTERNS: Record<string, RegExp> = {
  date: /^\d{4}-\d{2}-\d{2}$/,
  'date-time': /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}(:?\d{2})?)$/,
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
};
for (const [name, pattern] of Object.entries(FORMAT_PATTERNS)) {
  if (!FormatRegistry.Has(name)) FormatRegistry.Set(name, (value) => pattern.test(value));
}

const checks = new WeakMap<TSchema, TypeCheck<TSchema>>();

function checkOf<T extends TSchema>(schema: T): TypeCheck<T> {
  const known = checks.get(schema);
  if (known !== undefined) return known as TypeCheck<T>;
  const check = TypeCompiler.Compile(schema);
  checks.set(schema, check);
  return check;
}

/** True when `value` matches an API schema (compiled once per schema). */
export function matches<T extends TSchema>(schema: T, value: unknown): value is Static<T> {
  return checkOf(schema).Check(value);
}

/**
 * `body` as the API schema types it; a CliError (exit 1) naming the endpoint (`label`, such as
 * `GET /api/v1/journals`) and the first mismatch when the answer does not match.
 */
export function answerOf<T extends TSchema>(label: string, schema: T, body: unknown): Static<T> {
  const check = checkOf(schema);
  if (check.Check(body)) return body;
  const first = check.Errors(body).First();
  const where = first === undefined ? '' : ` (at ${first.path === '' ? '/' : first.path}: ${first.message})`;
  throw new CliError(`${label}: the answer does not match the API${where}`, EXIT_REFUSED);
}
