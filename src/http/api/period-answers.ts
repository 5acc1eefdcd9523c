/**
 * The answers of periods (docs/reference.md, Periods), as TypeBox schemas free of Fastify like
 * `answer-schemas.ts`, which the command line checks its answers against too.
 */
import { Type } from '@sinclair/typebox';

const Instant = Type.String({ format: 'date-time' });
const Day = Type.String({ format: 'date' });
const Node = Type.Record(Type.String(), Type.String(), { description: 'The node, by its field values.' });

/** One period of one node. */
export const PeriodAnswer = Type.Object({
  node: Node,
  firstDay: Day,
  lastDay: Day,
  fiscalYear: Type.Union([Type.Integer(), Type.Null()], {
    description: "The fiscal year in the accounting configuration's fiscal calendar.",
  }),
  number: Type.Union([Type.Integer(), Type.Null()], {
    description: 'The period number within its fiscal year, 1 to 12.',
  }),
  current: Type.Boolean({ description: "Whether it holds the node's business date." }),
  state: Type.Union(
    [Type.Literal('open'), Type.Literal('grace'), Type.Literal('closed'), Type.Literal('locked')],
    {
      description:
        '`open`: journals dated in it post; `grace`: the previous period in its grace time, open; `closed`: its journals fail `closed-period` (or move with the posting date override); `locked`: closed, and final until reopened.',
    },
  ),
  basis: Type.Union(
    [
      Type.Literal('calendar'),
      Type.Literal('grace'),
      Type.Literal('closed-by-hand'),
      Type.Literal('locked-by-hand'),
      Type.Literal('reopened'),
    ],
    { description: 'Why it is in its state: by the calendar, its grace time, or by hand.' },
  ),
  actedBy: Type.Union([Type.String(), Type.Null()], { description: 'Who set the state by hand.' }),
  actedAt: Type.Union([Instant, Type.Null()], { description: 'When the state was set by hand.' }),
  reason: Type.Union([Type.String(), Type.Null()], { description: 'Why it was reopened.' }),
  snapshots: Type.Integer({ minimum: 0, description: 'Trial-balance snapshots kept for it.' }),
  actions: Type.Array(Type.Union([Type.Literal('close'), Type.Literal('lock'), Type.Literal('reopen')]), {
    description:
      'The changes its state allows now; a close or a lock is still refused while work dated in it is pending.',
  }),
});

/** The periods of an accounting configuration. */
export const PeriodListingAnswer = Type.Object({
  accountingConfig: Type.String(),
  periods: Type.Array(PeriodAnswer),
});

/** A trial-balance snapshot, without its balances. */
export const PeriodSnapshotAnswer = Type.Object({
  snapshotId: Type.String({ format: 'uuid' }),
  accountingConfig: Type.String(),
  node: Node,
  firstDay: Day,
  lastDay: Day,
  action: Type.Union([Type.Literal('close'), Type.Literal('lock')], {
    description: 'The change that took it.',
  }),
  takenBy: Type.String(),
  takenAt: Instant,
  lines: Type.Integer({ minimum: 0, description: 'Balances it holds.' }),
  hash: Type.String({
    pattern: '^[0-9a-f]{64}$',
    description: 'SHA-256 (hex) of its canonical text (docs/reference.md, Trial-balance snapshots).',
  }),
});

/** A snapshot with its balances. */
export const PeriodSnapshotWithBalances = Type.Composite([
  PeriodSnapshotAnswer,
  Type.Object({
    balances: Type.Array(
      Type.Object({
        account: Type.String(),
        currency: Type.String(),
        balance: Type.String({
          description: 'Exact decimal: the posted lines dated up to the last day, summed.',
        }),
      }),
      { description: 'Sorted by account and currency.' },
    ),
  }),
]);

/** What a close, a lock or a reopening answers. */
export const PeriodChangeAnswer = Type.Object({
  period: PeriodAnswer,
  snapshot: Type.Union([PeriodSnapshotAnswer, Type.Null()], {
    description: 'The snapshot a close or a lock took; null for a reopening.',
  }),
});

/** The snapshots of a period, newest first. */
export const PeriodSnapshotsAnswer = Type.Object({ data: Type.Array(PeriodSnapshotAnswer) });
