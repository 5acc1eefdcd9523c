/**
 * Counters kept with the writes, so statistics read a few rows instead of counting history
 * (docs/adr/0016-balances-kept-as-journals-post.md).
 */
/** Journals and their lines per core date, posted flag and accounting configuration (migrations 0014, 0015, `statistics-counters.ts`). */
export interface JournalDayCountsTable {
  core_date: string;
  posted: number;
  accounting_config: string;
  journals: number;
  lines: number;
}

/** Processing errors per UTC day (`YYYY-MM-DD`) of their `created_at` and code (migrations 0014, 0015). */
export interface ProcessingErrorDaysTable {
  day: string;
  code: string;
  errors: number;
}

/**
 * Processing errors queued by a reprocessing run (`queued`) and closed by one (`closed`), per
 * stripe of their session (migration 0024, `statistics-counters.ts`); open ones are the sum of
 * `processing_error_days`.
 */
export interface ProcessingErrorStatesTable {
  state: 'queued' | 'closed';
  stripe: number;
  errors: number;
}

/** Records waiting and done, and processing errors, per namespace and entity (migration 0014). */
export interface EntityRecordCountsTable {
  namespace: string;
  entity: string;
  /** The stripe of the key (`counter-stripes.ts`): the rows of a key are summed. */
  stripe: number;
  waiting: number;
  done: number;
  errors: number;
}

/**
 * Sessions folded into the counters (closed, or expired and swept) per UTC day of `opened_on`,
 * with their chunks, API calls and rows (migration 0016, `session-counters.ts`).
 */
export interface SessionDayCountsTable {
  day: string;
  /** The stripe of the day (`counter-stripes.ts`): the rows of a day are summed. */
  stripe: number;
  sessions: number;
  closed: number;
  expired: number;
  chunks: number;
  api_calls: number;
  total_rows: number;
  success_rows: number;
  failed_rows: number;
}

/** Sessions folded into the counters per namespace and entity, closed and expired (migration 0016). */
export interface SessionEntityCountsTable {
  namespace: string;
  entity: string;
  /** The stripe of the key (`counter-stripes.ts`): the rows of a key are summed. */
  stripe: number;
  sessions: number;
  closed: number;
  expired: number;
}

/** Requests awaiting approval and rejected, per UTC day made (migration 0028). */
export interface ApprovalDayCountsTable {
  day: string;
  awaiting: number;
  denied: number;
}
