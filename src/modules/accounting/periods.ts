/**
 * Fiscal periods and which of them are open (docs/domain/accounting.md, Periods). A `gregorian`
 * fiscal calendar has calendar months as periods; its fiscal years end with the month of
 * `endOfFirstYear` and are numbered from `startYear`. The current period (the one holding the
 * node's business date) is open, the previous one stays open for the node config's grace time after
 * the current one starts, older ones are closed, and later ones are open (their journals wait
 * unposted). Every supported calendar type has the same periods, so open and closed do not depend
 * on the calendar; the calendar names a period in messages. An authorised user may also close a
 * period early, lock it, or reopen it (docs/domain/accounting.md, Periods closed, locked and
 * reopened by hand): those manual states, per node and accounting configuration, take precedence
 * over the calendar, and reach the engine as `PeriodStates` in the processing context.
 */
import type { FiscalCalendar } from '../configuration/model.js';
import { DAY_MS, firstDayOfMonthIndex, formatIsoDate, monthIndexOf, parseIsoDate } from './dates.js';

/** Months in a fiscal year of a gregorian calendar. */
export const FISCAL_YEAR_MONTHS = 12;

/** A fiscal calendar reduced to what period arithmetic needs; built once per configuration. */
export interface PreparedFiscalCalendar {
  name: string;
  /** Month index (`year * 12 + month - 1`) of the month that holds `endOfFirstYear`. */
  firstYearLastMonthIndex: number;
  startYear: number;
}

/** One fiscal period. */
export interface FiscalPeriod {
  /** Fiscal year number (the first fiscal year is `startYear`). */
  fiscalYear: number;
  /** 1..12 within the fiscal year. */
  number: number;
  /** ISO date of the first day. */
  firstDay: string;
  /** ISO date of the last day. */
  lastDay: string;
}

/** The open window of a node and accounting configuration at one instant. */
export interface OpenPeriods {
  /** Day number of the first day of the current period. */
  currentFirstDay: number;
  /** Whether the previous period is still in its grace time. */
  previousOpen: boolean;
  /** Day number of the first day of the earliest open period; days before it are closed. */
  earliestOpenFirstDay: number;
}

/**
 * A period's state set by hand: `closed` (closed early, or closed again after a reopening),
 * `locked` (nothing may be posted, reversed or moved into it), `reopened` (open again, whatever the
 * calendar says, until closed again).
 */
export type ManualPeriodState = 'closed' | 'locked' | 'reopened';

/** One period with a manual state, as day numbers. */
export interface ManualPeriod {
  firstDay: number;
  lastDay: number;
  state: ManualPeriodState;
}

/**
 * Every manual period state, by node and accounting configuration ({@link periodStatesKey}), at
 * one `version` of the store's counter: the counter goes up with every change, so a processor
 * holding an older version knows to read them again. Treat as immutable: a change is a new object,
 * which is what the memo compares.
 */
export interface PeriodStates {
  version: number;
  byNodeConfig: ReadonlyMap<string, readonly ManualPeriod[]>;
}

/** No manual state anywhere: the calendar alone decides. */
export const CALENDAR_ONLY: PeriodStates = { version: 0, byNodeConfig: new Map() };

const NO_MANUAL_PERIODS: readonly ManualPeriod[] = [];

/** The key of a node (its `nodeKeyOf`) and accounting configuration in `PeriodStates`. */
export function periodStatesKey(nodeKey: string, accountingConfig: string): string {
  return `${nodeKey}\u0002${accountingConfig}`;
}

/** The manual periods of a node and accounting configuration, none when it has none. */
export function manualPeriodsOf(
  states: PeriodStates,
  nodeKey: string,
  accountingConfig: string,
): readonly ManualPeriod[] {
  return states.byNodeConfig.get(periodStatesKey(nodeKey, accountingConfig)) ?? NO_MANUAL_PERIODS;
}

/** A stored manual state as the store reads it. */
export interface StoredManualPeriod {
  /** The node's `nodeKeyOf`. */
  nodeKey: string;
  accountingConfig: string;
  firstDay: string;
  lastDay: string;
  state: ManualPeriodState;
}

/** The `PeriodStates` of the stored manual states at `version`; a row with an unreadable date is skipped. */
export function periodStatesOf(version: number, rows: readonly StoredManualPeriod[]): PeriodStates {
  const byNodeConfig = new Map<string, ManualPeriod[]>();
  for (const row of rows) {
    const firstDay = parseIsoDate(row.firstDay);
    const lastDay = parseIsoDate(row.lastDay);
    if (firstDay === undefined || lastDay === undefined) continue;
    const key = periodStatesKey(row.nodeKey, row.accountingConfig);
    const list = byNodeConfig.get(key) ?? [];
    list.push({ firstDay, lastDay, state: row.state });
    byNodeConfig.set(key, list);
  }
  return { version, byNodeConfig };
}

/**
 * The open window of a node config at the last clock reading asked about. Every event of a chunk
 * is processed with the same `now`, so the memo turns the period check of a journal into a
 * comparison on the hot path, as `ZoneClock` does for the time zone. Created once per
 * configuration; `nowMs` is `NaN` until first used.
 */
export interface OpenWindowMemo {
  nowMs: number;
  pinnedDay: number | undefined;
  /** The node's business day at `nowMs`. */
  businessDay: number;
  earliestOpenFirstDay: number;
  /** The manual states the memo was computed with; a new object means they changed. */
  states: PeriodStates | undefined;
  /** This node config's manual periods in `states`; usually none, so the check stays a comparison. */
  manual: readonly ManualPeriod[];
}

