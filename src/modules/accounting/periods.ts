/**
 * Fiscal periods and which of them are open (docs/domain/accounting.md, Periods). A `gregorian`
 * fiscal calendar has calendar months as periods; its fiscal years end with the month of
 * `endOfFirstYear` and are numbered from `startYear`. The current period (the one holding the
 * node's business date) is open, the previous one stays open for the node config's grace time after
 * the current one starts, older ones are closed, and later ones are open (their journals wait
 * unposted). Every supported calendar type has the same periods, so open and closed do not depend
 * on the calendar; the calendar names a period in messages.
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
}

/** A memo that matches no clock reading yet. */
export function emptyOpenWindowMemo(): OpenWindowMemo {
  return { nowMs: Number.NaN, pinnedDay: undefined, businessDay: 0, earliestOpenFirstDay: 0 };
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

/** Whether a day falls in a closed period of an open window (before the earliest open period). */
export function isInClosedPeriod(
  open: Pick<OpenPeriods, 'earliestOpenFirstDay'>,
  dayNumber: number,
): boolean {
  return dayNumber < open.earliestOpenFirstDay;
}
