/**
 * The reprocessing port over Kysely (docs/adr/0019-reprocessing-through-the-queue.md). A run is
 * one transaction that puts the records of the selected open errors back into the processing
 * queue, tagged with the run; the processor's claims then take them like any waiting record, and
 * the write path settles their errors (`reprocess-write.ts`). Dry runs read the same records,
 * grouped by chunk as a claim reads them (`claim.ts`), and write nothing.
 *
 * Lock order of a run on PostgreSQL: the configuration row (`FOR SHARE`, so an upload that wipes
 * waits for the run, or the run for the upload), the schedule row (scheduled runs), the open
 * errors it queues (a concurrent run skips the rows this one took: it re-reads their state after
 * the lock), their records, their sessions (sorted), then the statistics counters (sorted, last),
 * as every writer of processing data takes them.
 */
import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import type {
  FailedRecordsPage,
  ReprocessExample,
  ReprocessRun,
  ReprocessSchedule,
  ReprocessSelection,
  ReprocessStore,
} from '../../modules/accounting/store.js';
import { appendAudit } from '../audit-trail.js';
import { countRows } from '../count.js';
import { counterStripe } from '../counter-stripes.js';
import { readPeriodStates } from '../period-store.js';
import type { Database } from '../schema.js';
import { countEntityRecords, countErrorStates, countProcessingErrors } from '../statistics-counters.js';
import type { Store } from '../store.js';
import type { ReprocessRunsTable, ReprocessScheduleTable } from '../tables/accounting.js';
import { claimedChunk, type WaitingRecord } from './claim.js';
import { dryRunRollbacks } from './rollback-write.js';

const SCHEDULE_ROW_ID = 1;
const CONFIGURATION_ROW_ID = 1;

/** The open errors `selection` names (without the state and attempts conditions). */
function selected(db: Kysely<Database>, selection: ReprocessSelection) {
  let query = db.selectFrom('processing_errors');
  if (selection.ingestionId !== undefined) query = query.where('ingestion_id', '=', selection.ingestionId);
  if (selection.entity !== undefined) query = query.where('entity', '=', selection.entity);
  if (selection.code !== undefined) query = query.where('code', '=', selection.code);
  if (selection.from !== undefined) query = query.where('created_at', '>=', selection.from);
  if (selection.to !== undefined) query = query.where('created_at', '<', selection.to);
  return query.where('state', '=', 'open');
}

function scheduleOf(row: Selectable<ReprocessScheduleTable>): ReprocessSchedule {
  return {
    mode: row.mode,
    dailyAt: row.daily_at,
    intervalMinutes: Number(row.interval_minutes),
    maxAttempts: Number(row.max_attempts),
    nextDueAt: row.next_due_at,
    updatedAt: row.updated_at,
    updatedBy: row.updated_by,
  };
}

