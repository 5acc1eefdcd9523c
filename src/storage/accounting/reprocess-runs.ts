/**
 * The runs of reprocessing, part of the reprocessing port (`reprocess-store.ts`, whose header says
 * the lock order of a run): a run queued in the change runner's transaction
 * (`reprocessRunTablesIn`), its errors put back into the processing queue (`queueErrors`), and the
 * reads of runs.
 */
import type { Kysely, Selectable, Transaction } from 'kysely';
import type {
  ReprocessExample,
  ReprocessRun,
  ReprocessRunInput,
  ReprocessRunTables,
  ReprocessSelection,
  ReprocessStore,
} from '../../modules/accounting/store.js';
import { heldStoredRevision } from '../configuration-store.js';
import { countRows } from '../count.js';
import { counterStripe } from '../counter-stripes.js';
import type { Database } from '../schema.js';
import { countEntityRecords, countErrorStates, countProcessingErrors } from '../statistics-counters.js';
import type { DialectAdapter, Store } from '../store.js';
import type { ReprocessRunsTable } from '../tables/accounting.js';
import { SCHEDULE_ROW_ID } from './reprocess-schedule.js';

/** The open errors `selection` names (without the state and attempts conditions). */
export function selected(db: Kysely<Database>, selection: ReprocessSelection) {
  let query = db.selectFrom('processing_errors');
  if (selection.ingestionId !== undefined) query = query.where('ingestion_id', '=', selection.ingestionId);
  if (selection.entity !== undefined) query = query.where('entity', '=', selection.entity);
  if (selection.code !== undefined) query = query.where('code', '=', selection.code);
  if (selection.from !== undefined) query = query.where('created_at', '>=', selection.from);
  if (selection.to !== undefined) query = query.where('created_at', '<', selection.to);
  return query.where('state', '=', 'open');
}

/** Groups same-code outcome rows of runs. */
type OutcomeRow = { run_id: number | string; code: string; records: number | string };

function runOf(row: Selectable<ReprocessRunsTable>, outcomes: readonly OutcomeRow[]): ReprocessRun {
  const byCode: Record<string, number> = {};
  for (const o of outcomes)
    if (Number(o.run_id) === Number(row.id) && o.code !== 'posted') byCode[o.code] = Number(o.records);
  return {
    id: Number(row.id),
    trigger: row.trigger,
    actor: row.actor,
    selection: JSON.parse(row.selection) as ReprocessSelection,
    revision: Number(row.revision),
    maxAttempts: Number(row.max_attempts),
    state: row.state,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    queued: Number(row.queued),
    skipped: Number(row.skipped),
    posted: Number(row.posted),
    stillFailing: Number(row.still_failing),
    stillFailingByCode: byCode,
  };
}

/** The runs of `rows` with their outcomes, read in one statement. */
async function runsWithOutcomes(
  db: Kysely<Database>,
  rows: Selectable<ReprocessRunsTable>[],
): Promise<ReprocessRun[]> {
  if (rows.length === 0) return [];
  const outcomes = await db
    .selectFrom('reprocess_run_outcomes')
    .selectAll()
    .where(
      'run_id',
      'in',
      rows.map((r) => Number(r.id)),
    )
    .execute();
  return rows.map((row) => runOf(row, outcomes));
}

/** The runs' part of the reprocessing port over `store`. */
export function createRunStore(store: Store): Pick<ReprocessStore, 'findRun' | 'listRuns' | 'runExamples'> {
  const { db } = store;
  return {
    findRun: (id, at) => findRun(db, id, at),

    async listRuns(page, limit) {
      const rows = await db
        .selectFrom('reprocess_runs')
        .selectAll()
        .orderBy('id', 'desc')
        .limit(limit)
        .offset(page * limit)
        .execute();
      const total = await countRows(db.selectFrom('reprocess_runs'));
      return { rows: await runsWithOutcomes(db, rows), total };
    },

    async runExamples(id, limit) {
      const rows = await db
        .selectFrom('processing_errors')
        .select(['record_id', 'ingestion_id', 'state', 'code', 'previous_code', 'message'])
        .where('run_id', '=', id)
        .where('state', '!=', 'queued')
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map(
        (r): ReprocessExample =>
          r.state === 'closed'
            ? { recordId: Number(r.record_id), ingestionId: r.ingestion_id, previousCode: r.code }
            : {
                recordId: Number(r.record_id),
                ingestionId: r.ingestion_id,
                previousCode: r.previous_code ?? r.code,
                code: r.code,
                message: r.message,
              },
      );
    },
  };
}

