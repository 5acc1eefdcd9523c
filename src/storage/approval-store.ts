/**
 * The approvals port over Kysely (docs/adr/0027-four-eyes-approval.md). Each change of a
 * request's status is one transaction: a conditional update (`where status = <the status it
 * leaves>`), its audit entry and its day counters. Two instances deciding one request both run
 * the update; the one that changed no row lost and writes nothing more. The entries of a request
 * made, finished or recovered are written here (`writeApprovalAudit`); a rejection, a
 * cancellation and an approval's claim are made in the change runner's transaction
 * (`approvalTablesIn`), which writes theirs.
 */
import type { Kysely, Selectable, Transaction } from 'kysely';
import { AppError } from '../lib/errors.js';
import {
  type ApprovalAuditAction,
  type ApprovalDecision,
  type ApprovalFinish,
  type ApprovalStatus,
  type ApprovalStore,
  type ApprovalTables,
  type AuditActor,
  actorOfCaller,
  approvalAuditDetails,
  INTERRUPTED_RECOVERY_ACTOR,
  type NewApprovalRequest,
  type StoredApprovalRequest,
} from '../modules/approvals/store.js';
import { appendAudit } from './audit-trail.js';
import { countRows } from './count.js';
import { errorCodeOf } from './errors.js';
import { keyedPageOf } from './keyed-page.js';
import type { Database } from './schema.js';
import type { DialectAdapter, Store } from './store.js';
import type { ApprovalRequestsTable } from './tables/governance.js';

/** The columns a request is answered with: every one but its payload, which only execution reads. */
const VIEW_COLUMNS = [
  'id',
  'kind',
  'status',
  'maker_email',
  'maker_client_id',
  'created_at',
  'document_sha256',
  'revision',
  'dry_run',
  'summary',
  'decided_by',
  'decided_by_client_id',
  'decided_at',
  'reason',
  'finished_at',
  'outcome',
  'problem',
] as const;

type ViewRow = Pick<Selectable<ApprovalRequestsTable>, (typeof VIEW_COLUMNS)[number]>;

function requestOf(row: ViewRow): StoredApprovalRequest {
  return {
    requestId: row.id,
    kind: row.kind as StoredApprovalRequest['kind'],
    status: row.status as ApprovalStatus,
    makerEmail: row.maker_email,
    makerClientId: row.maker_client_id,
    createdAt: row.created_at,
    documentSha256: row.document_sha256,
    revision: Number(row.revision),
    dryRun: JSON.parse(row.dry_run) as Record<string, unknown>,
    summary: JSON.parse(row.summary) as Record<string, unknown>,
    decidedBy: row.decided_by,
    decidedByClientId: row.decided_by_client_id,
    decidedAt: row.decided_at,
    reason: row.reason,
    finishedAt: row.finished_at,
    outcome: row.outcome === null ? null : (JSON.parse(row.outcome) as Record<string, unknown>),
    problem: row.problem === null ? null : (JSON.parse(row.problem) as StoredApprovalRequest['problem']),
  };
}