/** A memo that matches no clock reading yet. */
export function emptyOpenWindowMemo(): OpenWindowMemo {
  return {
    nowMs: Number.NaN,
    pinnedDay: undefined,
    businessDay: 0,
    earliestOpenFirstDay: 0,
    states: undefined,
    manual: NO_MANUAL_PERIODS,
  };
}

/**
 * Reduces a configured fiscal calendar, or returns `undefined` when `endOfFirstYear` is not an ISO
 * date. When `endOfFirstYear` is not a month end, the fiscal year ends with the month that holds
 * it (choice: gregorian periods are whole calendar months).
 */
export function prepareFiscalCalendar(calendar: FiscalCalendar): PreparedFiscalCalendar | undefined {
  const lastDay = parseIsoDate(calendar.endOfFirstYear);
  if (lastDay === undefined) return undefined;
  return {
    name: calendar.name,
    firstYearLastMonthIndex: monthIndexOf(lastDay),
    startYear: calendar.startYear,
  };
}

/** Day number of the first day of the period that holds a day (gregorian: its month). */
export function periodFirstDayOf(dayNumber: number): number {
  return firstDayOfMonthIndex(monthIndexOf(dayNumber));
}

/** Day number of the first day of the period before the one that starts on `periodFirstDay`. */
export function previousPeriodFirstDayOf(periodFirstDay: number): number {
  return firstDayOfMonthIndex(monthIndexOf(periodFirstDay) - 1);
}

/** Day number of the first day of the period after the one that holds `dayNumber`. */
export function nextPeriodFirstDayOf(dayNumber: number): number {
  return firstDayOfMonthIndex(monthIndexOf(dayNumber) + 1);
}

/** Day number of the last day of the period that holds `dayNumber`. */
export function periodLastDayOf(dayNumber: number): number {
  return nextPeriodFirstDayOf(dayNumber) - 1;
}

/**
 * The fiscal period that holds a day number: its fiscal year, its number within the year and its
 * first and last days. Days before the first fiscal year belong to earlier fiscal years, numbered
 * down from `startYear` (choice: the calendar extends both ways).
 */
export function fiscalPeriodOf(calendar: PreparedFiscalCalendar, dayNumber: number): FiscalPeriod {
  const monthIndex = monthIndexOf(dayNumber);
  const monthsSinceStart = monthIndex - (calendar.firstYearLastMonthIndex - FISCAL_YEAR_MONTHS + 1);
  const yearOffset = Math.floor(monthsSinceStart / FISCAL_YEAR_MONTHS);
  return {
    fiscalYear: calendar.startYear + yearOffset,
    number: monthsSinceStart - yearOffset * FISCAL_YEAR_MONTHS + 1,
    firstDay: formatIsoDate(firstDayOfMonthIndex(monthIndex)),
    lastDay: formatIsoDate(firstDayOfMonthIndex(monthIndex + 1) - 1),
  };
}

/**
 * Which periods are open for a node. The current period is the one holding the node's business day.
 * The previous one stays open for the grace time (`graceDays` days plus `graceHours` hours, in
 * milliseconds) after the current one starts at local midnight of its first day, measured on the
 * node's wall clock: `clockDay` and `msOfDay` are the node's local date and time of day (with
 * `BUSINESS_DATE` pinned, the pinned date replaces the local date). Choices: the grace time runs in
 * real local time, so neither the business date shift nor a weekend moving the business date
 * changes how long it lasts; it counts wall-clock hours, so a daylight-saving change neither adds
 * nor removes an hour. Periods after the current one are open (their journals wait unposted).
 */
export function openPeriodsAt(
  businessDay: number,
  clockDay: number,
  msOfDay: number,
  graceMs: number,
): OpenPeriods {
  const currentFirstDay = periodFirstDayOf(businessDay);
  const elapsedMs = (clockDay - currentFirstDay) * DAY_MS + msOfDay;
  const previousOpen = elapsedMs < graceMs;
  return {
    currentFirstDay,
    previousOpen,
    earliestOpenFirstDay: previousOpen ? previousPeriodFirstDayOf(currentFirstDay) : currentFirstDay,
  };
}

/** An open window as the period checks read it: the calendar's bound and the manual periods. */
export type PeriodWindow = Pick<OpenWindowMemo, 'earliestOpenFirstDay' | 'manual'>;

/**
 * Whether a day falls in a period that is not open: a period with a manual state is closed unless
 * reopened, whatever the calendar says; any other is closed when it ends before the earliest open
 * period of the calendar. With no manual period (the usual case) this is one comparison.
 */
export function isInClosedPeriod(open: PeriodWindow, dayNumber: number): boolean {
  for (const period of open.manual) {
    if (dayNumber >= period.firstDay && dayNumber <= period.lastDay) return period.state !== 'reopened';
  }
  return dayNumber < open.earliestOpenFirstDay;
}

/**
 * The first day of the first open period after the one holding `dayNumber`: where the posting
 * date override moves a journal of a closed period, and where a reversal or a rollback of a
 * journal of a closed period is dated. With no manual period it is the earliest open period of the
 * calendar, as before manual states existed. Closed periods before the calendar's bound are skipped
 * in one step (to a reopened period or to the bound); after it, only the finitely many manual
 * periods can be closed, so the walk ends.
 */
export function firstOpenDayAfter(open: PeriodWindow, dayNumber: number): number {
  let first = nextPeriodFirstDayOf(dayNumber);
  while (isInClosedPeriod(open, first)) {
    if (first < open.earliestOpenFirstDay) {
      let next = open.earliestOpenFirstDay;
      for (const period of open.manual)
        if (period.state === 'reopened' && period.firstDay > first && period.firstDay < next)
          next = period.firstDay;
      first = next;
    } else first = nextPeriodFirstDayOf(first);
  }
  return first;
}