/** `ReprocessStore.findRun`: a running run with no record left waiting is marked finished first. */
async function findRun(db: Kysely<Database>, id: number, at: string): Promise<ReprocessRun | undefined> {
  const row = await db.selectFrom('reprocess_runs').selectAll().where('id', '=', id).executeTakeFirst();
  if (row === undefined) return undefined;
  if (row.state === 'running') {
    // Records wiped by a configuration upload never come back: a run with no record left
    // waiting is over, whatever its counts say.
    const waiting = await db
      .selectFrom('records')
      .select('record_id')
      .where('processing', '=', 1)
      .where('reprocess_run', '=', id)
      .limit(1)
      .executeTakeFirst();
    if (waiting === undefined) {
      await db
        .updateTable('reprocess_runs')
        .set({ state: 'finished', finished_at: at })
        .where('id', '=', id)
        .where('state', '=', 'running')
        .execute();
      const settled = await db
        .selectFrom('reprocess_runs')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return (await runsWithOutcomes(db, [settled]))[0];
    }
  }
  return (await runsWithOutcomes(db, [row]))[0];
}

/** The runs' tables in the change runner's transaction `trx`. */
export function reprocessRunTablesIn(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
): ReprocessRunTables {
  return { queueRun: (input) => queueRun(trx, adapter, input) };
}

/**
 * `ReprocessRunTables.queueRun` inside `trx`, in the lock order of the header of
 * `reprocess-store.ts`, which the steps keep: the configuration row held (`FOR SHARE`), the
 * schedule row (a scheduled run), the run's row, then its errors and what they lock
 * (`queueErrors`); the runner writes the audit entry last.
 */
async function queueRun(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
  input: ReprocessRunInput,
): Promise<{ run: ReprocessRun; revision: number } | undefined> {
  const revision = await heldStoredRevision(trx, adapter);
  if (input.due !== undefined) {
    const moved = await trx
      .updateTable('reprocess_schedule')
      .set({ next_due_at: input.due.nextDueAt })
      .where('id', '=', SCHEDULE_ROW_ID)
      .where('next_due_at', '=', input.due.dueAt)
      .executeTakeFirst();
    if (Number(moved.numUpdatedRows) === 0) return undefined;
  }
  const skipped = await countRows(selected(trx, input.selection).where('attempts', '>=', input.maxAttempts));
  const run = await insertRun(trx, input, revision, skipped);
  const queued = await queueErrors(trx, run, input.selection, input.maxAttempts, input.recordsMax);
  const row = await trx
    .updateTable('reprocess_runs')
    .set({
      queued,
      ...(queued === 0 ? { state: 'finished' as const, finished_at: input.at } : {}),
    })
    .where('id', '=', run)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { run: runOf(row, []), revision };
}

