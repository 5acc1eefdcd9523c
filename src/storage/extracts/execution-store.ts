/**
 * The storage of asynchronous extractions (`modules/extracts/store.ts`, `ExecutionStore`; a
 * trigger's insert is `ExtractTables.insertExecution`, in the change runner's transaction): the
 * executions, and their files as parts, one per run, stored with the execution's cursor in one
 * transaction, so a run is in the file exactly when the cursor is past it. An instance holds an
 * execution by its lease (`lease_until`): every change it makes is conditional on the lease it
 * holds, and a lease that ended lets another instance (or this one, restarted) go on from the
 * cursor.
 */
import { type Kysely, type Selectable, sql } from 'kysely';
import type { ExecutionStore, ExtractTables, RowKey, StoredExecution } from '../../modules/extracts/store.js';
import { recordEvent } from '../events/outbox.js';
import type { Database } from '../schema.js';
import type { Store } from '../store.js';
import type { ExtractionExecutionsTable } from '../tables/extracts.js';

function executionOf(row: Selectable<ExtractionExecutionsTable>): StoredExecution {
  return {
    id: Number(row.id),
    configurationId: Number(row.configuration_id),
    status: row.status,
    format: row.format,
    window: { from: row.from_position, to: row.to_position },
    cursor: row.cursor === null ? null : (JSON.parse(row.cursor) as RowKey),
    records: Number(row.records),
    bytes: Number(row.bytes),
    runs: Number(row.runs),
    requestedBy: row.requested_by,
    requestedAt: row.requested_at,
    startedAt: row.started_at,
    completedAt: row.completed_at,
    leaseUntil: row.lease_until,
    failure: row.failure,
    expiresAt: row.expires_at,
  };
}

/** The executions adapter over one store. */
export function createExecutionStore(store: Store): ExecutionStore {
  return {
    ...createExecutionRows(store),
    ...createExecutionLeases(store),
    ...createExecutionParts(store),
  };
}

