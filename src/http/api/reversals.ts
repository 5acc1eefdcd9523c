import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { PreparedConfiguration } from '../../composition/prepared-configuration.js';
import { AppError } from '../../lib/errors.js';
import { calendarDay } from '../../lib/input-rule.js';
import { JournalId, ReversalReason } from '../../modules/accounting/inputs.js';
import type { ReversalSelection, StoredReversal } from '../../modules/accounting/reversal-store.js';
import {
  REVERSAL_IDS_LISTED_MAX,
  REVERSAL_JOURNAL_IDS_MAX,
  REVERSAL_JOURNALS_PER_REQUEST_MAX,
  type ReversalAnswer,
  type ReversalRequest,
  type ReversalService,
} from '../../modules/accounting/reversals.js';
import type { ApprovalService } from '../../modules/approvals/service.js';
import { actorOfCaller } from '../../modules/audit/entry.js';
import { IdempotencyKey } from '../../modules/ingestion/inputs.js';
import { principalOf } from '../authenticate.js';
import { approvalCallerOf, PendingApprovalAnswer, sendPendingApproval } from './approval-requests.js';
import { keyOfCursor, nextCursor } from './cursor.js';
import { Reversal, ReversalDryRun, ReversalListItem, ReversalNothingNew } from './reversal-answers.js';
import type { ApiApp } from './route-app.js';
import {
  AfterQuery,
  CURSOR_PAGING_DESCRIPTION,
  CursorPage,
  cursorPageOf,
  PageQuery,
  PathParam,
  Problem,
  StoredNameFilter,
} from './schemas.js';

/** A date `YYYY-MM-DD` in a body; the `date` format refuses days that do not exist. */
function DateMember(description: string) {
  return calendarDay({ description, examples: ['2026-11-30'] });
}

/**
 * The selection of a reversal: one object whose members say exactly one kind. One object with
 * optional members rather than a union, so that a wrong member is named by its own path (a
 * union's errors name every branch); `selectionOf` checks that exactly one kind is given.
 */
const SelectionBody = Type.Object(
  {
    journalIds: Type.Optional(
      Type.Array(JournalId, {
        minItems: 1,
        maxItems: REVERSAL_JOURNAL_IDS_MAX,
        description: `These journals (1 to ${REVERSAL_JOURNAL_IDS_MAX}); an id of no journal is a 404 and nothing is reversed.`,
      }),
    ),
    ingestionId: Type.Optional({
      ...StoredNameFilter,
      minLength: 1,
      description: 'Every journal this ingestion session produced.',
    }),
    originJournalId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        description: 'Every journal booked for this origin journal id (directly ingested journals).',
      }),
    ),
    accountingConfig: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        description: 'Every journal of this accounting configuration with a core date from `from` to `to`.',
      }),
    ),
    from: Type.Optional(DateMember('First core date of the range (inclusive); with accountingConfig.')),
    to: Type.Optional(
      DateMember('Last core date of the range (inclusive, on or after from); with accountingConfig.'),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Exactly one of: `journalIds`; `ingestionId`; `originJournalId`; `accountingConfig` with `from` and `to`.',
  },
);

const ReversalBody = Type.Object(
  {
    selection: SelectionBody,
    reason: ReversalReason,
    postingDate: Type.Optional(
      DateMember(
        "The core date of every reversal journal, instead of the dating rule: in an open period of each selected journal's node and accounting configuration and not before the core date of a journal it reverses (else 422 `posting-date-closed`, naming the period and its state; a date is never moved).",
      ),
    ),
  },
  { additionalProperties: false },
);

type SelectionMembers = {
  journalIds?: string[];
  ingestionId?: string;
  originJournalId?: string;
  accountingConfig?: string;
  from?: string;
  to?: string;
};

