/**
 * The periods port over the store (`modules/periods/store.ts`): the manual states of periods, the
 * counter that tells processing they changed, and the trial-balance snapshots of closes and
 * locks; the changes' tables (`periodTablesIn`) are used in the change runner's transaction.
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

import type { Kysely } from 'kysely';
import { AppError } from '../lib/errors.js';
import {
  type ManualPeriodState,
  nodeKeyOf,
  PERIOD_SNAPSHOT_LINES_MAX,
  PERIOD_SNAPSHOTS_LISTED_MAX,
  type PeriodKey,
  type PeriodStates,
  type PeriodStore,
  type PeriodTables,
  periodStatesOf,
  type StoredPeriodState,
  type StoredSnapshot,
  type TrialBalanceLine,
  trialBalanceHash,
} from '../modules/periods/store.js';
import { canonicalNodeJson } from './accounting/rows.js';
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

/** The periods' tables inside the change runner's transaction `trx` (see the header). */
export function periodTablesIn(trx: Kysely<Database>, adapter: DialectAdapter): PeriodTables {
  const ofPeriod = (period: PeriodKey) => ({
    accountingConfig: period.accountingConfig,
    node: canonicalNodeJson(period.node),
    firstDay: period.firstDay,
  });
  return {
    async bumpVersion() {
      await trx
        .updateTable('period_states_version')
        .set((eb) => ({ version: eb('version', '+', 1) }))
        .where('id', '=', 1)
        .execute();
    },

    async stateOf(period) {
      const { accountingConfig, node, firstDay } = ofPeriod(period);
      const found = await trx
        .selectFrom('period_states')
        .selectAll()
        .where('accounting_config', '=', accountingConfig)
        .where('node', '=', node)
        .where('first_day', '=', firstDay)
        .executeTakeFirst();
      return found === undefined ? undefined : stateOfRow(found);
    },

    async pendingWork(period) {
      const waitingRecords = await countRows(trx.selectFrom('records').where('processing', '=', 1));
      const unpostedJournals = await countRows(
        trx
          .selectFrom('journals')
          .where('posted', '=', 0)
          .where('node', '=', canonicalNodeJson(period.node))
          .where('accounting_config', '=', period.accountingConfig)
          .where('core_date', '>=', period.firstDay)
          .where('core_date', '<=', period.lastDay),
      );
      return { waitingRecords, unpostedJournals };
    },

    takeSnapshot: (period, taken) => takeSnapshot(trx, adapter, period, taken),

    saveState: (state, clientId) => saveState(trx, state, clientId),

    async snapshotCount(period) {
      const { accountingConfig, node, firstDay } = ofPeriod(period);
      return countRows(
        trx
          .selectFrom('period_snapshots')
          .where('accounting_config', '=', accountingConfig)
          .where('node', '=', node)
          .where('first_day', '=', firstDay),
      );
    },
  };
}

/** Stores the manual state of a period inside `trx` (`PeriodTables.saveState`). */
async function saveState(trx: Kysely<Database>, state: StoredPeriodState, clientId: string): Promise<void> {
  const row: PeriodStatesTable = {
    accounting_config: state.accountingConfig,
    node: canonicalNodeJson(state.node),
    first_day: state.firstDay,
    last_day: state.lastDay,
    state: state.state,
    acted_by: state.actedBy,
    client_id: clientId,
    acted_at: state.actedAt,
    reason: state.reason,
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
}

/**
 * The trial balance of the node and accounting configuration as of the period's last day, from
 * the kept balance moves (docs/adr/0016-balances-kept-as-journals-post.md), read inside `trx`.
 */
async function trialBalance(trx: Kysely<Database>, adapter: DialectAdapter, period: PeriodKey, node: string) {
  const total = adapter.decimalSum('amount');
  const rows = await trx
    .selectFrom('balance_moves')
    .select(['account', 'currency', total.as('balance')])
    .where('accounting_config', '=', period.accountingConfig)
    .where('node', '=', node)
    .where('core_date', '<=', period.lastDay)
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
  trx: Kysely<Database>,
  adapter: DialectAdapter,
  period: PeriodKey,
  taken: { snapshotId: string; action: 'close' | 'lock'; takenBy: string; takenAt: string },
): Promise<StoredSnapshot> {
  const node = canonicalNodeJson(period.node);
  const lines = await trialBalance(trx, adapter, period, node);
  const { accountingConfig, firstDay, lastDay } = period;
  const row: PeriodSnapshotsTable = {
    id: taken.snapshotId,
    accounting_config: accountingConfig,
    node,
    first_day: firstDay,
    last_day: lastDay,
    action: taken.action,
    taken_by: taken.takenBy,
    taken_at: taken.takenAt,
    lines: lines.length,
    hash: trialBalanceHash({ accountingConfig, node, firstDay, lastDay }, lines),
  };
  await trx.insertInto('period_snapshots').values(row).execute();
  for (let i = 0; i < lines.length; i += SNAPSHOT_LINES_PER_INSERT_MAX) {
    await trx
      .insertInto('period_snapshot_lines')
      .values(
        lines.slice(i, i + SNAPSHOT_LINES_PER_INSERT_MAX).map((l) => ({
          snapshot_id: taken.snapshotId,
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
