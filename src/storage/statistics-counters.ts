/**
 * The statistics counters (migrations 0014 and 0015), kept in the same transaction as the writes
 * that change what they count, so that they always equal a full count of the rows: journals per
 * core date, posted flag and accounting configuration (processing's write path, posting),
 * processing errors per day and code, and records per entity (chunk writes, processing). The
 * statistics read them, and so do the totals of the journals and processing errors lists. The
 * configuration wipe deletes them with the rows.
 *
 * Every function adds rows aggregated per call and sorted by key with one upsert, and is called
 * last in its transaction, after the kept balances: on PostgreSQL several processing rounds and
 * instances add to the same counter rows at once, and taking them last, in key order, keeps the
 * lock order of `accounting/claim-postgres.ts`'s header (counters after everything else) free of
 * cycles. Among themselves they are taken in one order: journal days, processing error days,
 * entities, processing error states, then the session counters of `session-counters.ts` (days,
 * entities).
 */
import { type Expression, type QueryCreator, type SqlBool, sql, type Transaction } from 'kysely';
import { counterStripe } from './counter-stripes.js';
import type { Database } from './schema.js';
import { clearSessionCounters } from './session-counters.js';

/** Journals and their lines to add to one core date, posted flag and accounting configuration (negative to take away). */
export interface JournalCount {
  coreDate: string;
  posted: number;
  accountingConfig: string;
  journals: number;
  lines: number;
}

