/**
 * The periods port over the store (`modules/periods/store.ts`): the manual states of periods, the
 * counter that tells processing they changed, the trial-balance snapshots of closes and locks,
 * and the one function that writes their audit entries.
 *
 * Concurrency: a change first increments `period_states_version`. On PostgreSQL the processing
 * claim and a reversal read that row `FOR SHARE` inside their transactions
 * (`heldPeriodsVersion`), so a change waits for the chunks and reversals in progress, and those
 * that start meanwhile wait for it and then see the new version: they were prepared with the old
 * states, answer `stale` and are prepared again. No journal is written under states older than the
 * ones committed. On SQLite one writer runs at a time, so reading the row inside the write
 * transaction is enough. The change reads nothing it would have to lock but the counter, so it
 * takes no lock in an order that could meet another's.
 */

import type { Kysely, Transaction } from 'kysely';
import { AppError } from '../lib/errors.js';
import { type AuditAction, type AuditActor, actorOfCaller } from '../modules/audit/store.js';
import {
  type ManualPeriodState,
  nodeKeyOf,
  PERIOD_SNAPSHOT_LINES_MAX,
  PERIOD_SNAPSHOTS_LISTED_MAX,
  type PeriodActionInput,
  type PeriodActionResult,
  type PeriodStates,
  type PeriodStore,
  periodStatesOf,
  type StoredPeriodState,
  type StoredSnapshot,
  type TrialBalanceLine,
  trialBalanceHash,
} from '../modules/periods/store.js';
import { canonicalNodeJson } from './accounting/rows.js';
import { markApprovalRan } from './approval-store.js';
import { appendAudit } from './audit-trail.js';
import { countRows } from './count.js';
import type { Database } from './schema.js';
import type { DialectAdapter, Store } from './store.js';
import type { PeriodSnapshotsTable, PeriodStatesTable } from './tables/governance.js';

/** Snapshot lines per insert statement: four parameters a row stays far below either dialect's limit. */
const SNAPSHOT_LINES_PER_INSERT_MAX = 1_000;

/** The counter's version, read and not held. */
async function periodsVersion(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('period_states_version')
    .select('version')
    .where('id', '=', 1)
    .executeTakeFirst();
  return Number(row?.version ?? 0);
}

/**
 * The counter's version inside `trx`, held on PostgreSQL until the transaction ends (`FOR SHARE`:
 * a change of a period's state waits for it); see the header. On SQLite the transaction is the
 * only writer, so reading is holding.
 */
export async function heldPeriodsVersion(trx: Kysely<Database>, adapter: DialectAdapter): Promise<number> {
  const row = await adapter
    .forShare(trx.selectFrom('period_states_version').select('version').where('id', '=', 1))
    .executeTakeFirst();
  return Number(row?.version ?? 0);
}

/**
 * Every manual state with the counter's version. The version is read first and no transaction
 * is needed: a change between the two reads leaves newer states under an older version, which the
 * next claim tells from the counter and reads again, never older states under a newer version.
 */
export async function readPeriodStates(db: Kysely<Database>): Promise<PeriodStates> {
  const version = await periodsVersion(db);
  const rows = await db
    .selectFrom('period_states')
    .select(['accounting_config', 'node', 'first_day', 'last_day', 'state'])
    .execute();
  return periodStatesOf(
    version,
    rows.map((row) => ({
      nodeKey: nodeKeyOf(JSON.parse(row.node) as Record<string, string>),
      accountingConfig: row.accounting_config,
      firstDay: row.first_day,
      lastDay: row.last_day,
      state: row.state as ManualPeriodState,
    })),
  );
}

/**
 * Writes the audit entry of a change of a period's state inside the caller's transaction: the one
 * place periods write to the audit trail (`audit-trail.ts`).
 */
export async function recordPeriodAudit(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
  entry: {
    at: string;
    actor: AuditActor;
    action: Extract<AuditAction, `periods.${string}`>;
    details: Record<string, unknown>;
  },
): Promise<void> {
  await appendAudit(trx, adapter, {
    at: entry.at,
    action: entry.action,
    actor: entry.actor,
    details: entry.details,
  });
}

function stateOfRow(row: PeriodStatesTable): StoredPeriodState {
  return {
    accountingConfig: row.accounting_config,
    node: JSON.parse(row.node) as Record<string, string>,
    firstDay: row.first_day,
    lastDay: row.last_day,
    state: row.state as ManualPeriodState,
    actedBy: row.acted_by,
    actedAt: row.acted_at,
    reason: row.reason,
  };
}

