import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { PreparedConfiguration } from '../../composition/prepared-configuration.js';
import { AppError } from '../../lib/errors.js';
import type { ApprovalService } from '../../modules/approvals/service.js';
import {
  nodeOfJson,
  PERIOD_NODE_JSON_LENGTH_MAX,
  PeriodAccountingConfig,
  PeriodDayQuery,
  PeriodFirstDay,
  PeriodNode,
  PeriodReason,
} from '../../modules/periods/inputs.js';
import {
  PERIOD_DAY_MAX,
  PERIOD_DAY_MIN,
  PERIOD_ROWS_MAX,
  PERIODS_LISTED_DEFAULT,
  PERIODS_LISTED_MAX,
  type PeriodService,
} from '../../modules/periods/service.js';
import {
  PERIOD_SNAPSHOT_LINES_MAX,
  PERIOD_SNAPSHOTS_LISTED_MAX,
  type PeriodAction,
} from '../../modules/periods/store.js';
import { approvalCallerOf, PendingApprovalAnswer, sendPendingApproval } from './approval-requests.js';
import { ChangeHeaders, ChangeQuery, changeOptionsOf, sendChange } from './changes.js';
import {
  PeriodChangeAnswer,
  PeriodListingAnswer,
  PeriodSnapshotsAnswer,
  PeriodSnapshotWithBalances,
} from './period-answers.js';
import type { ApiApp } from './route-app.js';
import { PathParam, Problem } from './schemas.js';

const NodeQuery = Type.String({
  maxLength: PERIOD_NODE_JSON_LENGTH_MAX,
  description: 'The node as JSON of its field values, e.g. `{"legalEntity":"NL01"}`.',
});

/** The node of a query. Errors: `validation-failed` naming `node`. */
function nodeOfQuery(text: string): Record<string, string> {
  const node = nodeOfJson(text);
  if (node === undefined)
    throw new AppError('validation-failed', 'node must be a JSON object of field values', {
      errors: [{ path: '/querystring/node', message: 'must be a JSON object of strings' }],
    });
  return node;
}

const TargetMembers = {
  accountingConfig: PeriodAccountingConfig,
  node: PeriodNode,
  firstDay: PeriodFirstDay,
};

/** The rule of a change's `firstDay`, for its description. */
const FIRST_DAY_RULE = `\`firstDay\` is the first day of a month from ${PERIOD_DAY_MIN} to ${PERIOD_DAY_MAX} (else 400 naming \`/firstDay\`).`;

/** What each change does, for its description. */
const CHANGES: {
  readonly [A in PeriodAction]: { operationId: string; summary: string; description: string };
} = {
  close: {
    operationId: 'closePeriod',
    summary: 'Close a period early',
    description: `Closes an open period (the current one, the previous one in its grace time, or a reopened one) of a node and accounting configuration before the calendar would: from then on journals dated in it fail \`closed-period\`, or move to the first open period after it where the posting date override is on, and reversals are not dated in it. Refused with 409 \`period-work-pending\` and the counts in \`pending\` (\`waitingRecords\`: records of any session still waiting for processing, whose dates are known only once processed; \`unpostedJournals\`: journals of the node and accounting configuration dated in the period and not posted) while anything is pending; 409 \`period-state-conflict\` for a period after the current one, or one closed or locked already. Keeps a trial-balance snapshot as of the period's last day (at most ${PERIOD_SNAPSHOT_LINES_MAX} balances, else 409 \`conflict\`). Processing on every instance applies the change from its next chunk. ${FIRST_DAY_RULE} Written to the audit log.`,
  },
  lock: {
    operationId: 'lockPeriod',
    summary: 'Lock a period',
    description: `Locks a period not after the current one, open or closed: no journal is posted in it, no reversal is dated in it, and the posting date override moves no journal into it; only a reopening lifts it. Refused like a close while work dated in it is pending (409 \`period-work-pending\` with the counts), and with 409 \`period-state-conflict\` when it is locked already or after the current one. Keeps a trial-balance snapshot like a close. ${FIRST_DAY_RULE} Written to the audit log.`,
  },
  reopen: {
    operationId: 'reopenPeriod',
    summary: 'Reopen a closed or locked period',
    description:
      'Opens a period closed by the calendar, closed by hand or locked, with a reason: journals dated in it post again, until it is closed or locked again (the calendar does not close it again). Records that failed `closed-period` are processed again by a reprocessing run (`POST /api/v1/reprocessing` with `codes: ["closed-period"]`). 409 `period-state-conflict` when the period is open. The snapshots of earlier closes are kept. ' +
      FIRST_DAY_RULE +
      " Written to the audit log. When reopenings wait for four-eyes approval (`APPROVAL_REQUIRED` lists `period.reopen`), the answer is 202 with the approval request, bound to the period's state as it is now: a close, a lock or another reopening before the approval makes the request invalid. An `Idempotency-Key` then makes a repeated request answer the first one.",
  },
};

/** What the period routes call. */
interface PeriodRouteServices {
  periods: PeriodService<PreparedConfiguration>;
  approvals: ApprovalService;
}

/** Periods: listing, close, lock, reopen and snapshots. */
export const periodRoutes: FastifyPluginAsyncTypebox<PeriodRouteServices> = async (app, services) => {
  registerListPeriodsRoute(app, services.periods);
  registerPeriodChangeRoutes(app, services);
  registerSnapshotRoutes(app, services.periods);
};