/** `ExtractTables.insertExecution`: an execution queued, in the change runner's transaction `trx`. */
export async function insertExecution(
  trx: Kysely<Database>,
  execution: Parameters<ExtractTables['insertExecution']>[0],
): Promise<StoredExecution> {
  const row = await trx
    .insertInto('extraction_executions')
    .values({
      configuration_id: execution.configurationId,
      status: 'queued',
      format: execution.format,
      from_position: execution.window.from,
      to_position: execution.window.to,
      cursor: null,
      records: 0,
      bytes: 0,
      runs: 0,
      requested_by: execution.requestedBy,
      requested_at: execution.at,
      started_at: null,
      completed_at: null,
      lease_until: null,
      failure: null,
      expires_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return executionOf(row);
}

/** The executions as rows: read, and swept once expired. */
function createExecutionRows(store: Store): Pick<ExecutionStore, 'find' | 'list' | 'sweep'> {
  const { db } = store;
  return {
    async find(id) {
      const row = await db
        .selectFrom('extraction_executions')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst();
      return row === undefined ? undefined : executionOf(row);
    },

    async list(configurationId, before, limit) {
      const rows = await db
        .selectFrom('extraction_executions')
        .selectAll()
        .where('configuration_id', '=', configurationId)
        .where('id', '<', before)
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute();
      return rows.map(executionOf);
    },

    async sweep(now) {
      const result = await db
        .deleteFrom('extraction_executions')
        .where('expires_at', 'is not', null)
        .where('expires_at', '<', now)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

/** What the maker does under an execution's lease: take it, store its runs, finish it (see the header). */
function createExecutionLeases(store: Store): Pick<ExecutionStore, 'claim' | 'saveRun' | 'finish'> {
  const { db, adapter } = store;
  return {
    async claim(now, leaseUntil) {
      // The candidate is read and taken in one statement; on PostgreSQL an execution another
      // instance is taking at this moment is skipped, and the conditions are checked again on
      // the row once locked, so one instance gets each.
      const { skipLocked } = adapter;
      const { rows } = await sql<Selectable<ExtractionExecutionsTable>>`
        update extraction_executions
        set status = 'running', lease_until = ${leaseUntil}, started_at = coalesce(started_at, ${now})
        where id = (
          select id from extraction_executions
          where status = 'queued' or (status = 'running' and lease_until < ${now})
          order by id
          limit 1
          ${skipLocked}
        )
        and (status = 'queued' or (status = 'running' and lease_until < ${now}))
        returning *
      `.execute(db);
      const row = rows[0];
      return row === undefined ? undefined : executionOf(row);
    },

    saveRun: (id, lease, run, nextLease) => saveRun(db, id, lease, run, nextLease),

    finish: (id, lease, outcome) => finish(db, id, lease, outcome),
  };
}

/** `ExecutionStore.saveRun`: the cursor moved and the run's part stored in one transaction, while `lease` is held. */
async function saveRun(
  db: Kysely<Database>,
  id: number,
  lease: string,
  run: Parameters<ExecutionStore['saveRun']>[2],
  nextLease: string,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const moved = await trx
      .updateTable('extraction_executions')
      .set((eb) => ({
        cursor: run.cursor === null ? null : JSON.stringify(run.cursor),
        records: eb('records', '+', run.records),
        bytes: eb('bytes', '+', run.bytes),
        runs: run.runNo,
        lease_until: nextLease,
      }))
      .where('id', '=', id)
      .where('status', '=', 'running')
      .where('lease_until', '=', lease)
      .executeTakeFirst();
    if (Number(moved.numUpdatedRows) === 0) return false;
    await trx
      .insertInto('extraction_parts')
      .values({
        execution_id: id,
        run_no: run.runNo,
        records: run.records,
        started_at: run.startedAt,
        completed_at: run.completedAt,
        content: run.content,
      })
      .execute();
    return true;
  });
}

/** `ExecutionStore.finish`: the outcome and its event in one transaction, while `lease` is held. */
async function finish(
  db: Kysely<Database>,
  id: number,
  lease: string,
  outcome: Parameters<ExecutionStore['finish']>[2],
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('extraction_executions')
      .set({
        status: outcome.status,
        completed_at: outcome.at,
        expires_at: outcome.expiresAt,
        failure: outcome.failure,
        lease_until: null,
      })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .where('lease_until', '=', lease)
      .returning('configuration_id')
      .executeTakeFirst();
    if (row === undefined) return false;
    // The outbox (`events/outbox.ts`): reported once, by the maker whose lease ended it.
    await recordEvent(
      trx,
      'extraction.completed',
      {
        executionId: id,
        extractConfigurationId: Number(row.configuration_id),
        status: outcome.status,
        failure: outcome.failure,
      },
      outcome.at,
    );
    return true;
  });
}

/** The runs of an execution's file, and its parts' content. */
function createExecutionParts(store: Store): Pick<ExecutionStore, 'runs' | 'parts'> {
  const { db } = store;
  return {
    async runs(id, limit) {
      const rows = await db
        .selectFrom('extraction_parts')
        .select(['run_no', 'records', 'started_at', 'completed_at'])
        .where('execution_id', '=', id)
        .orderBy('run_no')
        .limit(limit)
        .execute();
      return rows.map((row) => ({
        runNo: Number(row.run_no),
        records: Number(row.records),
        startedAt: row.started_at,
        completedAt: row.completed_at,
      }));
    },

    async parts(id, after, limit) {
      const rows = await db
        .selectFrom('extraction_parts')
        .select(['run_no', 'content'])
        .where('execution_id', '=', id)
        .where('run_no', '>', after)
        .orderBy('run_no')
        .limit(limit)
        .execute();
      return rows.map((row) => ({ runNo: Number(row.run_no), content: row.content }));
    },
  };
}