/** The selection as the module takes it. Errors: `validation-failed` naming the member at fault. */
function selectionOf(body: SelectionMembers): ReversalSelection {
  const { journalIds, ingestionId, originJournalId, accountingConfig, from, to } = body;
  const range = accountingConfig !== undefined || from !== undefined || to !== undefined;
  const kinds = [journalIds !== undefined, ingestionId !== undefined, originJournalId !== undefined, range];
  if (kinds.filter(Boolean).length !== 1)
    throw new AppError('validation-failed', 'the selection must name exactly one kind of selection', {
      errors: [
        {
          path: '/selection',
          message:
            'must have exactly one of journalIds, ingestionId, originJournalId, or accountingConfig with from and to',
        },
      ],
    });
  if (journalIds !== undefined) return { journalIds };
  if (ingestionId !== undefined) return { ingestionId };
  if (originJournalId !== undefined) return { originJournalId };
  const missing = (['accountingConfig', 'from', 'to'] as const).filter((m) => body[m] === undefined);
  if (accountingConfig === undefined || from === undefined || to === undefined)
    throw new AppError('validation-failed', 'a range selection needs accountingConfig, from and to', {
      errors: missing.map((m) => ({ path: `/selection/${m}`, message: 'is required' })),
    });
  return { accountingConfig, from, to };
}

/** A stored reversal as answered, with the path that lists all its reversal journals. */
function answerOf<R extends StoredReversal>(reversal: R) {
  return {
    ...reversal,
    reversalJournals: `/api/v1/journals?reversalId=${encodeURIComponent(reversal.reversalId)}`,
  };
}

/** The `next` cursor of a reversals page. */
function reversalCursor(key: { createdAt: string; reversalId: string } | undefined): string | null {
  return nextCursor('reversals', key, (k) => [k.createdAt, k.reversalId]);
}

/**
 * The answer to a reversal request that ran: the reversal with its `Location`, 201 when it wrote
 * reversal journals (a replay says so in `Idempotent-Replayed`); or 200 with the counts and a
 * null `reversalId` when every selected journal was reversed before and nothing was written.
 */
function sendReversal(reply: FastifyReply, input: ReversalRequest, answer: ReversalAnswer): FastifyReply {
  if (answer.kind === 'nothing-new')
    return reply.code(200).send({
      reversalId: null,
      reason: input.reason,
      selection: input.selection,
      postingDate: input.postingDate ?? null,
      ...answer.counts,
      reversalJournalIds: [],
    });
  const { reversal, replayed } = answer;
  if (replayed) reply.header('idempotent-replayed', 'true');
  reply.header('location', `/api/v1/reversals/${reversal.reversalId}`);
  return reply.code(reversal.journals > 0 ? 201 : 200).send(answerOf(reversal));
}

/** What the reversal routes call. */
interface ReversalRouteServices {
  reversals: ReversalService<PreparedConfiguration>;
  approvals: ApprovalService;
}

/** Reversals by selection: request, dry run, list and one. */
export const reversalRoutes: FastifyPluginAsyncTypebox<ReversalRouteServices> = async (app, services) => {
  registerReverseRoute(app, services);
  registerReversalReadRoutes(app, services.reversals);
};

