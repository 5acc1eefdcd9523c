/**
 * The rules of what a caller may send to list and change periods (docs/reference.md, Periods),
 * written once: the REST schemas (`http/api/periods.ts`) are built from these fragments and the
 * administration page reads its forms with the same ones. The rules that join members (a first
 * day that starts a period, a reason that is not blank, a range) are the service's, which names
 * the member at fault.
 */
import { Type } from '@sinclair/typebox';
import { PERIOD_DAY_MAX, PERIOD_DAY_MIN, PERIOD_REASON_LENGTH_MAX } from './service.js';

/** Most fields a node may have in a request. */
export const PERIOD_NODE_FIELDS_MAX = 20;
/** Longest node field name and value, and accounting configuration name. */
export const PERIOD_NAME_LENGTH_MAX = 200;
/** Longest node JSON text in a query. */
export const PERIOD_NODE_JSON_LENGTH_MAX = 4000;

/** An accounting configuration name. */
export const PeriodAccountingConfig = Type.String({
  minLength: 1,
  maxLength: PERIOD_NAME_LENGTH_MAX,
  description: 'The accounting configuration (basis).',
  examples: ['IFRS'],
});

/** A node as its field values. */
export const PeriodNode = Type.Record(
  Type.String({ minLength: 1, maxLength: PERIOD_NAME_LENGTH_MAX }),
  Type.String({ maxLength: PERIOD_NAME_LENGTH_MAX }),
  {
    minProperties: 1,
    maxProperties: PERIOD_NODE_FIELDS_MAX,
    description: 'The node, by its field values exactly as the configuration lists them.',
    examples: [{ legalEntity: 'NL01' }],
  },
);

/**
 * The first day of a period. The years a period may be in (1 to 9999) are the service's rule
 * (`periodDayOf`), which names the member: the `date` format takes year 0.
 */
export const PeriodFirstDay = Type.String({
  format: 'date',
  description: `The first day of the period (periods are calendar months), from ${PERIOD_DAY_MIN} to ${PERIOD_DAY_MAX}.`,
  examples: ['2026-03-01'],
});

/** A day of a period that bounds a listing, in a query. */
export function PeriodDayQuery(description: string) {
  return Type.String({
    format: 'date',
    description: `${description} From ${PERIOD_DAY_MIN} to ${PERIOD_DAY_MAX}.`,
    examples: ['2026-01-31'],
  });
}

/** Why a period is reopened. */
export const PeriodReason = Type.String({
  minLength: 1,
  maxLength: PERIOD_REASON_LENGTH_MAX,
  description: 'Why: recorded with the state and in the audit log; required to reopen.',
  examples: ['late supplier invoice for March'],
});

/**
 * A node given as JSON text in a query (`{"legalEntity":"NL01"}`), or `undefined` when it is not an
 * object of strings of the allowed size.
 */
export function nodeOfJson(text: string): Record<string, string> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0 || entries.length > PERIOD_NODE_FIELDS_MAX) return undefined;
  const node: Record<string, string> = {};
  for (const [name, field] of entries) {
    if (
      typeof field !== 'string' ||
      name.length > PERIOD_NAME_LENGTH_MAX ||
      field.length > PERIOD_NAME_LENGTH_MAX
    )
      return undefined;
    node[name] = field;
  }
  return node;
}
