/**
 * A form of the administration interface read through the schema of the same request on the API
 * (`modules/<area>/inputs.ts`), so that a reason, a date, an amount or a number means the same in
 * both: the form's fields are read as the members of the schema's object, then the whole value is
 * checked by the same Ajv rules as the route's (`lib/input-rule.ts`), and refused with the same
 * words (`http/problem.ts`).
 */
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ruleErrors } from '../../lib/input-rule.js';
import { ajvErrorsToPaths } from '../problem.js';
import { AdminPageError } from './request.js';

/** A form refused by its schema: every field at fault with the rule it breaks. */
export class FormRefused extends AdminPageError {
  readonly errors: { path: string; message: string }[];
  constructor(title: string, errors: { path: string; message: string }[]) {
    const fields = errors.map((error) => `${error.path.replace(/^\//, '') || 'the form'} ${error.message}`);
    super(
      400,
      title,
      `Nothing changed: ${fields.join('; ')}.`,
      'Correct the fields named and send the form again.',
    );
    this.errors = errors;
  }
}

/** The JSON types a member's schema allows (a union's members' types too). */
function typesOf(schema: TSchema): string[] {
  if (typeof schema.type === 'string') return [schema.type];
  if (Array.isArray(schema.type)) return schema.type as string[];
  const members = (schema.anyOf ?? schema.oneOf) as TSchema[] | undefined;
  return members === undefined ? [] : members.flatMap(typesOf);
}

/**
 * The value of one field as its member's schema reads it: every field of the name for an
 * array, a number for a number or integer (text that is not one is kept, so the check names it),
 * true for a ticked checkbox (an unticked one sends nothing: the schema's default, if any), the
 * text as typed otherwise; undefined for an absent or empty field.
 */
function memberOf(schema: TSchema, form: URLSearchParams, name: string): unknown {
  const types = typesOf(schema);
  if (types.includes('array')) return form.getAll(name).filter((value) => value !== '');
  const text = form.get(name);
  if (text === null || text.trim() === '') return undefined;
  if (types.includes('boolean')) return text !== 'false';
  if (!types.includes('string') && (types.includes('integer') || types.includes('number'))) {
    const number = Number(text.trim());
    return Number.isFinite(number) ? number : text;
  }
  return text;
}

/**
 * The value of `form` as `schema` (an API body's object schema) takes it: each member read from
 * the field of its name (see `memberOf`; an empty field leaves an optional member out), the
 * schema's defaults filled in as the API fills them, and the whole checked by the API's rules.
 * Refused with `FormRefused` (400, `title`), naming every field at fault.
 */
export function formInput<T extends TObject>(schema: T, form: URLSearchParams, title: string): Static<T> {
  const value: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(schema.properties)) {
    const read = memberOf(member, form, name);
    if (read !== undefined) value[name] = read;
  }
  const filled: unknown = Value.Default(schema, value);
  const errors = ruleErrors(schema, filled);
  if (errors.length > 0) throw new FormRefused(title, ajvErrorsToPaths(errors));
  return filled as Static<T>;
}
