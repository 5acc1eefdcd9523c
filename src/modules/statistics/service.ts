import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import type {
  DayRange,
  EntityProcessingMetrics,
  IngestionMetrics,
  InstantRange,
  JournalDayMetrics,
  JournalMetrics,
  StatisticsStore,
} from './store.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Parses one end of a `from`/`to` query: a date (midnight UTC) or an RFC 3339 date-time. */
function instantOf(name: string, text: string | undefined): string | undefined {
  if (text === undefined || text === '') return undefined;
  const ms = Date.parse(DATE.test(text) ? `${text}T00:00:00Z` : text);
  if (Number.isNaN(ms) || !(DATE.test(text) || /^\d{4}-\d{2}-\d{2}T/.test(text))) {
    throw new AppError('validation-failed', `${name} must be a date YYYY-MM-DD or an RFC 3339 date-time`, {
      errors: [{ path: `/querystring/${name}`, message: 'must be a date or a date-time' }],
    });
  }
  return new Date(ms).toISOString();
}

function rangeOf(query: { from?: string; to?: string }): { instants: InstantRange; days: DayRange } {
  const from = instantOf('from', query.from);
  const to = instantOf('to', query.to);
  // Days of [from, to): a `to` later than midnight still includes its own day.
  const toDay =
    to === undefined ? undefined : to.endsWith('T00:00:00.000Z') ? to.slice(0, 10) : nextDay(to.slice(0, 10));
  return {
    instants: { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) },
    days: {
      ...(from === undefined ? {} : { from: from.slice(0, 10) }),
      ...(toDay === undefined ? {} : { to: toDay }),
    },
  };
}

function nextDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
}

/**
 * The operational dashboard of contract 5. Ranges are half-open `[from, to)`; dates mean
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

  /** Errors: `validation-failed` for a `from`/`to` that is neither a date nor a date-time. */
  ingestionMetrics(query: { from?: string; to?: string }): Promise<IngestionMetrics> {
    return this.#store.ingestionMetrics(rangeOf(query).instants, this.#clock.now().getTime());
  }

  journalMetrics(query: { from?: string; to?: string }): Promise<JournalMetrics> {
    const { days, instants } = rangeOf(query);
    return this.#store.journalMetrics(days, instants);
  }

  journalMetricsByDay(query: { from?: string; to?: string }): Promise<JournalDayMetrics[]> {
    const { days, instants } = rangeOf(query);
    return this.#store.journalMetricsByDay(days, instants);
  }

  processingMetrics(): Promise<EntityProcessingMetrics[]> {
    return this.#store.processingMetrics();
  }
}
