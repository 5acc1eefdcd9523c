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
 *
 * The port is composed of its parts: the runs (`reprocess-runs.ts`), the schedule
 * (`reprocess-schedule.ts`) and the dry-run reads here.
 */
import { type Kysely, sql } from 'kysely';
import type {
  FailedRecordsPage,
  ReprocessSelection,
  ReprocessStore,
} from '../../modules/accounting/store.js';
import { countRows } from '../count.js';
import { readPeriodStates } from '../period-store.js';
import type { Database } from '../schema.js';
import type { DialectAdapter, Store } from '../store.js';
import { claimedChunk, type WaitingRecord } from './claim.js';
import { createRunStore, selected } from './reprocess-runs.js';
import { createScheduleStore } from './reprocess-schedule.js';
import { dryRunRollbacks } from './rollback-write.js';

/** The reprocessing port over `store` (see the header). */
export function createReprocessStore(store: Store): ReprocessStore {
  return {
    ...createRunStore(store),
    ...createDryRunReads(store),
    ...createScheduleStore(store),
  };
}

/** What dry runs and the error counts read, part of the reprocessing port; they write nothing. */
function createDryRunReads(
  store: Store,
): Pick<
  ReprocessStore,
  'periodStates' | 'failedRecords' | 'rollbackErrors' | 'countAtMaximum' | 'countByState'
> {
  const { db, adapter } = store;
  return {
    periodStates: () => readPeriodStates(db),

    failedRecords: (selection, maxAttempts, after, limit) =>
      failedRecords(db, adapter, selection, maxAttempts, after, limit),

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
  };
}

/**
 * `ReprocessStore.failedRecords`: a page of the selected open errors, their records read in chunk
 * order and grouped by chunk as a claim reads them (`claimedChunk`).
 */
async function failedRecords(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  selection: ReprocessSelection,
  maxAttempts: number,
  after: number,
  limit: number,
): Promise<FailedRecordsPage> {
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
  const chunks = [];
  for (const group of byChunk(records)) {
    const chunk = await claimedChunk(db, adapter, group, group.records);
    if (chunk !== undefined) chunks.push(chunk);
  }
  return { chunks, codes, next: more ? Number(page.at(-1)?.id) : undefined };
}

/** `records`, in chunk order, grouped by their chunk as waiting records. */
function byChunk(
  records: readonly (Omit<WaitingRecord, 'reprocess_run'> & { ingestion_id: string; chunk_seq: number })[],
) {
  const groups = new Map<string, { ingestionId: string; chunkSeq: number; records: WaitingRecord[] }>();
  for (const r of records) {
    const key = `${r.ingestion_id}/${r.chunk_seq}`;
    const group = groups.get(key) ?? {
      ingestionId: r.ingestion_id,
      chunkSeq: Number(r.chunk_seq),
      records: [],
    };
    group.records.push({ ...r, reprocess_run: null });
    groups.set(key, group);
  }
  return groups.values();
}