/** Whether `error` is the unique index of idempotency keys refusing a second row. */
function isUniqueViolation(error: unknown): boolean {
  const code = errorCodeOf(error);
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/**
 * Writes one audit entry of an approval request, inside the caller's transaction: the one
 * function that writes approval entries, so the audit log's writer can change in one place.
 * `actor` is who acted (the maker, or the approver, with the credential they called with; the
 * service when it recovers an interrupted run); `details` names the request and says what changed.
 */
export async function writeApprovalAudit(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
  entry: {
    at: string;
    actor: AuditActor;
    action: ApprovalAuditAction;
    revision: number;
    details: Record<string, unknown>;
  },
): Promise<void> {
  await appendAudit(trx, adapter, {
    at: entry.at,
    action: entry.action,
    actor: entry.actor,
    configuration: { version: null, revision: entry.revision, sections: {}, deleted: null },
    details: entry.details,
  });
}

/**
 * Marks an approved request as run, inside the transaction of its action, so that the action and
 * the request's `approved` commit together: `processing` becomes `approved` (the outcome is
 * written after the commit, `finish`). When the request is no longer `processing` (recovered as
 * interrupted while its action ran, `recoverInterrupted`), throws `approval-not-pending`, and the
 * action rolls back with it.
 */
export async function markApprovalRan(trx: Kysely<Database>, requestId: string, at: string): Promise<void> {
  const marked = await trx
    .updateTable('approval_requests')
    .set({ status: 'approved', finished_at: at })
    .where('id', '=', requestId)
    .where('status', '=', 'processing')
    .executeTakeFirst();
  if (marked.numUpdatedRows === 0n)
    throw new AppError(
      'approval-not-pending',
      `approval request ${requestId} is no longer processing (it was recovered as interrupted while its action ran); nothing was changed`,
      { requestStatus: 'failed' },
    );
}

/** Adds to the counters of the day a request was made (`approval_day_counts`), inside the caller's transaction. */
async function addToDay(
  trx: Kysely<Database>,
  createdAt: string,
  change: { awaiting: number; denied: number },
): Promise<void> {
  await trx
    .insertInto('approval_day_counts')
    .values({ day: createdAt.slice(0, 10), ...change })
    .onConflict((oc) =>
      oc.column('day').doUpdateSet((eb) => ({
        awaiting: eb('approval_day_counts.awaiting', '+', change.awaiting),
        denied: eb('approval_day_counts.denied', '+', change.denied),
      })),
    )
    .execute();
}

/** The audit action of each status a decision or a finish moves to. */
const AUDIT_ACTION: Record<Exclude<ApprovalStatus, 'pending-approval'>, ApprovalAuditAction> = {
  processing: 'approval.approved',
  rejected: 'approval.rejected',
  canceled: 'approval.canceled',
  approved: 'approval.approved',
  invalid: 'approval.invalidated',
  failed: 'approval.failed',
};

/** The approvals port over `store` (see the header). */
export function createApprovalStore(store: Store): ApprovalStore {
  const { db, adapter } = store;
  return {
    findByIdempotencyKey: (clientId, key) => findByIdempotencyKey(db, clientId, key),

    async find(requestId) {
      const row = await view(db).where('id', '=', requestId).executeTakeFirst();
      return row === undefined ? undefined : requestOf(row);
    },

    async findPendingSame(kind, review, payload) {
      // At most APPROVAL_PENDING_REQUESTS_MAX rows wait (index `approval_requests_status_order`).
      const rows = await view(db)
        .where('status', '=', 'pending-approval')
        .where('kind', '=', kind)
        .where('document_sha256', '=', review.documentSha256)
        .where('revision', '=', review.revision)
        .where('payload', '=', JSON.stringify(payload))
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(requestOf);
    },

    create: (input) => create(db, adapter, input),

    async payload(requestId) {
      const row = await db
        .selectFrom('approval_requests')
        .select('payload')
        .where('id', '=', requestId)
        .executeTakeFirstOrThrow();
      return JSON.parse(row.payload) as unknown;
    },

    async list(status, start, limit) {
      let query = view(db);
      if (status !== undefined) query = query.where('status', '=', status);
      if ('after' in start) {
        const { createdAt, requestId } = start.after;
        query = query.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(createdAt, requestId)));
      } else query = query.offset(start.page * limit);
      const rows = await query
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute();
      const page = keyedPageOf(rows, limit, (row) => ({ createdAt: row.created_at, requestId: row.id }));
      return { rows: page.rows.map(requestOf), next: page.next };
    },

    count(status) {
      let query = db.selectFrom('approval_requests');
      if (status !== undefined) query = query.where('status', '=', status);
      return countRows(query);
    },

    finish: (requestId, finish) => finishRequest(db, adapter, requestId, finish),

    recoverInterrupted: (decidedBefore, at) => recoverInterrupted(db, adapter, decidedBefore, at),
  };
}

/** The columns a request is answered with, read from `from`. */
function view(from: Kysely<Database> | Transaction<Database>) {
  return from.selectFrom('approval_requests').select(VIEW_COLUMNS);
}