/** The schedule's settings as the audit trail pictures them before and after a change. */
function scheduleSummaryOf(row: Selectable<ReprocessScheduleTable>): Record<string, unknown> {
  return {
    mode: row.mode,
    dailyAt: row.daily_at,
    intervalMinutes: Number(row.interval_minutes),
    maxAttempts: Number(row.max_attempts),
  };
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

/** The reprocessing port over `store` (see the header). */
export function createReprocessStore(store: Store): ReprocessStore {
  const { db, adapter } = store;

  async function runsWithOutcomes(rows: Selectable<ReprocessRunsTable>[]): Promise<ReprocessRun[]> {
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

  /** Puts the errors queued by `run` back: their records wait, tagged; the counters lose them. */
  async function queueErrors(
    trx: Transaction<Database>,
    run: number,
    selection: ReprocessSelection,
    maxAttempts: number,
    recordsMax: number,
  ): Promise<number> {
    const ids = selected(trx, selection)
      .select('id')
      .where('attempts', '<', maxAttempts)
      .orderBy('id')
      .limit(recordsMax);
    // The outer conditions are checked again on each row once locked (PostgreSQL), so an error
    // another run queued meanwhile is left to it.
    const queued = await trx
      .updateTable('processing_errors')
      .set({ state: 'queued', run_id: run })
      .where('id', 'in', ids)
      .where('state', '=', 'open')
      .where('attempts', '<', maxAttempts)
      .returning(['ingestion_id', 'namespace', 'entity', 'code', 'created_at'])
      .execute();
    if (queued.length === 0) return 0;
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
    if (Number(marked.numUpdatedRows) !== queued.length)
      throw new Error(`a run queued ${queued.length} errors but ${Number(marked.numUpdatedRows)} records`);
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
    for (const [ingestionId, n] of [...bySession.entries()].sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    )) {
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
    const entities = [...byEntity.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [, { ingestionId, namespace, entity, n }] of entities)
      await countEntityRecords(trx, { ingestionId, namespace, entity, waiting: n, done: -n, errors: -n });
    await countErrorStates(
      trx,
      [...bySession.entries()].map(([ingestionId, n]) => ({ ingestionId, queued: n, closed: 0 })),
    );
    return queued.length;
  }

  return {
    periodStates: () => readPeriodStates(db),

    queue(input) {
      return db.transaction().execute(async (trx) => {
        let revisionQuery = trx
          .selectFrom('configuration')
          .select('revision')
          .where('id', '=', CONFIGURATION_ROW_ID);
        revisionQuery = adapter.forShare(revisionQuery);
        const revision = Number((await revisionQuery.executeTakeFirst())?.revision ?? 0);
        if (input.due !== undefined) {
          const moved = await trx
            .updateTable('reprocess_schedule')
            .set({ next_due_at: input.due.nextDueAt })
            .where('id', '=', SCHEDULE_ROW_ID)
            .where('next_due_at', '=', input.due.dueAt)
            .executeTakeFirst();
          if (Number(moved.numUpdatedRows) === 0) return undefined;
        }
        const skipped = await countRows(
          selected(trx, input.selection).where('attempts', '>=', input.maxAttempts),
        );
        const inserted = await trx
          .insertInto('reprocess_runs')
          .values({
            trigger: input.trigger,
            actor: input.actor.user,
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
        const run = Number(inserted.id);
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
        await appendAudit(trx, store.adapter, {
          at: input.at,
          action: 'processing.reprocess',
          actor: input.actor,
          before: null,
          after: { run, state: row.state, queued, skipped },
          configuration: { version: null, revision, sections: {}, deleted: null },
          details: { run, trigger: input.trigger, selection: input.selection, queued, skipped },
        });
        return runOf(row, []);
      });
    },

    async findRun(id, at) {
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
          return (await runsWithOutcomes([settled]))[0];
        }
      }
      return (await runsWithOutcomes([row]))[0];
    },

    async listRuns(page, limit) {
      const rows = await db
        .selectFrom('reprocess_runs')
        .selectAll()
        .orderBy('id', 'desc')
        .limit(limit)
        .offset(page * limit)
        .execute();
      const total = await countRows(db.selectFrom('reprocess_runs'));
      return { rows: await runsWithOutcomes(rows), total };
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

    async failedRecords(selection, maxAttempts, after, limit): Promise<FailedRecordsPage> {
      const errors = await selected(db, selection)
        .select(['id', 'record_id', 'code'])
        .where('attempts', '<', maxAttempts)
        .where('id', '>', after)
        .orderBy('id')
        .limit(limit + 1)
        .execute();
      const more = errors.length > limit;
      const page = more ? errors.slice(0, limit) : errors;
      const codes = new Map(page.map((e) => [Number(e.record_id), e.code]));
      if (page.length === 0) return { chunks: [], codes, next: undefined };
      const records = await db
        .selectFrom('records')
        .select(['record_id', 'ingestion_id', 'chunk_seq', 'record_index', 'namespace', 'entity', 'data'])
        .where(
          'record_id',
          'in',
          page.map((e) => Number(e.record_id)),
        )
        .orderBy('ingestion_id')
        .orderBy('chunk_seq')
        .orderBy('record_id')
        .execute();
      const byChunk = new Map<string, { ingestionId: string; chunkSeq: number; records: WaitingRecord[] }>();
      for (const r of records) {
        const key = `${r.ingestion_id}/${r.chunk_seq}`;
        const group = byChunk.get(key) ?? {
          ingestionId: r.ingestion_id,
          chunkSeq: Number(r.chunk_seq),
          records: [],
        };
        group.records.push({ ...r, reprocess_run: null });
        byChunk.set(key, group);
      }
      const chunks = [];
      for (const group of byChunk.values()) {
        const chunk = await claimedChunk(db, adapter, group, group.records);
        if (chunk !== undefined) chunks.push(chunk);
      }
      return { chunks, codes, next: more ? Number(page.at(-1)?.id) : undefined };
    },

    rollbackErrors(requests, taken) {
      return dryRunRollbacks(db, adapter, requests, taken);
    },

    countAtMaximum(selection, maxAttempts) {
      return countRows(selected(db, selection).where('attempts', '>=', maxAttempts));
    },

    async countByState() {
      // From the counters (migration 0024): open errors are those of the error days.
      const [open, states] = await Promise.all([
        db
          .selectFrom('processing_error_days')
          .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('errors'), sql.lit(0)).as('n'))
          .executeTakeFirstOrThrow(),
        db
          .selectFrom('processing_error_states')
          .select((eb) => ['state', eb.fn.sum<number | string>('errors').as('n')])
          .groupBy('state')
          .execute(),
      ]);
      const of = (state: string) => Number(states.find((r) => r.state === state)?.n ?? 0);
      return { open: Number(open.n), queued: of('queued'), closed: of('closed') };
    },

    async schedule() {
      return scheduleOf(
        await db
          .selectFrom('reprocess_schedule')
          .selectAll()
          .where('id', '=', SCHEDULE_ROW_ID)
          .executeTakeFirstOrThrow(),
      );
    },

    saveSchedule(settings, at, actor) {
      return db.transaction().execute(async (trx) => {
        // The settings before the change, for the audit entry: locked on PostgreSQL so that a
        // concurrent change is seen as it was committed.
        const current = trx.selectFrom('reprocess_schedule').selectAll().where('id', '=', SCHEDULE_ROW_ID);
        const previous = await adapter.forUpdate(current).executeTakeFirst();
        const row = await trx
          .updateTable('reprocess_schedule')
          .set({
            mode: settings.mode,
            daily_at: settings.dailyAt,
            interval_minutes: settings.intervalMinutes,
            max_attempts: settings.maxAttempts,
            next_due_at: settings.nextDueAt,
            updated_at: at,
            updated_by: actor.user,
          })
          .where('id', '=', SCHEDULE_ROW_ID)
          .returningAll()
          .executeTakeFirstOrThrow();
        const revision = await trx
          .selectFrom('configuration')
          .select('revision')
          .where('id', '=', CONFIGURATION_ROW_ID)
          .executeTakeFirst();
        await appendAudit(trx, store.adapter, {
          at,
          action: 'processing.reprocess-schedule',
          actor,
          before: previous === undefined ? null : scheduleSummaryOf(previous),
          after: scheduleSummaryOf(row),
          configuration: {
            version: null,
            revision: Number(revision?.revision ?? 0),
            sections: {},
            deleted: null,
          },
          details: { ...settings },
        });
        return scheduleOf(row);
      });
    },

    async moveNextDue(expected, next) {
      const result = await db
        .updateTable('reprocess_schedule')
        .set({ next_due_at: next })
        .where('id', '=', SCHEDULE_ROW_ID)
        .where((eb) => (expected === null ? eb('next_due_at', 'is', null) : eb('next_due_at', '=', expected)))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
  };
}
