import type { TString } from '@sinclair/typebox';
import { calendarDay, keepsRule } from '../../lib/input-rule.js';
import { type Html, html } from './html.js';

/**
 * Form fields that keep the API's rules in the browser too: dates typed and shown as ISO days
 * whatever the browser's language, and text bounded in characters as the API counts them.
 */

/** A calendar day `YYYY-MM-DD` that exists, as the API takes every date of a request. */
const CalendarDay = calendarDay();

/** Whether `value` is a day the API takes. */
export function isCalendarDay(value: string): boolean {
  return keepsRule(CalendarDay, value);
}

/**
 * A date field that shows and takes `YYYY-MM-DD` in every browser language. An
 * `<input type="date">` shows the browser's own format (`20.11.2026` in German, `11/20/2026` in
 * American English), so accountants reading ISO dates everywhere else would read two formats;
 * a text field with the ISO pattern, a placeholder and a hint shows the one format instead.
 */
export function dateField(
  label: string,
  name: string,
  value: string | undefined,
  options: { required?: boolean; describedBy?: string; invalid?: boolean; hint?: string } = {},
): Html {
  const hintId = `${name}-hint`;
  const describedBy = [hintId, options.describedBy].filter((id) => id !== undefined).join(' ');
  return html`<label>${label} <input type="text" class="date" name="${name}" value="${value ?? ''}" inputmode="numeric" pattern="\\d{4}-\\d{2}-\\d{2}" placeholder="YYYY-MM-DD" maxlength="10" size="10" autocomplete="off" title="A date as YYYY-MM-DD, for example 2026-11-30" aria-describedby="${describedBy}"${options.required === true ? html` required` : ''}${options.invalid === true ? html` aria-invalid="true"` : ''}><small class="hint" id="${hintId}">${options.hint ?? 'YYYY-MM-DD'}</small></label>`;
}

/**
 * The attributes that bound a text field by the rule of its value (a TypeBox fragment of
 * `modules/<area>/inputs.ts`), counted as the API counts: Ajv counts a length in characters (code
 * points), so an emoji is one, while a browser's `maxlength` and `minlength` count UTF-16 units,
 * in which it is two. So `maxlength` is twice the rule's maximum, the most units a value of that
 * many characters can have: the browser never cuts or refuses a value the API takes, and cuts
 * nothing short of the maximum in characters. `data-max-chars` (and `data-min-chars`) let
 * `admin.js` refuse the rest as the API would, counting characters, and say how many there are;
 * the server checks the same rule with `keepsRule` whatever the browser did. `trimmed` counts
 * the value without the spaces around it, as the pages read it.
 */
export function lengthAttributes(rule: TString, options: { trimmed?: boolean } = {}): Html {
  const { minLength, maxLength } = rule;
  return html`${maxLength === undefined ? '' : html` maxlength="${String(maxLength * 2)}" data-max-chars="${String(maxLength)}"`}${minLength === undefined || minLength === 0 ? '' : html` minlength="${String(minLength)}" data-min-chars="${String(minLength)}"`}${options.trimmed === true ? html` data-trimmed` : ''}`;
}