/** `GET /api/v1/periods`: the periods of an accounting configuration per node, with their state. */
function registerListPeriodsRoute(app: ApiApp, periods: PeriodService<PreparedConfiguration>): void {
  app.get(
    '/api/v1/periods',
    {
      config: { permission: 'journals:read' },
      schema: {
        operationId: 'listPeriods',
        tags: ['periods'],
        summary: 'Periods of an accounting configuration per node, with their state and why',
        description: `Each period of each node the accounting configuration is assigned to (or of \`node\`), oldest first per node: by default the ${PERIODS_LISTED_DEFAULT} periods up to the node's current one; with \`from\` and \`to\`, the periods that hold a day between them (at most ${PERIODS_LISTED_MAX} per node and ${PERIOD_ROWS_MAX} in all, else 400); each a day from ${PERIOD_DAY_MIN} to ${PERIOD_DAY_MAX} (else 400 naming it). A period's state comes from the calendar and the node config's grace time, unless it was closed, locked or reopened by hand. 404 for an accounting configuration that does not exist or a node it is not assigned to.`,
        querystring: Type.Object(
          {
            accountingConfig: PeriodAccountingConfig,
            node: Type.Optional(NodeQuery),
            from: Type.Optional(PeriodDayQuery('A day of the first period listed; with `to`.')),
            to: Type.Optional(PeriodDayQuery('A day of the last period listed; with `from`.')),
          },
          { additionalProperties: false },
        ),
        response: { 200: PeriodListingAnswer, 400: Problem, 404: Problem },
      },
    },
    async (request) => {
      const { accountingConfig, node, from, to } = request.query;
      return periods.list({
        accountingConfig,
        ...(node === undefined ? {} : { node: nodeOfQuery(node) }),
        ...(from === undefined ? {} : { from }),
        ...(to === undefined ? {} : { to }),
      });
    },
  );
}

/**
 * `POST /api/v1/periods/close`, `…/lock` and `…/reopen`: one route per change, documented by
 * {@link CHANGES}; a reopening waits for approval when the service requires it.
 */
function registerPeriodChangeRoutes(app: ApiApp, { periods, approvals }: PeriodRouteServices): void {
  for (const action of ['close', 'lock', 'reopen'] as const) {
    const change = CHANGES[action];
    app.post(
      `/api/v1/periods/${action}`,
      {
        config: { permission: 'periods:manage' },
        schema: {
          operationId: change.operationId,
          tags: ['periods'],
          summary: change.summary,
          description: change.description,
          body: Type.Object(
            action === 'reopen'
              ? { ...TargetMembers, reason: PeriodReason }
              : { ...TargetMembers, reason: Type.Optional(PeriodReason) },
            { additionalProperties: false },
          ),
          querystring: ChangeQuery,
          headers: ChangeHeaders,
          response: {
            200: PeriodChangeAnswer,
            ...(action === 'reopen' ? { 202: PendingApprovalAnswer } : {}),
            400: Problem,
            404: Problem,
            409: Problem,
          },
        },
      },
      async (request, reply) => {
        const { accountingConfig, node, firstDay, reason } = request.body;
        // A dry run changes nothing, so it needs no approval: it answers what the change would.
        if (action === 'reopen' && !request.query.dryRun && approvals.isRequired('period.reopen')) {
          const pending = await approvals.request(
            'period.reopen',
            { accountingConfig, node, firstDay, reason },
            approvalCallerOf(request),
            request.headers['idempotency-key'],
          );
          return sendPendingApproval(reply, pending);
        }
        const target = { accountingConfig, node, firstDay };
        return sendChange(reply, await periods.act(action, target, reason, changeOptionsOf(request)), 200);
      },
    );
  }
}

/** `GET /api/v1/periods/snapshots` and `…/snapshots/:snapshotId`: a period's trial-balance snapshots. */
function registerSnapshotRoutes(app: ApiApp, periods: PeriodService<PreparedConfiguration>): void {
  app.get(
    '/api/v1/periods/snapshots',
    {
      config: { permission: 'journals:read' },
      schema: {
        operationId: 'listPeriodSnapshots',
        tags: ['periods'],
        summary: 'The trial-balance snapshots of one period, newest first',
        description: `Every close and every lock of the period kept one; reopening deletes none. At most ${PERIOD_SNAPSHOTS_LISTED_MAX}.`,
        querystring: Type.Object(
          {
            accountingConfig: PeriodAccountingConfig,
            node: NodeQuery,
            firstDay: PeriodFirstDay,
          },
          { additionalProperties: false },
        ),
        response: { 200: PeriodSnapshotsAnswer, 400: Problem, 404: Problem },
      },
    },
    async (request) => {
      const { accountingConfig, node, firstDay } = request.query;
      return { data: await periods.snapshots({ accountingConfig, node: nodeOfQuery(node), firstDay }) };
    },
  );

  app.get(
    '/api/v1/periods/snapshots/:snapshotId',
    {
      config: { permission: 'journals:read' },
      schema: {
        operationId: 'getPeriodSnapshot',
        tags: ['periods'],
        summary: 'One trial-balance snapshot with its balances',
        description:
          "The balances of the node and accounting configuration per account and currency as of the period's last day, when the snapshot was taken, and the SHA-256 of their canonical text, which anyone can recompute from them (docs/reference.md, Trial-balance snapshots).",
        params: Type.Object({ snapshotId: PathParam }),
        response: { 200: PeriodSnapshotWithBalances, 404: Problem },
      },
    },
    async (request) => periods.snapshot(request.params.snapshotId),
  );
}
