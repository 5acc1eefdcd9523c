/**
 * The statistics counters (migration 0014), kept in the same transaction as the writes that
 * change what they count, so that they always equal a full count of the rows: journals per core
 * date and posted flag (processing's write path, posting), processing errors per day and records
 * per entity (chunk writes, processing). The configuration wipe deletes them with the rows.
 *
 * Every function adds rows aggregated per call and sorted by key with one upsert, and is called
 * last in its transaction, after the kept balances: on PostgreSQL several processing rounds and
 * instances add to the same counter rows at once, and taking them last, in key order, keeps the
 * lock order of `accounting/claim-postgres.ts`'s header (counters after everything else) free of
 * cycles. Among themselves they are taken in one order: journal days, processing error days,
 * entities, then the session counters of `session-counters.ts` (days, entities).
 */
import { sql, type Transaction } from 'kysely';
import type { Database } from './schema.js';
import { clearSessionCounters } from './session-counters.js';

/** Journals and their lines to add to one core date and posted flag (negative to take away). */
export interface JournalCount {
  coreDate: string;
  posted: number;
  journals: number;
  lines: number;
}

/** Adds `counts` to `journal_day_counts`, summed per core date and posted flag. */
export async function countJournals(
  trx: Transaction<Database>,
  counts: readonly JournalCount[],
): Promise<void> {
  const byKey = new Map<string, JournalCount>();
  for (const c of counts) {
    const key = `${c.coreDate}/${c.posted}`;
    const found = byKey.get(key);
    if (found === undefined) byKey.set(key, { ...c });
    else {
      found.journals += c.journals;
      found.lines += c.lines;
    }
  }
  const rows = [...byKey.values()]
    .filter((c) => c.journals !== 0 || c.lines !== 0)
    .sort((a, b) => (a.coreDate < b.coreDate ? -1 : a.coreDate > b.coreDate ? 1 : a.posted - b.posted));
  if (rows.length === 0) return;
  await trx
    .insertInto('journal_day_counts')
    .values(
      rows.map((c) => ({ core_date: c.coreDate, posted: c.posted, journals: c.journals, lines: c.lines })),
    )
    .onConflict((oc) =>
      oc.columns(['core_date', 'posted']).doUpdateSet({
        journals: sql`journal_day_counts.journals + excluded.journals`,
        lines: sql`journal_day_counts.lines + excluded.lines`,
      }),
    )
    .execute();
}

/** Adds processing errors recorded at the instants `createdAt` to their days' counters. */
export async function countProcessingErrors(
  trx: Transaction<Database>,
  createdAt: readonly string[],
): Promise<void> {
  const byDay = new Map<string, number>();
  for (const at of createdAt) {
    const day = at.slice(0, 10);
    byDay.set(day, (byDay.get(day) ?? 0) + 1);
  }
  if (byDay.size === 0) return;
  const rows = [...byDay].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  await trx
    .insertInto('processing_error_days')
    .values(rows.map(([day, errors]) => ({ day, errors })))
    .onConflict((oc) =>
      oc.columns(['day']).doUpdateSet({ errors: sql`processing_error_days.errors + excluded.errors` }),
    )
    .execute();
}

/** Records that started or stopped waiting, records done and processing errors of one entity. */
export interface EntityRecordCount {
  namespace: string;
  entity: string;
  waiting: number;
  done: number;
  errors: number;
}

/** Adds `count` to its entity's row of `entity_record_counts`. */
export async function countEntityRecords(
  trx: Transaction<Database>,
  count: EntityRecordCount,
): Promise<void> {
  if (count.waiting === 0 && count.done === 0 && count.errors === 0) return;
  await trx
    .insertInto('entity_record_counts')
    .values({ ...count })
    .onConflict((oc) =>
      oc.columns(['namespace', 'entity']).doUpdateSet({
        waiting: sql`entity_record_counts.waiting + excluded.waiting`,
        done: sql`entity_record_counts.done + excluded.done`,
        errors: sql`entity_record_counts.errors + excluded.errors`,
      }),
    )
    .execute();
}

/** Deletes every counter: the configuration wipe deletes every row they count. */
export async function clearStatisticsCounters(trx: Transaction<Database>): Promise<void> {
  await trx.deleteFrom('journal_day_counts').execute();
  await trx.deleteFrom('processing_error_days').execute();
  await trx.deleteFrom('entity_record_counts').execute();
  await clearSessionCounters(trx);
}
