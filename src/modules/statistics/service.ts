import type { Clock } from '../../lib/clock.js';
import type {
  DayRange,
  EntityProcessingMetrics,
  IngestionMetrics,
  InstantRange,
  JournalDayMetrics,
  JournalMetrics,
  StatisticsStore,
} from './store.js';

/** A half-open range [from, to) of instants; either end may be open. */
export interface TimeRange {
  from?: Date;
  to?: Date;
}

const DAY_MS = 86_400_000;

/** The UTC day of an instant, `YYYY-MM-DD`. */
function dayOf(at: Date): string {
  return at.toISOString().slice(0, 10);
}

function rangeOf(range: TimeRange): { instants: InstantRange; days: DayRange } {
  const { from, to } = range;
  return {
    instants: {
      ...(from === undefined ? {} : { from: from.toISOString() }),
      ...(to === undefined ? {} : { to: to.toISOString() }),
    },
    // Days of [from, to): a `to` later than midnight still includes its own day.
    days: {
      ...(from === undefined ? {} : { from: dayOf(from) }),
      ...(to === undefined ? {} : { to: dayOf(new Date(Math.ceil(to.getTime() / DAY_MS) * DAY_MS)) }),
    },
  };
}

/**
 * The operational dashboard (docs/reference.md, Statistics). Ranges are half-open `[from, to)`; dates mean
 * midnight UTC. Ingestion metrics select sessions by the time they were opened; journal
 * metrics select journals by core date and processing errors by the time they were recorded.
 */
export class StatisticsService {
  readonly #store: StatisticsStore;
  readonly #clock: Clock;

  constructor(store: StatisticsStore, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  /** Ingestion counters of the sessions opened in the range. */
  ingestionMetrics(query: TimeRange): Promise<IngestionMetrics> {
    return this.#store.ingestionMetrics(rangeOf(query).instants, this.#clock.now().getTime());
  }

  /** Journal counters: journals by core date in the range's days, errors by time recorded. */
  journalMetrics(query: TimeRange): Promise<JournalMetrics> {
    const { days, instants } = rangeOf(query);
    return this.#store.journalMetrics(days, instants);
  }

  /** The journal counters per day that has journals or errors, in date order. */
  journalMetricsByDay(query: TimeRange): Promise<JournalDayMetrics[]> {
    const { days, instants } = rangeOf(query);
    return this.#store.journalMetricsByDay(days, instants);
  }

  processingMetrics(): Promise<EntityProcessingMetrics[]> {
    return this.#store.processingMetrics();
  }
}
