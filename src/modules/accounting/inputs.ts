import { type Static, Type } from '@sinclair/typebox';
import { StoredNameFilter } from '../../lib/input-rule.js';
import { instantOf } from '../../lib/instant.js';
import type { JournalStatus } from './journal-draft.js';
import {
  REPROCESS_INTERVAL_MINUTES_MAX,
  REPROCESS_INTERVAL_MINUTES_MIN,
  REPROCESS_MAX_ATTEMPTS_MAX,
  REPROCESS_MAX_ATTEMPTS_MIN,
} from './reprocessing.js';
import { REVERSAL_REASON_LENGTH_MAX } from './reversals.js';
import type { ReprocessSelection } from './store.js';

/**
 * The rules of what a caller may send to read journals (docs/reference.md, Journals), written
 * once: the REST schemas (`http/api/journals.ts`) are built from these fragments, and the
 * administration pages read their filters with the same ones. The ingestion and error code
 * filters are bounded like a path parameter by the route (`StoredNameFilter`); accounting
 * configuration, account and currency are compared as they are and bounded by nothing but the
 * request size, since the names they match carry no length limit; the dates are checked by the
 * route (`DateQuery`).
 */

/** Longest journal id in a path. */
export const JOURNAL_ID_LENGTH_MAX = 100;
/** The statuses a journal list may be filtered by. */
export const JOURNAL_STATUSES: readonly JournalStatus[] = ['posted', 'unposted'];

/** A journal id. */
export const JournalId = Type.String({ maxLength: JOURNAL_ID_LENGTH_MAX });
/** A journal status, as a list filter. */
export const JournalStatusFilter = Type.Union(JOURNAL_STATUSES.map((status) => Type.Literal(status)));

/** The states a processing errors list may be filtered by (`open` when none is given). */
export const ProcessingErrorStateFilter = Type.Union([
  Type.Literal('open'),
  Type.Literal('queued'),
  Type.Literal('closed'),
]);

/** The settings of the reprocessing schedule (docs/reference.md, Reprocessing schedule). */
export const ReprocessScheduleInput = Type.Object(
  {
    mode: Type.Union([Type.Literal('daily'), Type.Literal('interval'), Type.Literal('disabled')], {
      description: '`daily` at `dailyAt`, every `intervalMinutes`, or no scheduled runs.',
    }),
    dailyAt: Type.String({
      pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$',
      maxLength: 5,
      description: 'The time of the daily run, HH:MM, UTC.',
      examples: ['08:00'],
    }),
    intervalMinutes: Type.Integer({
      minimum: REPROCESS_INTERVAL_MINUTES_MIN,
      maximum: REPROCESS_INTERVAL_MINUTES_MAX,
      description: `Minutes between runs in \`interval\` mode, ${REPROCESS_INTERVAL_MINUTES_MIN} to ${REPROCESS_INTERVAL_MINUTES_MAX}.`,
    }),
    maxAttempts: Type.Integer({
      minimum: REPROCESS_MAX_ATTEMPTS_MIN,
      maximum: REPROCESS_MAX_ATTEMPTS_MAX,
      description: `Times a record is processed at most, the first time and manual runs included (${REPROCESS_MAX_ATTEMPTS_MIN} to ${REPROCESS_MAX_ATTEMPTS_MAX}); records at the maximum are skipped by every run.`,
    }),
  },
  { additionalProperties: false },
);

/**
 * The reason of a reversal (docs/reference.md, Reversals): 1 to REVERSAL_REASON_LENGTH_MAX
 * characters, counted as Ajv counts them (code points), in the API's body and in the
 * administration form alike.
 */
export const ReversalReason = Type.String({
  minLength: 1,
  maxLength: REVERSAL_REASON_LENGTH_MAX,
  description: 'Why: recorded with the reversal and in the audit log.',
});

/** The longest RFC 3339 date-time taken: nanoseconds and an offset fit in it. */
const INSTANT_LENGTH_MAX = 40;

/** A date (midnight UTC) or an RFC 3339 date-time in a body. */
function InstantMember(description: string) {
  return Type.Union(
    [Type.String({ format: 'date' }), Type.String({ format: 'date-time', maxLength: INSTANT_LENGTH_MAX })],
    {
      description,
      examples: ['2026-01-31', '2026-01-31T10:15:00Z'],
    },
  );
}

/**
 * Which open processing errors a reprocessing run takes (`POST /api/v1/processing-errors/reprocess`
 * and the administration page's confirmation).
 */
export const ReprocessSelectionBody = Type.Object(
  {
    ingestionId: Type.Optional(StoredNameFilter),
    entity: Type.Optional(StoredNameFilter),
    code: Type.Optional(StoredNameFilter),
    from: Type.Optional(InstantMember('Errors first recorded at or after this instant.')),
    to: Type.Optional(InstantMember('Errors first recorded before this instant.')),
    all: Type.Optional(
      Type.Literal(true, { description: 'Every open error: required when nothing else is named.' }),
    ),
  },
  { additionalProperties: false },
);

/** A selection as the module takes it: instants in their stored form. */
export function reprocessSelectionOf(body: Static<typeof ReprocessSelectionBody>): ReprocessSelection {
  const { from, to, ...rest } = body;
  return {
    ...rest,
    ...(from === undefined ? {} : { from: instantOf(from).toISOString() }),
    ...(to === undefined ? {} : { to: instantOf(to).toISOString() }),
  };
}