/** Orders text keys as the database does (`<` on JavaScript strings: by UTF-16 code unit). */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Adds `counts` to `journal_day_counts`, summed per core date, posted flag and accounting configuration. */
export async function countJournals(
  trx: Transaction<Database>,
  counts: readonly JournalCount[],
): Promise<void> {
  const byKey = new Map<string, JournalCount>();
  for (const c of counts) {
    const key = `${c.coreDate}/${c.posted}/${c.accountingConfig}`;
    const found = byKey.get(key);
    if (found === undefined) byKey.set(key, { ...c });
    else {
      found.journals += c.journals;
      found.lines += c.lines;
    }
  }
  const rows = [...byKey.values()]
    .filter((c) => c.journals !== 0 || c.lines !== 0)
    .sort(
      (a, b) =>
        compareText(a.coreDate, b.coreDate) ||
        a.posted - b.posted ||
        compareText(a.accountingConfig, b.accountingConfig),
    );
  if (rows.length === 0) return;
  await trx
    .insertInto('journal_day_counts')
    .values(
      rows.map((c) => ({
        core_date: c.coreDate,
        posted: c.posted,
        accounting_config: c.accountingConfig,
        journals: c.journals,
        lines: c.lines,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['core_date', 'posted', 'accounting_config']).doUpdateSet({
        journals: sql`journal_day_counts.journals + excluded.journals`,
        lines: sql`journal_day_counts.lines + excluded.lines`,
      }),
    )
    .execute();
}

/** Processing errors recorded at one instant with one code. */
export interface ProcessingErrorCount {
  createdAt: string;
  code: string;
  errors: number;
}

/** Adds processing errors to the counters of their day (of `createdAt`) and code. */
export async function countProcessingErrors(
  trx: Transaction<Database>,
  counts: readonly ProcessingErrorCount[],
): Promise<void> {
  const byKey = new Map<string, { day: string; code: string; errors: number }>();
  for (const c of counts) {
    const day = c.createdAt.slice(0, 10);
    const key = `${day}/${c.code}`;
    const found = byKey.get(key);
    if (found === undefined) byKey.set(key, { day, code: c.code, errors: c.errors });
    else found.errors += c.errors;
  }
  const rows = [...byKey.values()]
    .filter((c) => c.errors !== 0)
    .sort((a, b) => compareText(a.day, b.day) || compareText(a.code, b.code));
  if (rows.length === 0) return;
  await trx
    .insertInto('processing_error_days')
    .values(rows)
    .onConflict((oc) =>
      oc
        .columns(['day', 'code'])
        .doUpdateSet({ errors: sql`processing_error_days.errors + excluded.errors` }),
    )
    .execute();
}

/**
 * Records that started or stopped waiting, records done and processing errors of one entity, in
 * one session (whose stripe of the entity's counter they go to, `counter-stripes.ts`).
 */
export interface EntityRecordCount {
  ingestionId: string;
  namespace: string;
  entity: string;
  waiting: number;
  done: number;
  errors: number;
}

/**
 * The statement that adds `count` to its entity's row of `entity_record_counts` in its session's
 * stripe, to run alone or inside the caller's statement, there only if `onlyIf` holds; none when
 * it adds nothing.
 */
export function entityRecordCountsUpsert(count: EntityRecordCount, onlyIf?: Expression<SqlBool>) {
  const { ingestionId, ...counts } = count;
  if (counts.waiting === 0 && counts.done === 0 && counts.errors === 0) return undefined;
  const row = { ...counts, stripe: counterStripe(ingestionId) };
  return (qc: QueryCreator<Database>) => {
    const into = qc.insertInto('entity_record_counts');
    const added =
      onlyIf === undefined
        ? into.values(row)
        : into
            .columns(['namespace', 'entity', 'waiting', 'done', 'errors', 'stripe'])
            .expression(
              qc
                .selectNoFrom((eb) => [
                  eb.val(row.namespace).as('namespace'),
                  eb.val(row.entity).as('entity'),
                  eb.val(row.waiting).as('waiting'),
                  eb.val(row.done).as('done'),
                  eb.val(row.errors).as('errors'),
                  eb.val(row.stripe).as('stripe'),
                ])
                .where(onlyIf),
            );
    return added.onConflict((oc) =>
      oc.columns(['namespace', 'entity', 'stripe']).doUpdateSet({
        waiting: sql`entity_record_counts.waiting + excluded.waiting`,
        done: sql`entity_record_counts.done + excluded.done`,
        errors: sql`entity_record_counts.errors + excluded.errors`,
      }),
    );
  };
}

/** Adds `count` to its entity's row of `entity_record_counts` in its session's stripe. */
export async function countEntityRecords(
  trx: Transaction<Database>,
  count: EntityRecordCount,
): Promise<void> {
  await entityRecordCountsUpsert(count)?.(trx).execute();
}

/** Processing errors of one session that a reprocessing run queued, or settled (negative), and closed. */
export interface ErrorStateCount {
  ingestionId: string;
  queued: number;
  closed: number;
}

/**
 * Adds `counts` to `processing_error_states`, each to the stripe of its session, queued before
 * closed. Called after the entity counters: the last counter rows a transaction takes.
 */
export async function countErrorStates(
  trx: Transaction<Database>,
  counts: readonly ErrorStateCount[],
): Promise<void> {
  const byKey = new Map<string, { state: 'queued' | 'closed'; stripe: number; errors: number }>();
  for (const c of counts) {
    const stripe = counterStripe(c.ingestionId);
    for (const [state, errors] of [
      ['queued', c.queued],
      ['closed', c.closed],
    ] as const) {
      const key = `${state}/${String(stripe).padStart(2, '0')}`;
      const found = byKey.get(key);
      if (found === undefined) byKey.set(key, { state, stripe, errors });
      else found.errors += errors;
    }
  }
  const rows = [...byKey.entries()]
    .filter(([, c]) => c.errors !== 0)
    .sort(([a], [b]) => compareText(a, b))
    .map(([, c]) => c);
  if (rows.length === 0) return;
  await trx
    .insertInto('processing_error_states')
    .values(rows)
    .onConflict((oc) =>
      oc
        .columns(['state', 'stripe'])
        .doUpdateSet({ errors: sql`processing_error_states.errors + excluded.errors` }),
    )
    .execute();
}

/** Deletes every counter: the configuration wipe deletes every row they count. */
export async function clearStatisticsCounters(trx: Transaction<Database>): Promise<void> {
  await trx.deleteFrom('journal_day_counts').execute();
  await trx.deleteFrom('processing_error_days').execute();
  await trx.deleteFrom('processing_error_states').execute();
  await trx.deleteFrom('entity_record_counts').execute();
  await clearSessionCounters(trx);
}
