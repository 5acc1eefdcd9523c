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

function checkOf(rule: TSchema): ValidateFunction {
  let check = compiled.get(rule);
  if (check === undefined) {
    check = ajv.compile(rule);
    compiled.set(rule, check);
  }
  return check;
}

/** True when `value` keeps the rule; each rule is compiled once. */
export function keepsRule<T extends TSchema>(rule: T, value: unknown): value is Static<T> {
  return checkOf(rule)(value) === true;
}

/** The errors of `value` against the rule, as Ajv reports them; none when it keeps it. */
export function ruleErrors(rule: TSchema, value: unknown): NonNullable<ValidateFunction['errors']> {
  const check = checkOf(rule);
  return check(value) === true ? [] : (check.errors ?? []);
}

/**
 * A calendar day `YYYY-MM-DD` that exists, as every date of a request is taken: Ajv's `date`
 * format refuses `2026-02-30`. The REST schemas and the administration forms both build their
 * dates from it.
 */
export function calendarDay(options: StringOptions = {}) {
  return Type.String({ ...options, format: 'date' });
}

/**
 * Longest path parameter: the router refuses a longer path segment before any route runs
 * (`maxParamLength` in `http/app.ts`), so every path parameter carries this bound.
 */
export const PATH_PARAM_LENGTH_MAX = 200;

/**
 * A filter compared with session ids, session namespaces and entities, or processing error
 * codes: every stored one is no longer than a path parameter (ids and names are bounded when they
 * are made, codes are a closed list), so a longer value could match nothing and is refused with a
 * 400 naming it instead of an empty page (docs/decisions.md, HTTP in general).
 */
export const StoredNameFilter = Type.String({ maxLength: PATH_PARAM_LENGTH_MAX });
