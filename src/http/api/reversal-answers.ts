/**
 * The answers of reversals (docs/reference.md, Reversals), as TypeBox schemas free of Fastify
 * like `answer-schemas.ts`, which the command line can check its answers against too.
 */
import { Type } from '@sinclair/typebox';
import { REVERSAL_IDS_LISTED_MAX } from '../../modules/accounting/reversals.js';

const Instant = Type.String({ format: 'date-time' });
const JournalIds = (description: string) =>
  Type.Array(Type.String(), { maxItems: REVERSAL_IDS_LISTED_MAX, description });

/** Which journals a reversal took, as asked: exactly one kind. */
export const ReversalSelectionAnswer = Type.Object({
  journalIds: Type.Optional(Type.Array(Type.String())),
  ingestionId: Type.Optional(Type.String()),
  originJournalId: Type.Optional(Type.String()),
  accountingConfig: Type.Optional(Type.String()),
  from: Type.Optional(Type.String({ format: 'date' })),
  to: Type.Optional(Type.String({ format: 'date' })),
});

/** The reversal lines of one accounting configuration, account and currency. */
export const ReversalTotal = Type.Object({
  accountingConfig: Type.String(),
  account: Type.String(),
  currency: Type.String(),
  debit: Type.String({ description: 'Sum of the reversal lines on the debit side, exact.' }),
  credit: Type.String({
    description: 'Sum of the reversal lines on the credit side, as a positive amount, exact.',
  }),
});

/** What a reversal did, or would do. */
const ReversalCountMembers = {
  journals: Type.Integer({
    minimum: 0,
    description:
      'Reversal journals written: one per journal withdrawn, the automatic reversal of a journal whose type has one included.',
  }),
  lines: Type.Integer({ minimum: 0, description: 'Lines of the reversal journals.' }),
  alreadyReversed: Type.Integer({
    minimum: 0,
    description: 'Selected journals withdrawn before: left as they are, never reversed twice.',
  }),
  notReversible: Type.Integer({
    minimum: 0,
    description:
      'Selected reversal journals whose original was not selected: a reversal journal is not reversed itself (post the corrected data again instead).',
  }),
  alreadyReversedIds: JournalIds(`The first ${REVERSAL_IDS_LISTED_MAX} journals already reversed.`),
  notReversibleIds: JournalIds(`The first ${REVERSAL_IDS_LISTED_MAX} journals that may not be reversed.`),
  totals: Type.Array(ReversalTotal, {
    description: 'The reversal lines summed per accounting configuration, account and currency, sorted.',
  }),
};

/** A reversal request as stored. */
export const Reversal = Type.Object({
  reversalId: Type.String({ format: 'uuid' }),
  reason: Type.String(),
  selection: ReversalSelectionAnswer,
  postingDate: Type.Union([Type.String({ format: 'date' }), Type.Null()], {
    description: 'The core date asked for every reversal journal; null when each took the dating rule.',
  }),
  createdBy: Type.String({ description: 'The user whose credential asked.' }),
  createdAt: Instant,
  revision: Type.Integer({ minimum: 0, description: 'The configuration revision it worked under.' }),
  ...ReversalCountMembers,
  reversalJournalIds: JournalIds(
    `The first ${REVERSAL_IDS_LISTED_MAX} reversal journals in journal list order; every one is listed by \`GET /api/v1/journals?reversalId=\`.`,
  ),
  reversalJournals: Type.String({ description: 'The path of the list of every reversal journal it made.' }),
});

/**
 * What a request that reversed nothing answers (200): every selected journal was reversed before,
 * or is a reversal journal itself. Nothing was written, and no reversal was recorded.
 */
export const ReversalNothingNew = Type.Object({
  reversalId: Type.Null({
    description: 'No reversal was recorded: nothing was reversed, so nothing was written.',
  }),
  reason: Type.String(),
  selection: ReversalSelectionAnswer,
  postingDate: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
  ...ReversalCountMembers,
  reversalJournalIds: Type.Array(Type.String(), {
    maxItems: 0,
    description: 'Empty: no reversal journal was written.',
  }),
});

/** What a reversal would do now (a dry run). */
export const ReversalDryRun = Type.Object({
  dryRun: Type.Literal(true),
  ...ReversalCountMembers,
});

/** A reversal in a list: without its reversal journal ids. */
export const ReversalListItem = Type.Omit(Reversal, ['reversalJournalIds']);