/** Inserts the row of a run starting with nothing queued yet, inside `trx`; returns its id. */
async function insertRun(
  trx: Transaction<Database>,
  input: ReprocessRunInput,
  revision: number,
  skipped: number,
): Promise<number> {
  const inserted = await trx
    .insertInto('reprocess_runs')
    .values({
      trigger: input.trigger,
      actor: input.actor,
      selection: JSON.stringify(input.selection),
      revision,
      max_attempts: input.maxAttempts,
      state: 'running',
      started_at: input.at,
      finished_at: null,
      queued: 0,
      skipped,
      posted: 0,
      still_failing: 0,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(inserted.id);
}

/** An open error a run queued, as `takeErrors` returns it. */
interface QueuedError {
  ingestion_id: string;
  namespace: string;
  entity: string;
  code: string;
  created_at: string;
}

/**
 * Puts the errors queued by `run` back: their records wait, tagged; the counters lose them. The
 * steps keep the lock order of the header of `reprocess-store.ts`: the errors, their records,
 * their sessions (sorted), then the statistics counters (sorted, last).
 */
async function queueErrors(
  trx: Transaction<Database>,
  run: number,
  selection: ReprocessSelection,
  maxAttempts: number,
  recordsMax: number,
): Promise<number> {
  const queued = await takeErrors(trx, run, selection, maxAttempts, recordsMax);
  if (queued.length === 0) return 0;
  await markRecordsQueued(trx, run, queued.length);
  await uncountQueued(trx, queued);
  return queued.length;
}

/** Marks at most `recordsMax` of the selected open errors queued by `run`, in id order. */
async function takeErrors(
  trx: Transaction<Database>,
  run: number,
  selection: ReprocessSelection,
  maxAttempts: number,
  recordsMax: number,
): Promise<QueuedError[]> {
  const ids = selected(trx, selection)
    .select('id')
    .where('attempts', '<', maxAttempts)
    .orderBy('id')
    .limit(recordsMax);
  // The outer conditions are checked again on each row once locked (PostgreSQL), so an error
  // another run queued meanwhile is left to it.
  return trx
    .updateTable('processing_errors')
    .set({ state: 'queued', run_id: run })
    .where('id', 'in', ids)
    .where('state', '=', 'open')
    .where('attempts', '<', maxAttempts)
    .returning(['ingestion_id', 'namespace', 'entity', 'code', 'created_at'])
    .execute();
}

/** Puts the records of the `queued` errors of `run` back into the processing queue, tagged with it. */
async function markRecordsQueued(trx: Transaction<Database>, run: number, queued: number): Promise<void> {
  const marked = await trx
    .updateTable('records')
    .set({ processing: 1, reprocess_run: run })
    .where('record_id', 'in', (eb) =>
      eb
        .selectFrom('processing_errors')
        .select('record_id')
        .where('run_id', '=', run)
        .where('state', '=', 'queued'),
    )
    .where('processing', '=', 0)
    .executeTakeFirst();
  if (Number(marked.numUpdatedRows) !== queued)
    throw new Error(`a run queued ${queued} errors but ${Number(marked.numUpdatedRows)} records`);
}

/** Orders map entries by their text key. */
function byKey([a]: [string, unknown], [b]: [string, unknown]): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Takes the `queued` errors out of their sessions' processed counts (sessions sorted), then out
 * of the statistics counters (sorted, last).
 */
async function uncountQueued(trx: Transaction<Database>, queued: readonly QueuedError[]): Promise<void> {
  const bySession = new Map<string, number>();
  // Per session and entity: each session's records count in its stripe of the entity's counter;
  // keyed so that the rows are taken in the counter's key order (entity, then stripe).
  const byEntity = new Map<string, { ingestionId: string; namespace: string; entity: string; n: number }>();
  for (const e of queued) {
    bySession.set(e.ingestion_id, (bySession.get(e.ingestion_id) ?? 0) + 1);
    const stripe = String(counterStripe(e.ingestion_id)).padStart(2, '0');
    const key = `${e.namespace}\u0000${e.entity}\u0000${stripe}\u0000${e.ingestion_id}`;
    const found = byEntity.get(key) ?? {
      ingestionId: e.ingestion_id,
      namespace: e.namespace,
      entity: e.entity,
      n: 0,
    };
    found.n += 1;
    byEntity.set(key, found);
  }
  for (const [ingestionId, n] of [...bySession.entries()].sort(byKey)) {
    await trx
      .updateTable('ingestions')
      .set((eb) => ({
        processed_rows: eb('processed_rows', '-', n),
        processing_failed_rows: eb('processing_failed_rows', '-', n),
      }))
      .where('ingestion_id', '=', ingestionId)
      .execute();
  }
  await countProcessingErrors(
    trx,
    queued.map((e) => ({ createdAt: e.created_at, code: e.code, errors: -1 })),
  );
  for (const [, { ingestionId, namespace, entity, n }] of [...byEntity.entries()].sort(byKey))
    await countEntityRecords(trx, { ingestionId, namespace, entity, waiting: n, done: -n, errors: -n });
  await countErrorStates(
    trx,
    [...bySession.entries()].map(([ingestionId, n]) => ({ ingestionId, queued: n, closed: 0 })),
  );
}
