import type { AccountingStore, ProcessingErrorFilter } from '../../modules/accounting/store.js';
import { countRows } from '../count.js';
import { keyedPageOf } from '../keyed-page.js';
import type { Store } from '../store.js';

/**
 * The reads of processing errors, part of the accounting port (`accounting-store.ts`): by page,
 * and counted from the counters of open errors where the filter allows.
 */
export function createProcessingErrorReads(
  store: Store,
): Pick<AccountingStore, 'listProcessingErrors' | 'countProcessingErrors'> {
  const { db } = store;

  /** The processing errors `filter` selects. */
  function processingErrorsMatching(filter: ProcessingErrorFilter) {
    let query = db.selectFrom('processing_errors').where('state', '=', filter.state ?? 'open');
    if (filter.ingestionId !== undefined) query = query.where('ingestion_id', '=', filter.ingestionId);
    if (filter.code !== undefined) query = query.where('code', '=', filter.code);
    return query;
  }

  return {
    async listProcessingErrors(filter, start, limit) {
      let query = processingErrorsMatching(filter);
      query = 'after' in start ? query.where('id', '>', start.after) : query.offset(start.page * limit);
      const rows = await query
        .selectAll()
        .orderBy('id')
        .limit(limit + 1)
        .execute();
      const page = keyedPageOf(rows, limit, (row) => Number(row.id));
      return {
        rows: page.rows.map((r) => ({
          ingestionId: r.ingestion_id,
          namespace: r.namespace,
          entity: r.entity,
          code: r.code,
          message: r.message,
          record: JSON.parse(r.record) as Record<string, unknown>,
          at: r.created_at,
          revision: Number(r.revision),
          id: Number(r.id),
          recordId: Number(r.record_id),
          state: r.state,
          attempts: Number(r.attempts),
          lastAttemptAt: r.last_attempt_at ?? r.created_at,
          previousCode: r.previous_code,
          closedAt: r.closed_at,
        })),
        next: page.next,
      };
    },

    async countProcessingErrors(filter) {
      // A session's errors are counted on their index (`processing_errors_ingestion`), and the
      // errors queued or closed by reprocessing on `processing_errors_state`.
      if (filter.ingestionId !== undefined || (filter.state ?? 'open') !== 'open')
        return countRows(processingErrorsMatching(filter));
      // Otherwise from the counters of open errors per day and code (`statistics-counters.ts`).
      let counters = db.selectFrom('processing_error_days');
      if (filter.code !== undefined) counters = counters.where('code', '=', filter.code);
      const row = await counters
        .select((eb) => eb.fn.sum<number | string | null>('errors').as('total'))
        .executeTakeFirstOrThrow();
      return Number(row.total ?? 0);
    },
  };
}