function snapshotOfRow(row: PeriodSnapshotsTable): StoredSnapshot {
  return {
    snapshotId: row.id,
    accountingConfig: row.accounting_config,
    node: JSON.parse(row.node) as Record<string, string>,
    firstDay: row.first_day,
    lastDay: row.last_day,
    action: row.action === 'lock' ? 'lock' : 'close',
    takenBy: row.taken_by,
    takenAt: row.taken_at,
    lines: Number(row.lines),
    hash: row.hash,
  };
}

/** The periods adapter over `store` (see the header). */
export function createPeriodStore(store: Store): PeriodStore {
  const { db, adapter } = store;
  return {
    periodStates: () => readPeriodStates(db),

    async statesOf(accountingConfig, node) {
      let query = db
        .selectFrom('period_states')
        .selectAll()
        .where('accounting_config', '=', accountingConfig);
      if (node !== undefined) query = query.where('node', '=', canonicalNodeJson(node));
      return (await query.execute()).map(stateOfRow);
    },

    act(input: PeriodActionInput): Promise<PeriodActionResult> {
      return db.transaction().execute((trx) => actOnPeriod(trx, adapter, input));
    },

    async snapshotCounts(accountingConfig, node) {
      let query = db
        .selectFrom('period_snapshots')
        .select(['node', 'first_day', (eb) => eb.fn.countAll().as('n')])
        .where('accounting_config', '=', accountingConfig)
        .groupBy(['node', 'first_day']);
      if (node !== undefined) query = query.where('node', '=', canonicalNodeJson(node));
      return (await query.execute()).map((r) => ({
        node: JSON.parse(r.node) as Record<string, string>,
        firstDay: r.first_day,
        count: Number(r.n),
      }));
    },

    async snapshots(accountingConfig, node, firstDay) {
      const rows = await db
        .selectFrom('period_snapshots')
        .selectAll()
        .where('accounting_config', '=', accountingConfig)
        .where('node', '=', canonicalNodeJson(node))
        .where('first_day', '=', firstDay)
        .orderBy('taken_at', 'desc')
        .orderBy('id', 'desc')
        .limit(PERIOD_SNAPSHOTS_LISTED_MAX)
        .execute();
      return rows.map(snapshotOfRow);
    },

    snapshot: (snapshotId) => readSnapshot(db, adapter, snapshotId),
  };
}

/**
 * `PeriodStore.act` inside `trx`, in the order the header relies on: the counter, then the state
 * found, the work pending and the snapshot (closes and locks), the approval request, the new state
 * (`storeState`) and its audit entry.
 */
async function actOnPeriod(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
  input: PeriodActionInput,
): Promise<PeriodActionResult> {
  const node = canonicalNodeJson(input.node);
  // The counter first: on PostgreSQL this waits for the processing and reversals in progress.
  await trx
    .updateTable('period_states_version')
    .set((eb) => ({ version: eb('version', '+', 1) }))
    .where('id', '=', 1)
    .execute();
  const found = await trx
    .selectFrom('period_states')
    .selectAll()
    .where('accounting_config', '=', input.accountingConfig)
    .where('node', '=', node)
    .where('first_day', '=', input.firstDay)
    .executeTakeFirst();
  const refusal = input.refusalOf(found === undefined ? undefined : stateOfRow(found));
  if (refusal !== undefined) return { kind: 'refused', detail: refusal };
  let snapshot: StoredSnapshot | undefined;
  if (input.action !== 'reopen') {
    const pending = await pendingWork(trx, input, node);
    if (pending.waitingRecords > 0 || pending.unpostedJournals > 0) return { kind: 'pending', pending };
    snapshot = await takeSnapshot(trx, adapter, input, node);
  }
  if (input.approvalRequestId !== undefined) await markApprovalRan(trx, input.approvalRequestId, input.at);
  const row = await storeState(trx, input, node);
  await recordPeriodAudit(trx, adapter, {
    at: input.at,
    actor: actorOfCaller(input.actedBy, input.clientId),
    action: `periods.${input.action}`,
    details: {
      accountingConfig: input.accountingConfig,
      node: input.node,
      firstDay: input.firstDay,
      lastDay: input.lastDay,
      clientId: input.clientId,
      before: found?.state ?? null,
      after: row.state,
      reason: input.reason,
      ...(snapshot === undefined ? {} : { snapshotId: snapshot.snapshotId, hash: snapshot.hash }),
    },
  });
  return { kind: 'done', state: stateOfRow(row), snapshot };
}

