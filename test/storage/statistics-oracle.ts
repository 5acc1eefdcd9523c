import { sql } from 'kysely';
import type { SessionState } from '../../src/modules/ingestion/store.js';
import type { JournalDayMetrics, StatisticsStore } from '../../src/modules/statistics/store.js';
import { sessionStateIs } from '../../src/storage/session-state.js';
import type { Store } from '../../src/storage/store.js';

const n = (value: unknown): number => Number(value ?? 0);

/**
 * The statistics as full counts of the stored rows: the statistics store before its counters
 * (issue 22), kept as the oracle the counters must equal. Processing errors count while open:
 * an error queued or closed by reprocessing is no longer a failed record (issue 23).
 */
export function fullCountStatistics(store: Store): StatisticsStore {
  const { db } = store;
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
      let journals = db.selectFrom('journals');
      if (days.from !== undefined) journals = journals.where('core_date', '>=', days.from);
      if (days.to !== undefined) journals = journals.where('core_date', '<', days.to);
      const row = await journals
        .select((eb) => [
          eb.fn.sum(sql`case when posted = 1 then 1 else 0 end`).as('posted'),
          eb.fn.sum(sql`case when posted = 0 then 1 else 0 end`).as('unposted'),
          eb.fn.sum('line_count').as('lines'),
        ])
        .executeTakeFirstOrThrow();
      let errors = db.selectFrom('processing_errors').where('state', '=', 'open');
      if (range.from !== undefined) errors = errors.where('created_at', '>=', range.from);
      if (range.to !== undefined) errors = errors.where('created_at', '<', range.to);
      const errorRow = await errors.select((eb) => eb.fn.countAll().as('errors')).executeTakeFirstOrThrow();
      return {
        postedJournals: n(row.posted),
        unpostedJournals: n(row.unposted),
        totalJournalLines: n(row.lines),
        errors: n(errorRow.errors),
        awaitingApproval: 0,
        deniedApproval: 0,
      };
    },

    async journalMetricsByDay(days, range) {
      let journals = db.selectFrom('journals');
      if (days.from !== undefined) journals = journals.where('core_date', '>=', days.from);
      if (days.to !== undefined) journals = journals.where('core_date', '<', days.to);
      const rows = await journals
        .select((eb) => [
          'core_date',
          eb.fn.sum(sql`case when posted = 1 then 1 else 0 end`).as('posted'),
          eb.fn.sum(sql`case when posted = 0 then 1 else 0 end`).as('unposted'),
          eb.fn.sum('line_count').as('lines'),
        ])
        .groupBy('core_date')
        .execute();
      let errors = db.selectFrom('processing_errors').where('state', '=', 'open');
      if (range.from !== undefined) errors = errors.where('created_at', '>=', range.from);
      if (range.to !== undefined) errors = errors.where('created_at', '<', range.to);
      const day = sql<string>`substr(created_at, 1, 10)`;
      const errorRows = await errors
        .select((eb) => [day.as('day'), eb.fn.countAll().as('errors')])
        .groupBy(day)
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
        const e = entry(row.core_date);
        e.postedJournals = n(row.posted);
        e.unpostedJournals = n(row.unposted);
        e.totalJournalLines = n(row.lines);
      }
      for (const row of errorRows) entry(row.day).errors = n(row.errors);
      return [...byDay.values()].sort((a, b) => a.date.localeCompare(b.date));
    },

    async processingMetrics() {
      const records = await db
        .selectFrom('records')
        .select((eb) => [
          'namespace',
          'entity',
          eb.fn.sum(sql`case when processing = 1 then 1 else 0 end`).as('pending'),
          eb.fn.sum(sql`case when processing = 0 then 1 else 0 end`).as('done'),
        ])
        .groupBy(['namespace', 'entity'])
        .execute();
      const failures = await db
        .selectFrom('processing_errors')
        .where('state', '=', 'open')
        .select((eb) => ['namespace', 'entity', eb.fn.countAll().as('failed')])
        .groupBy(['namespace', 'entity'])
        .execute();
      const failedOf = new Map(failures.map((f) => [`${f.namespace}/${f.entity}`, n(f.failed)]));
      return records.map((r) => {
        const failed = failedOf.get(`${r.namespace}/${r.entity}`) ?? 0;
        return {
          namespace: r.namespace,
          entity: r.entity,
          pending: n(r.pending),
          processed: n(r.done) - failed,
          failed,
        };
      });
    },
  };
}