/** The request a client made with idempotency key `key`, if any. */
async function findByIdempotencyKey(
  db: Kysely<Database>,
  clientId: string,
  key: string,
): Promise<StoredApprovalRequest | undefined> {
  const row = await view(db)
    .where('maker_client_id', '=', clientId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
  return row === undefined ? undefined : requestOf(row);
}

/**
 * `ApprovalStore.create`: the request, its day counters and its audit entry in one transaction; a
 * concurrent request of the same client with the same key that won is answered as a replay.
 */
async function create(db: Kysely<Database>, adapter: DialectAdapter, input: NewApprovalRequest) {
  try {
    const request = await db.transaction().execute(async (trx) => {
      const row = await trx
        .insertInto('approval_requests')
        .values({
          id: input.requestId,
          kind: input.kind,
          status: 'pending-approval',
          maker_email: input.makerEmail,
          maker_client_id: input.makerClientId,
          created_at: input.at,
          idempotency_key: input.idempotencyKey ?? null,
          payload: JSON.stringify(input.payload),
          document_sha256: input.documentSha256,
          revision: input.revision,
          dry_run: JSON.stringify(input.dryRun),
          summary: JSON.stringify(input.summary),
        })
        .returning(VIEW_COLUMNS)
        .executeTakeFirstOrThrow();
      const created = requestOf(row);
      await addToDay(trx, input.at, { awaiting: 1, denied: 0 });
      await writeApprovalAudit(trx, adapter, {
        at: input.at,
        actor: actorOfCaller(input.makerEmail, input.makerClientId),
        action: 'approval.requested',
        revision: input.revision,
        details: approvalAuditDetails(created),
      });
      return created;
    });
    return { kind: 'created' as const, request };
  } catch (error) {
    // A concurrent request of the same client with the same key won: answer it.
    if (input.idempotencyKey === undefined || !isUniqueViolation(error)) throw error;
    const earlier = await findByIdempotencyKey(db, input.makerClientId, input.idempotencyKey);
    if (earlier === undefined) throw error;
    return { kind: 'replay' as const, request: earlier };
  }
}

/**
 * Moves the pending request `requestId` to the decision's status, with its day counters, inside
 * `trx`; undefined when it is not pending (any more).
 */
async function decideIn(
  trx: Kysely<Database>,
  requestId: string,
  decision: ApprovalDecision,
): Promise<StoredApprovalRequest | undefined> {
  const row = await trx
    .updateTable('approval_requests')
    .set({
      status: decision.to,
      decided_by: decision.by,
      decided_by_client_id: decision.byClientId,
      decided_at: decision.at,
      reason: decision.reason ?? null,
    })
    .where('id', '=', requestId)
    .where('status', '=', 'pending-approval')
    .returning(VIEW_COLUMNS)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  const decided = requestOf(row);
  await addToDay(trx, decided.createdAt, { awaiting: -1, denied: decision.to === 'rejected' ? 1 : 0 });
  return decided;
}

/** The approval requests' tables inside the change runner's transaction `trx`. */
export function approvalTablesIn(trx: Kysely<Database>): ApprovalTables {
  return {
    async find(requestId) {
      const row = await view(trx).where('id', '=', requestId).executeTakeFirst();
      return row === undefined ? undefined : requestOf(row);
    },
    decide: (requestId, decision) => decideIn(trx, requestId, decision),
  };
}

/** `ApprovalStore.finish`: the outcome of an approved request's action, or why it did not run. */
function finishRequest(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  requestId: string,
  finish: ApprovalFinish,
) {
  return db.transaction().execute(async (trx) => {
    // An action that ran made its request `approved` as it committed (`markApprovalRan`):
    // its outcome is added; a request whose action did not run leaves `processing`.
    const row = await trx
      .updateTable('approval_requests')
      .set(
        finish.to === 'approved'
          ? { outcome: JSON.stringify(finish.outcome) }
          : { status: finish.to, finished_at: finish.at, problem: JSON.stringify(finish.problem) },
      )
      .where('id', '=', requestId)
      .where((eb) =>
        finish.to === 'approved'
          ? eb.and([eb('status', '=', 'approved'), eb('outcome', 'is', null)])
          : eb('status', '=', 'processing'),
      )
      .returning(VIEW_COLUMNS)
      .executeTakeFirstOrThrow();
    const finished = requestOf(row);
    // An approval that ran has its entry from the decision; the action wrote its own.
    if (finish.to !== 'approved')
      await writeApprovalAudit(trx, adapter, {
        at: finish.at,
        actor:
          finished.decidedBy === null
            ? actorOfCaller(finished.makerEmail, finished.makerClientId)
            : actorOfCaller(finished.decidedBy, finished.decidedByClientId),
        action: AUDIT_ACTION[finish.to],
        revision: finished.revision,
        details: { ...approvalAuditDetails(finished), problem: finish.problem },
      });
    return finished;
  });
}

/** `ApprovalStore.recoverInterrupted`: requests whose action's instance stopped, failed with their audit entries. */
function recoverInterrupted(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  decidedBefore: string,
  at: string,
) {
  return db.transaction().execute(async (trx) => {
    const problem = {
      code: 'approval-interrupted',
      detail:
        'the instance running the approved action stopped before it finished; nothing was changed: make the request again',
    };
    const rows = await trx
      .updateTable('approval_requests')
      .set({ status: 'failed', finished_at: at, problem: JSON.stringify(problem) })
      .where('status', '=', 'processing')
      .where('decided_at', '<', decidedBefore)
      .returning(VIEW_COLUMNS)
      .execute();
    const recovered = rows.map(requestOf);
    for (const request of recovered)
      await writeApprovalAudit(trx, adapter, {
        at,
        actor: INTERRUPTED_RECOVERY_ACTOR,
        action: 'approval.failed',
        revision: request.revision,
        details: { ...approvalAuditDetails(request), problem },
      });
    return recovered;
  });
}
