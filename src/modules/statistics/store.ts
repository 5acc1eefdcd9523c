/** Ingestion counters for the sessions opened in a time range. */
export interface IngestionMetrics {
  ingestions: number;
  pendingIngestions: number;
  closedIngestions: number;
  expiredIngestions: number;
  chunks: number;
  apiCalls: number;
  totalRows: number;
  successRows: number;
  failedRows: number;
}

export interface JournalMetrics {
  postedJournals: number;
  unpostedJournals: number;
  totalJournalLines: number;
  errors: number;
  awaitingApproval: number;
  deniedApproval: number;
}

export interface JournalDayMetrics {
  date: string;
  postedJournals: number;
  unpostedJournals: number;
  totalJournalLines: number;
  errors: number;
}

export interface EntityProcessingMetrics {
  namespace: string;
  entity: string;
  pending: number;
  processed: number;
  failed: number;
}

/** A half-open range [from, to) of RFC 3339 instants (either end may be open). */
export interface InstantRange {
  from?: string;
  to?: string;
}

/** A half-open range [from, to) of calendar days `YYYY-MM-DD`. */
export interface DayRange {
  from?: string;
  to?: string;
}

/** The storage port of the statistics module: aggregate queries only, computed in SQL. */
export interface StatisticsStore {
  ingestionMetrics(range: InstantRange, nowMs: number): Promise<IngestionMetrics>;
  journalMetrics(days: DayRange, range: InstantRange): Promise<JournalMetrics>;
  journalMetricsByDay(days: DayRange, range: InstantRange): Promise<JournalDayMetrics[]>;
  processingMetrics(): Promise<EntityProcessingMetrics[]>;
}