/** Writes the state `input` leaves the period of `node` in, inside `trx`; returns its row. */
async function storeState(
  trx: Transaction<Database>,
  input: PeriodActionInput,
  node: string,
): Promise<PeriodStatesTable> {
  const row: PeriodStatesTable = {
    accounting_config: input.accountingConfig,
    node,
    first_day: input.firstDay,
    last_day: input.lastDay,
    state: input.action === 'close' ? 'closed' : input.action === 'lock' ? 'locked' : 'reopened',
    acted_by: input.actedBy,
    client_id: input.clientId,
    acted_at: input.at,
    reason: input.reason,
  };
  await trx
    .insertInto('period_states')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['accounting_config', 'node', 'first_day']).doUpdateSet({
        state: row.state,
        last_day: row.last_day,
        acted_by: row.acted_by,
        client_id: row.client_id,
        acted_at: row.acted_at,
        reason: row.reason,
      }),
    )
    .execute();
  return row;
}

/** Work dated in the period that keeps it from closing (`PendingWork`), read inside `trx`. */
async function pendingWork(trx: Transaction<Database>, input: PeriodActionInput, node: string) {
  const waitingRecords = await countRows(trx.selectFrom('records').where('processing', '=', 1));
  const unpostedJournals = await countRows(
    trx
      .selectFrom('journals')
      .where('posted', '=', 0)
      .where('node', '=', node)
      .where('accounting_config', '=', input.accountingConfig)
      .where('core_date', '>=', input.firstDay)
      .where('core_date', '<=', input.lastDay),
  );
  return { waitingRecords, unpostedJournals };
}

/**
 * The trial balance of the node and accounting configuration as of the period's last day, from
 * the kept balance moves (docs/adr/0016-balances-kept-as-journals-post.md), read inside `trx`.
 */
async function trialBalance(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
  input: PeriodActionInput,
  node: string,
) {
  const total = adapter.decimalSum('amount');
  const rows = await trx
    .selectFrom('balance_moves')
    .select(['account', 'currency', total.as('balance')])
    .where('accounting_config', '=', input.accountingConfig)
    .where('node', '=', node)
    .where('core_date', '<=', input.lastDay)
    .groupBy(['account', 'currency'])
    .orderBy('account')
    .orderBy('currency')
    .limit(PERIOD_SNAPSHOT_LINES_MAX + 1)
    .execute();
  if (rows.length > PERIOD_SNAPSHOT_LINES_MAX)
    throw new AppError(
      'conflict',
      `the trial balance of the period has more than ${PERIOD_SNAPSHOT_LINES_MAX} balances, more than a snapshot holds`,
    );
  return rows.map(
    (r): TrialBalanceLine => ({ account: r.account, currency: r.currency, balance: String(r.balance) }),
  );
}

/** Takes the snapshot of a close or a lock inside `trx`. */
async function takeSnapshot(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
  input: PeriodActionInput,
  node: string,
) {
  const lines = await trialBalance(trx, adapter, input, node);
  const row: PeriodSnapshotsTable = {
    id: input.snapshotId,
    accounting_config: input.accountingConfig,
    node,
    first_day: input.firstDay,
    last_day: input.lastDay,
    action: input.action,
    taken_by: input.actedBy,
    taken_at: input.at,
    lines: lines.length,
    hash: trialBalanceHash(
      { accountingConfig: input.accountingConfig, node, firstDay: input.firstDay, lastDay: input.lastDay },
      lines,
    ),
  };
  await trx.insertInto('period_snapshots').values(row).execute();
  for (let i = 0; i < lines.length; i += SNAPSHOT_LINES_PER_INSERT_MAX) {
    await trx
      .insertInto('period_snapshot_lines')
      .values(
        lines.slice(i, i + SNAPSHOT_LINES_PER_INSERT_MAX).map((l) => ({
          snapshot_id: input.snapshotId,
          account: l.account,
          currency: l.currency,
          balance: l.balance,
        })),
      )
      .execute();
  }
  return snapshotOfRow(row);
}

/** `PeriodStore.snapshot`: a snapshot with its balances, in account and currency order. */
async function readSnapshot(db: Kysely<Database>, adapter: DialectAdapter, snapshotId: string) {
  const row = await db
    .selectFrom('period_snapshots')
    .selectAll()
    .where('id', '=', snapshotId)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  const lines = await db
    .selectFrom('period_snapshot_lines')
    .select(['account', 'currency', adapter.decimalText('balance').as('balance')])
    .where('snapshot_id', '=', snapshotId)
    .orderBy('account')
    .orderBy('currency')
    .execute();
  return {
    ...snapshotOfRow(row),
    balances: lines.map((l) => ({
      account: l.account,
      currency: l.currency,
      balance: String(l.balance),
    })),
  };
}