/** `POST /api/v1/reversals`: reverses the selected journals, or answers a dry run or an approval request. */
function registerReverseRoute(app: ApiApp, { reversals, approvals }: ReversalRouteServices): void {
  app.post(
    '/api/v1/reversals',
    {
      config: { permission: 'journals:reverse' },
      schema: {
        operationId: 'reverseJournals',
        tags: ['journals'],
        summary: 'Reverse the selected journals',
        description: `Each selected journal that no correction has withdrawn gets one reversal journal: the same lines with their sides swapped, \`reverses\` naming it, in its session (\`ingestionId\`), node and accounting configuration; the journal's \`withdrawnBy\` (and \`reversedBy\` when it had none) names the reversal. A journal whose type has an automatic reversal is withdrawn with that reversal, so the correction removes the whole posting. The reversal's core date is the journal's when that date is in an open period of its node, else the first day of the earliest open period (\`originalCoreDate\` holds the journal's date either way), or \`postingDate\` when given; a reversal dated after the node's business date waits unposted, like any journal. A journal is reversed at most once: one already withdrawn is counted in \`alreadyReversed\`, and a reversal journal itself is \`notReversible\`. All or nothing, in one transaction; at most ${REVERSAL_JOURNALS_PER_REQUEST_MAX} selected journals (else 422 \`reversal-too-large\`). 201 when journals were reversed; 200 when every selected journal was reversed before (or is itself a reversal journal), with the counts, \`reversalId\` null and nothing written (no reversal is recorded, audited or announced); 422 \`nothing-to-reverse\` when the selection matched none. A \`postingDate\` in a closed or locked period of the node and accounting configuration of any selected journal, reversed already or not, is 422 \`posting-date-closed\` naming the period (\`YYYY-MM\`), its state and the node, as is one before the core date of a journal it would reverse; nothing is moved to an open day. With \`dryRun=true\` nothing is written and the answer (200) has the same counts and totals. \`Idempotency-Key\`: the same key from the same client with the same request answers the first answer again (\`Idempotent-Replayed: true\`); with another request it is 422 \`idempotency-key-reused\`. Written to the audit log.`,
        querystring: Type.Object(
          {
            dryRun: Type.Boolean({
              default: false,
              description: 'When true, nothing changes: the answer says what the request would reverse now.',
            }),
          },
          { additionalProperties: false },
        ),
        headers: Type.Object({ 'idempotency-key': Type.Optional(IdempotencyKey) }),
        body: ReversalBody,
        response: {
          200: Type.Union([Reversal, ReversalNothingNew, ReversalDryRun]),
          201: Reversal,
          202: PendingApprovalAnswer,
          400: Problem,
          404: Problem,
          409: Problem,
          422: Problem,
        },
      },
    },
    async (request, reply) => {
      const { reason, postingDate } = request.body;
      const input = {
        selection: selectionOf(request.body.selection),
        reason,
        ...(postingDate === undefined ? {} : { postingDate }),
      };
      if (request.query.dryRun) return { dryRun: true as const, ...(await reversals.dryRun(input)) };
      if (approvals.isRequired('reversal')) {
        const pending = await approvals.request(
          'reversal',
          input,
          approvalCallerOf(request),
          request.headers['idempotency-key'],
        );
        return sendPendingApproval(reply, pending);
      }
      const principal = principalOf(request);
      const answer = await reversals.reverse(
        input,
        actorOfCaller(principal.ownerEmail, principal.clientId),
        request.headers['idempotency-key'],
      );
      return sendReversal(reply, input, answer);
    },
  );
}

/** `GET /api/v1/reversals` and `…/:reversalId`: the reversal requests, newest first, and one. */
function registerReversalReadRoutes(app: ApiApp, reversals: ReversalService<PreparedConfiguration>): void {
  app.get(
    '/api/v1/reversals',
    {
      config: { permission: 'journals:read' },
      schema: {
        operationId: 'listReversals',
        tags: ['journals'],
        summary: 'Reversal requests, newest first',
        description: CURSOR_PAGING_DESCRIPTION,
        querystring: Type.Object({ ...PageQuery, ...AfterQuery }),
        response: { 200: CursorPage(ReversalListItem), 400: Problem },
      },
    },
    async (request) => {
      const { page, limit, after } = request.query;
      if (after !== undefined) {
        const [createdAt, reversalId] = keyOfCursor('reversals', after, ['text', 'text']);
        const found = await reversals.list({ after: { createdAt, reversalId } }, limit);
        return cursorPageOf(found.rows.map(answerOf), limit, reversalCursor(found.next));
      }
      const found = await reversals.list({ page }, limit);
      return cursorPageOf(found.rows.map(answerOf), limit, reversalCursor(found.next), {
        page,
        total: found.total ?? 0,
      });
    },
  );

  app.get(
    '/api/v1/reversals/:reversalId',
    {
      config: { permission: 'journals:read' },
      schema: {
        operationId: 'getReversal',
        tags: ['journals'],
        summary: 'One reversal request: what it selected, reversed and left alone',
        description: `With its first ${REVERSAL_IDS_LISTED_MAX} reversal journal ids; \`GET /api/v1/journals?reversalId=\` lists them all.`,
        params: Type.Object({ reversalId: PathParam }),
        response: { 200: Reversal, 404: Problem },
      },
    },
    async (request) => answerOf(await reversals.get(request.params.reversalId)),
  );
}
