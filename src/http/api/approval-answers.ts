/**
 * The answers of four-eyes approval (docs/reference.md, Approvals), as TypeBox schemas free of
 * Fastify like `answer-schemas.ts`, which the command line checks its answers against too.
 */
import { Type } from '@sinclair/typebox';
import { APPROVAL_KIND_NAMES } from '../../modules/approvals/kinds.js';
import { APPROVAL_STATUSES } from '../../modules/approvals/store.js';

const Instant = Type.String({ format: 'date-time' });
const OrNull = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

/** One approval request: what it asks, what it binds to, and what became of it. */
export const ApprovalRequest = Type.Object({
  requestId: Type.String({ format: 'uuid' }),
  kind: Type.Union(
    APPROVAL_KIND_NAMES.map((kind) => Type.Literal(kind)),
    { description: 'The action held back: a configuration upload or deletion, or a reversal.' },
  ),
  status: Type.Union(
    APPROVAL_STATUSES.map((status) => Type.Literal(status)),
    {
      description:
        '`pending-approval` waits for a second user; `rejected` and `canceled` (by its maker) never ran; `processing` was approved and runs; `approved` ran (`outcome` says what it did); `invalid` was approved but the data it would change had moved, so nothing ran; `failed` was approved and the action refused (`problem`).',
    },
  ),
  makerEmail: Type.String({ description: 'The user whose credential (or sign-in) made the request.' }),
  makerClientId: Type.String({ description: 'The client id it was made with.' }),
  createdAt: Instant,
  documentSha256: Type.String({
    pattern: '^[0-9a-f]{64}$',
    description:
      "The SHA-256 of the exact document approved: a configuration's canonical text (as its revision keeps it; a deletion's is the empty configuration's), a reversal's canonical request.",
  }),
  revision: Type.Integer({
    minimum: 0,
    description:
      'The configuration revision the dry run was made against; the request runs only while it is stored.',
  }),
  dryRun: Type.Record(Type.String(), Type.Unknown(), {
    description:
      "The dry run shown to the approver, which the approval binds to: an upload's or deletion's `wouldDelete` (and an upload's `version`, `sections`, `keepProcessingData`), a reversal's counts and totals as its `dryRun=true` answers them.",
  }),
  summary: Type.Record(Type.String(), Type.Unknown(), {
    description:
      "What else the approver reads: for an upload, the changes from the stored configuration (`added`, `removed`, `changed`, `truncated`, and the first `changes` as { path, kind }); for a reversal, its `selection`, `reason` and `postingDate` (null when the dating rule decides); for a reopening, the period (`firstDay`, `lastDay`) and the maker's `reason`; empty for a deletion.",
  }),
  decidedBy: OrNull(Type.String({ description: 'Who approved, rejected or canceled it.' })),
  decidedByClientId: OrNull(Type.String()),
  decidedAt: OrNull(Instant),
  reason: OrNull(Type.String({ description: 'Why it was rejected.' })),
  finishedAt: OrNull(Instant),
  outcome: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
    description:
      'What the approved action did: the revision it made and what it deleted, or the reversal id with its journals and lines.',
  }),
  problem: Type.Union([Type.Object({ code: Type.String(), detail: Type.String() }), Type.Null()], {
    description: 'Why an approved request became `invalid` or `failed`.',
  }),
});
