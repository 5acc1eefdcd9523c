import { sql } from 'kysely';
import type { SessionState } from '../modules/ingestion/store.js';
import type {
  DayRange,
  InstantRange,
  JournalDayMetrics,
  StatisticsStore,
} from '../modules/statistics/store.js';
import { sessionStateIs } from './session-state.js';
import type { Store } from './store.js';

const n = (value: unknown): number => Number(value ?? 0);

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
 * - ingestion metrics: the sessions opened in the range, aggregated (they depend on the clock).
 * The counters are kept with the writes (`statistics-counters.ts`, migration 0014) and equal a
 * full count of the rows (test/storage/statistics-counters.test.ts compares them).
 */
export function createStatisticsStore(store: Store): StatisticsStore {
  const { db } = store;

  /** The journal counters of the core dates in `days`. */
  function journalCountsIn(days: DayRange) {
    let query = db.selectFrom('journal_day_counts');
    if (days.from !== undefined) query = query.where('core_date', '>=', days.from);
    if (days.to !== undefined) query = query.where('core_date', '<', days.to);
    return query;
  }

  /**
   * The processing errors recorded in `range`, per day that has some: the counters of the whole
   * days, and the errors of the partial first and last day counted on `processing_errors_created_at`.
   */
  async function errorsByDay(range: InstantRange): Promise<{ day: string; errors: number }[]> {
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
        .where('created_at', '>=', part.from)
        .where('created_at', '<', part.to)
        .select((eb) => [day.as('day'), eb.fn.countAll().as('errors')])
        .groupBy(day)
        .execute();
      for (const row of rows) found.push({ day: row.day, errors: n(row.errors) });
    }
    return found;
  }

  return {
    async ingestionMetrics(range, nowMs) {
      let query = db.selectFrom('ingestions');
      if (range.from !== undefined) query = query.where('opened_on', '>=', range.from);
      if (range.to !== undefined) query = query.where('opened_on', '<', range.to);
      const row = await query
        .select((eb) => {
          const countOf = (state: SessionState) =>
            eb.fn.sum(
              eb
                .case()
                .when(sessionStateIs(eb, state, nowMs))
                .then(eb.lit(1))
                .else(eb.lit(0))
                .end(),
            );
          return [
            eb.fn.countAll().as('ingestions'),
            countOf('pending').as('pending'),
            countOf('closed').as('closed'),
            countOf('expired').as('expired'),
            eb.fn.sum('chunks').as('chunks'),
            eb.fn.sum('api_calls').as('api_calls'),
            eb.fn.sum('total_rows').as('total_rows'),
            eb.fn.sum('success_rows').as('success_rows'),
            eb.fn.sum('failed_rows').as('failed_rows'),
          ];
        })
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
    },

    async journalMetrics(days, range) {
      const row = await journalCountsIn(days)
        .select((eb) => [
          eb.fn.sum(sql`case when posted = 1 then journals else 0 end`).as('posted'),
          eb.fn.sum(sql`case when posted = 0 then journals else 0 end`).as('unposted'),
          eb.fn.sum('lines').as('lines'),
        ])
        .executeTakeFirstOrThrow();
      const errors = (await errorsByDay(range)).reduce((sum, day) => sum + day.errors, 0);
      return {
        postedJournals: n(row.posted),
        unpostedJournals: n(row.unposted),
        totalJournalLines: n(row.lines),
        errors,
        // No approval workflow exists; the fields are kept for clients that read them.
        awaitingApproval: 0,
        deniedApproval: 0,
      };
    },

    async journalMetricsByDay(days, range) {
      const rows = await journalCountsIn(days)
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
      for (const { day, errors } of await errorsByDay(range)) entry(day).errors += errors;
      return [...byDay.values()].sort((a, b) => a.date.localeCompare(b.date));
    },

    async processingMetrics() {
      const rows = await db
        .selectFrom('entity_record_counts')
        .where((eb) => eb(eb('waiting', '+', eb.ref('done')), '>', 0))
        .select(['namespace', 'entity', 'waiting', 'done', 'errors'])
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
