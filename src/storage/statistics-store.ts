import { type Expression, type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { SessionState } from '../modules/ingestion/store.js';
import type {
  DayRange,
  IngestionMetrics,
  InstantRange,
  JournalDayMetrics,
  StatisticsStore,
} from '../modules/statistics/store.js';
import type { Database } from './schema.js';
import { sessionStateIs } from './session-state.js';
import type { Store } from './store.js';

const n = (value: unknown): number => Number(value ?? 0);

/** The ingestion metrics of a range without sessions: a range that ends where it starts. */
const NO_SESSIONS: IngestionMetrics = {
  ingestions: 0,
  pendingIngestions: 0,
  closedIngestions: 0,
  expiredIngestions: 0,
  chunks: 0,
  apiCalls: 0,
  totalRows: 0,
  successRows: 0,
  failedRows: 0,
};

/** One part of the ingestion metrics' union: sums of sessions, or of their counters. */
interface SessionSums {
  ingestions: number;
  pending: number;
  closed: number;
  expired: number;
  chunks: number;
  api_calls: number;
  total_rows: number;
  success_rows: number;
  failed_rows: number;
}

/** Midnight UTC of a day `YYYY-MM-DD`, as the instants of a range are written. */
const midnightOf = (day: string): string => `${day}T00:00:00.000Z`;

/** The day after `day`. */
function nextDay(day: string): string {
  return new Date(Date.parse(midnightOf(day)) + 86_400_000).toISOString().slice(0, 10);
}

/**
 * `range` as the whole days it covers (what day counters answer; undefined when none) and the
 * bounded parts of days at its ends, at most two, that counters cannot answer.
 */
export function splitByDays(range: InstantRange): {
  wholeDays: DayRange | undefined;
  partial: { from: string; to: string }[];
} {
  const { from, to } = range;
  let wholeFrom: string | undefined;
  if (from !== undefined) {
    const day = from.slice(0, 10);
    wholeFrom = from === midnightOf(day) ? day : nextDay(day);
  }
  const wholeTo = to?.slice(0, 10);
  if (from !== undefined && to !== undefined && wholeFrom !== undefined && wholeTo !== undefined) {
    if (wholeFrom >= wholeTo) return { wholeDays: undefined, partial: from < to ? [{ from, to }] : [] };
  }
  const partial: { from: string; to: string }[] = [];
  if (from !== undefined && wholeFrom !== undefined && from !== midnightOf(wholeFrom))
    partial.push({ from, to: midnightOf(wholeFrom) });
  if (to !== undefined && wholeTo !== undefined && to !== midnightOf(wholeTo))
    partial.push({ from: midnightOf(wholeTo), to });
  return {
    wholeDays: {
      ...(wholeFrom === undefined ? {} : { from: wholeFrom }),
      ...(wholeTo === undefined ? {} : { to: wholeTo }),
    },
    partial,
  };
}

/**
 * The statistics port, the same statements on both dialects. What each endpoint reads:
 * - journal metrics and journal metrics by day: the journal counters of the core dates asked
 *   (`journal_day_counts`), and the processing errors of the instants asked: the counters of the
 *   whole days (`processing_error_days`), the errors of a partial first and last day counted on
 *   the index `processing_errors_created_at` (`splitByDays`);
 * - processing metrics: one counter row per entity (`entity_record_counts`);
 * - ingestion metrics: the sessions opened in the instants asked: for the whole days, the session
 *   counters (`session_day_counts`) and the sessions not counted yet (open, or expired and not
 *   yet swept: their state depends on the clock), on the index `ingestions_uncounted`; for a
 *   partial first and last day, the sessions opened in it, on `ingestions_page_order`.
 * The counters are kept with the writes (`statistics-counters.ts`, migration 0014;
 * `session-counters.ts`, migration 0016) and equal a full count of the rows
 * (test/storage/statistics-counters.test.ts and session-counters.test.ts compare them).
 */
export function createStatisticsStore(store: Store): StatisticsStore {
  const { db } = store;
  return {
    ingestionMetrics: (range, nowMs) => ingestionMetrics(db, range, nowMs),

    ...createJournalStatistics(db),

    async processingMetrics() {
      const rows = await db
        .selectFrom('entity_record_counts')
        .groupBy(['namespace', 'entity'])
        .having(sql`sum(waiting + done)`, '>', 0)
        .select([
          'namespace',
          'entity',
          sql<number | string>`sum(waiting)`.as('waiting'),
          sql<number | string>`sum(done)`.as('done'),
          sql<number | string>`sum(errors)`.as('errors'),
        ])
        .orderBy('namespace')
        .orderBy('entity')
        .execute();
      return rows.map((r) => ({
        namespace: r.namespace,
        entity: r.entity,
        pending: n(r.waiting),
        processed: n(r.done) - n(r.errors),
        failed: n(r.errors),
      }));
    },
  };
}

/** The journal metrics of the statistics port (see `createStatisticsStore`). */
function createJournalStatistics(
  db: Kysely<Database>,
): Pick<StatisticsStore, 'journalMetrics' | 'journalMetricsByDay'> {
  return {
    async journalMetrics(days, range) {
      const row = await journalCountsIn(db, days)
        .select((eb) => [
          eb.fn.sum(sql`case when posted = 1 then journals else 0 end`).as('posted'),
          eb.fn.sum(sql`case when posted = 0 then journals else 0 end`).as('unposted'),
          eb.fn.sum('lines').as('lines'),
        ])
        .executeTakeFirstOrThrow();
      const errors = (await errorsByDay(db, range)).reduce((sum, day) => sum + day.errors, 0);
      // Approval requests by the UTC day they were made: those waiting now, and those rejected
      // (docs/domain/approvals.md), from the counters kept with each change of status.
      let approvals = db.selectFrom('approval_day_counts');
      if (days.from !== undefined) approvals = approvals.where('day', '>=', days.from);
      if (days.to !== undefined) approvals = approvals.where('day', '<', days.to);
      const approvalRow = await approvals
        .select((eb) => [eb.fn.sum('awaiting').as('awaiting'), eb.fn.sum('denied').as('denied')])
        .executeTakeFirstOrThrow();
      return {
        postedJournals: n(row.posted),
        unpostedJournals: n(row.unposted),
        totalJournalLines: n(row.lines),
        errors,
        awaitingApproval: n(approvalRow.awaiting),
        deniedApproval: n(approvalRow.denied),
      };
    },

    async journalMetricsByDay(days, range) {
      const rows = await journalCountsIn(db, days)
        .select((eb) => [
          'core_date',
          eb.fn.sum(sql`case when posted = 1 then journals else 0 end`).as('posted'),
          eb.fn.sum(sql`case when posted = 0 then journals else 0 end`).as('unposted'),
          eb.fn.sum('lines').as('lines'),
        ])
        .groupBy('core_date')
        .execute();
      const byDay = new Map<string, JournalDayMetrics>();
      const entry = (date: string) => {
        let found = byDay.get(date);
        if (found === undefined) {
          found = { date, postedJournals: 0, unpostedJournals: 0, totalJournalLines: 0, errors: 0 };
          byDay.set(date, found);
        }
        return found;
      };
      for (const row of rows) {
        // A day whose journals were all taken away keeps a row of zeros: it has no journals.
        if (n(row.posted) + n(row.unposted) === 0) continue;
        const e = entry(row.core_date);
        e.postedJournals = n(row.posted);
        e.unpostedJournals = n(row.unposted);
        e.totalJournalLines = n(row.lines);
      }
      // A day whose errors were all queued or closed by reprocessing keeps a counter row at 0.
      for (const { day, errors } of await errorsByDay(db, range))
        if (errors !== 0) entry(day).errors += errors;
      return [...byDay.values()].sort((a, b) => a.date.localeCompare(b.date));
    },
  };
}

/** The journal counters of the core dates in `days`. */
function journalCountsIn(db: Kysely<Database>, days: DayRange) {
  let query = db.selectFrom('journal_day_counts');
  if (days.from !== undefined) query = query.where('core_date', '>=', days.from);
  if (days.to !== undefined) query = query.where('core_date', '<', days.to);
  return query;
}

/**
 * The processing errors recorded in `range`, per day that has some: the counters of the whole
 * days, and the errors of the partial first and last day counted on `processing_errors_created_at`.
 */
async function errorsByDay(
  db: Kysely<Database>,
  range: InstantRange,
): Promise<{ day: string; errors: number }[]> {
  const { wholeDays, partial } = splitByDays(range);
  const found: { day: string; errors: number }[] = [];
  if (wholeDays !== undefined) {
    let counters = db.selectFrom('processing_error_days');
    if (wholeDays.from !== undefined) counters = counters.where('day', '>=', wholeDays.from);
    if (wholeDays.to !== undefined) counters = counters.where('day', '<', wholeDays.to);
    const rows = await counters.select(['day', 'errors']).execute();
    for (const row of rows) found.push({ day: row.day, errors: n(row.errors) });
  }
  for (const part of partial) {
    const day = sql<string>`substr(created_at, 1, 10)`;
    const rows = await db
      .selectFrom('processing_errors')
      // The counters count open errors: queued and closed ones are reprocessing's (migration 0018).
      .where('state', '=', 'open')
      .where('created_at', '>=', part.from)
      .where('created_at', '<', part.to)
      .select((eb) => [day.as('day'), eb.fn.countAll().as('errors')])
      .groupBy(day)
      .execute();
    for (const row of rows) found.push({ day: row.day, errors: n(row.errors) });
  }
  return found;
}

/** The sums of the session rows `query` selects, their states as of `nowMs`. */
function sessionSums(query: SelectQueryBuilder<Database, 'ingestions', object>, nowMs: number) {
  return query.select((eb) => {
    const countOf = (state: SessionState) =>
      sql<number>`sum(case when ${sessionStateIs(eb, state, nowMs)} then 1 else 0 end)`;
    return [
      sql<number>`count(*)`.as('ingestions'),
      countOf('pending').as('pending'),
      countOf('closed').as('closed'),
      countOf('expired').as('expired'),
      sql<number>`sum(chunks)`.as('chunks'),
      sql<number>`sum(api_calls)`.as('api_calls'),
      sql<number>`sum(total_rows)`.as('total_rows'),
      sql<number>`sum(success_rows)`.as('success_rows'),
      sql<number>`sum(failed_rows)`.as('failed_rows'),
    ];
  });
}

/** The sessions opened from `from` (included) to `to` (excluded), either end open when undefined. */
function openedIn(db: Kysely<Database>, from: string | undefined, to: string | undefined) {
  let query = db.selectFrom('ingestions');
  if (from !== undefined) query = query.where('opened_on', '>=', from);
  if (to !== undefined) query = query.where('opened_on', '<', to);
  return query;
}

/** The sums of the session counters of the whole days `wholeDays`, as a part of the metrics' union. */
function counterSums(db: Kysely<Database>, wholeDays: DayRange): Expression<SessionSums> {
  let counters = db.selectFrom('session_day_counts');
  if (wholeDays.from !== undefined) counters = counters.where('day', '>=', wholeDays.from);
  if (wholeDays.to !== undefined) counters = counters.where('day', '<', wholeDays.to);
  return counters.select([
    sql<number>`sum(sessions)`.as('ingestions'),
    sql<number>`0`.as('pending'),
    sql<number>`sum(closed)`.as('closed'),
    sql<number>`sum(expired)`.as('expired'),
    sql<number>`sum(chunks)`.as('chunks'),
    sql<number>`sum(api_calls)`.as('api_calls'),
    sql<number>`sum(total_rows)`.as('total_rows'),
    sql<number>`sum(success_rows)`.as('success_rows'),
    sql<number>`sum(failed_rows)`.as('failed_rows'),
  ]);
}

/**
 * `StatisticsStore.ingestionMetrics` (see `createStatisticsStore`): the sums of the parts of
 * `range`, the partial days' sessions and the whole days' counters with the sessions not counted
 * yet, in one statement.
 */
async function ingestionMetrics(
  db: Kysely<Database>,
  range: InstantRange,
  nowMs: number,
): Promise<IngestionMetrics> {
  const { wholeDays, partial } = splitByDays(range);
  // The partial first and last day: every session opened in them, on `ingestions_page_order`.
  const parts = partial.map((part) => sessionSums(openedIn(db, part.from, part.to), nowMs));
  let countersPart: Expression<SessionSums> | undefined;
  if (wholeDays !== undefined) {
    // The whole days: the day counters, and the sessions not counted yet on `ingestions_uncounted`.
    parts.push(
      sessionSums(
        openedIn(
          db,
          wholeDays.from === undefined ? undefined : midnightOf(wholeDays.from),
          wholeDays.to === undefined ? undefined : midnightOf(wholeDays.to),
        ).where('counted', '=', sql.lit(0)),
        nowMs,
      ),
    );
    countersPart = counterSums(db, wholeDays);
  }
  const [first, ...rest] = parts;
  if (first === undefined) return { ...NO_SESSIONS };
  let union = rest.reduce((all, part) => all.unionAll(part), first);
  if (countersPart !== undefined) union = union.unionAll(countersPart);
  // One statement, so that a session counted meanwhile is seen exactly once.
  const row = await db
    .selectFrom(union.as('parts'))
    .select([
      sql<string>`sum(ingestions)`.as('ingestions'),
      sql<string>`sum(pending)`.as('pending'),
      sql<string>`sum(closed)`.as('closed'),
      sql<string>`sum(expired)`.as('expired'),
      sql<string>`sum(chunks)`.as('chunks'),
      sql<string>`sum(api_calls)`.as('api_calls'),
      sql<string>`sum(total_rows)`.as('total_rows'),
      sql<string>`sum(success_rows)`.as('success_rows'),
      sql<string>`sum(failed_rows)`.as('failed_rows'),
    ])
    .executeTakeFirstOrThrow();
  return {
    ingestions: n(row.ingestions),
    pendingIngestions: n(row.pending),
    closedIngestions: n(row.closed),
    expiredIngestions: n(row.expired),
    chunks: n(row.chunks),
    apiCalls: n(row.api_calls),
    totalRows: n(row.total_rows),
    successRows: n(row.success_rows),
    failedRows: n(row.failed_rows),
  };
}
