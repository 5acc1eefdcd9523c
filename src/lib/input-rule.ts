import { type Static, type StringOptions, type TSchema, Type } from '@sinclair/typebox';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/**
 * Checks one value of a request against the TypeBox fragment of its rule (`modules/<area>/
 * inputs.ts`) outside a route schema: what the administration pages read from forms and query
 * strings. It is Ajv with its formats, as the route validator (`http/app.ts`), so a rule means
 * the same in both places: lengths count code points, and a `date` is a day that exists. It
 * neither coerces nor fills in defaults: a form's text is read as text.
 */
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats.default(ajv);

const compiled = new WeakMap<TSchema, ValidateFunction>();

/** True when `value` keeps the rule; each rule is compiled once. */
export function keepsRule<T extends TSchema>(rule: T, value: unknown): value is Static<T> {
  let check = compiled.get(rule);
  if (check === undefined) {
    check = ajv.compile(rule);
    compiled.set(rule, check);
  }
  return check(value) === true;
}

/**
 * A calendar day `YYYY-MM-DD` that exists, as every date of a request is taken: Ajv's `date`
 * format refuses `2026-02-30`. The REST schemas and the administration forms both build their
 * dates from it.
 */
export function calendarDay(options: StringOptions = {}) {
  return Type.String({ ...options, format: 'date' });
}
