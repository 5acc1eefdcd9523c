/**
 * What the write path of processing does for the records a reprocessing run put back into the
 * queue (`records.reprocess_run`, docs/adr/0019-reprocessing-through-the-queue.md): their open
 * error is not written again but settled. A record that failed again keeps its error row, with
 * the new code and message, the old code as `previous_code` and one attempt more; a record that
 * posted has its error closed (its journals carry its record id). The run's outcomes are added
 * up, and the run is finished by the write that settles its last record. Runs inside the
 * transaction of the write path, before the statistics counters (`write-path.ts`).
 */
import { sql, type Transaction } from 'kysely';
import type { ClaimedChunk } from '../../modules/accounting/store.js';
import type { Database } from '../schema.js';
import type { ProcessingErrorCount } from '../statistics-counters.js';
import type { DialectAdapter } from '../store.js';

/** A reprocessed record that failed again, with its new code and message. */
export interface Refailure {
  recordId: number;
  code: string;
  message: string;
}

/** The run of each reprocessed record of a claim, by record id; empty for ordinary records. */
export function reprocessedRecords(chunk: ClaimedChunk): Map<number, number> {
  const runs = new Map<number, number>();
  for (const record of chunk.records)
    if (record.reprocessRun !== undefined) runs.set(record.recordId, record.reprocessRun);
  return runs;
}

/** The rows of `values` as a relation `v` of the statement, from one JSON parameter. */
function valuesOf(adapter: DialectAdapter, values: readonly Refailure[]) {
  const json = JSON.stringify(
    values.map((v) => ({ record_id: v.recordId, code: v.code, message: v.message })),
  );
  return adapter.jsonRows(json, 'v', [
    { name: 'record_id', type: 'bigint' },
    { name: 'code', type: 'text' },
    { name: 'message', type: 'text' },
  ]);
}

/**
 * What settling changed in the processing error counters: the errors open again, on the day they
 * were first recorded, under their new code (`processing_error_days`); the errors no longer
 * queued, and those closed (`processing_error_states`).
 */
export interface Settlement {
  reopened: ProcessingErrorCount[];
  unqueued: number;
  closed: number;
}

/** A settlement of nothing: a claim without reprocessed records. */
export const NOTHING_SETTLED: Settlement = { reopened: [], unqueued: 0, closed: 0 };

/**
 * Settles the errors of the reprocessed records `runs` (record id → run), processed under
 * configuration `revision`: those in `refailures` failed again (and record that revision), the
 * others posted. Returns what the processing error counters gain ({@link Settlement}).
 */
export async function settleReprocessed(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
  runs: ReadonlyMap<number, number>,
  refailures: readonly Refailure[],
  at: string,
  revision: number,
): Promise<Settlement> {
  // One error per record (the engine reports the first rule a record breaks).
  const failedById = new Map<number, Refailure>();
  for (const f of refailures)
    if (runs.has(f.recordId) && !failedById.has(f.recordId)) failedById.set(f.recordId, f);
  const failed = [...failedById.values()];
  const posted = [...runs.keys()].filter((id) => !failedById.has(id));
  const counts: ProcessingErrorCount[] = [];
  let closed = 0;
  const outcomes = new Map<number, Map<string, number>>();
  const add = (run: number, code: string) => {
    const byCode = outcomes.get(run) ?? new Map<string, number>();
    byCode.set(code, (byCode.get(code) ?? 0) + 1);
    outcomes.set(run, byCode);
  };
  if (failed.length > 0) {
    const { rows } = await sql<{ created_at: string; code: string; run_id: number | string }>`
      update processing_errors set state = 'open', previous_code = processing_errors.code,
        code = v.code, message = v.message, attempts = processing_errors.attempts + 1,
        last_attempt_at = ${at}, revision = ${revision}
      from ${valuesOf(adapter, failed)}
      where processing_errors.record_id = v.record_id and processing_errors.state = 'queued'
      returning processing_errors.created_at, processing_errors.code, processing_errors.run_id
    `.execute(trx);
    for (const row of rows) {
      counts.push({ createdAt: row.created_at, code: row.code, errors: 1 });
      add(Number(row.run_id), row.code);
    }
  }
  if (posted.length > 0) {
    const { rows } = await sql<{ run_id: number | string }>`
      update processing_errors set state = 'closed', closed_at = ${at}, attempts = attempts + 1,
        last_attempt_at = ${at}
      where ${adapter.integerIn('record_id', posted)} and state = 'queued'
      returning run_id
    `.execute(trx);
    for (const row of rows) add(Number(row.run_id), 'posted');
    closed = rows.length;
  }
  await addRunOutcomes(trx, outcomes, at);
  return { reopened: counts, unqueued: counts.length + closed, closed };
}

/** Adds outcomes to their runs, runs and codes sorted (one lock order), and finishes complete runs. */
async function addRunOutcomes(
  trx: Transaction<Database>,
  outcomes: ReadonlyMap<number, ReadonlyMap<string, number>>,
  at: string,
): Promise<void> {
  for (const run of [...outcomes.keys()].sort((a, b) => a - b)) {
    const byCode = outcomes.get(run) ?? new Map<string, number>();
    const posted = byCode.get('posted') ?? 0;
    let stillFailing = 0;
    for (const [code, n] of byCode) if (code !== 'posted') stillFailing += n;
    await trx
      .updateTable('reprocess_runs')
      .set((eb) => ({
        posted: eb('posted', '+', posted),
        still_failing: eb('still_failing', '+', stillFailing),
      }))
      .where('id', '=', run)
      .execute();
    await trx
      .updateTable('reprocess_runs')
      .set({ state: 'finished', finished_at: at })
      .where('id', '=', run)
      .where('state', '=', 'running')
      .where((eb) => eb(eb('posted', '+', eb.ref('still_failing')), '>=', eb.ref('queued')))
      .execute();
    const rows = [...byCode.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([code, records]) => ({ run_id: run, code, records }));
    await trx
      .insertInto('reprocess_run_outcomes')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['run_id', 'code']).doUpdateSet({
          records: sql`reprocess_run_outcomes.records + excluded.records`,
        }),
      )
      .execute();
  }
}
