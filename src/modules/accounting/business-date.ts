/**
 * The business date of a node (docs/domain/accounting.md, Business date): the date in the node's
 * time zone, shifted by `businessDateSettings.businessDateShift` days, moved forward to a working
 * day of the business calendar of the accounting configuration; `BUSINESS_DATE` pins it. The clock
 * is an argument, never read here.
 */
import { IANAZone } from 'luxon';
import { DAY_MS, formatIsoDate, isoWeekday, parseIsoDate } from './dates.js';

/** Milliseconds in a minute; time-zone offsets only change on whole minutes. */
export const MINUTE_MS = 60_000;

/** Days {@link nextWorkingDay} looks ahead before giving up (a calendar with no working day). */
export const WORKING_DAY_SEARCH_DAYS_MAX = 366;

/**
 * A node's wall clock: its time zone plus a one-entry memo of the zone's UTC offset for the last
 * minute asked about. Every event of a chunk is processed with the same `now`, so the memo turns
 * the time-zone lookup into a comparison on the hot path. Created once per configuration.
 */
export interface ZoneClock {
  readonly timeZone: string;
  readonly zone: IANAZone;
  memoMinute: number;
  memoOffsetMinutes: number;
}

/** A local clock reading: the day and the milliseconds since local midnight. */
export interface LocalTime {
  dayNumber: number;
  msOfDay: number;
}

/**
 * A wall clock for an IANA time-zone name, or `undefined` when the name is not a known zone (the
 * configuration upload rejects those, so this only guards against a stored configuration that
 * predates the check).
 */
export function createZoneClock(timeZone: string): ZoneClock | undefined {
  const zone = IANAZone.create(timeZone);
  if (!zone.isValid) return undefined;
  return { timeZone, zone, memoMinute: Number.NaN, memoOffsetMinutes: 0 };
}

/** The local day and time of day of `nowMs` (epoch milliseconds) on a zone clock. */
export function localTimeOf(clock: ZoneClock, nowMs: number): LocalTime {
  const minute = Math.floor(nowMs / MINUTE_MS);
  if (minute !== clock.memoMinute) {
    clock.memoOffsetMinutes = clock.zone.offset(nowMs);
    clock.memoMinute = minute;
  }
  const localMs = nowMs + clock.memoOffsetMinutes * MINUTE_MS;
  const dayNumber = Math.floor(localMs / DAY_MS);
  return { dayNumber, msOfDay: localMs - dayNumber * DAY_MS };
}

/**
 * Whether a day is a working day of a business calendar. The configuration's business calendars
 * carry no holidays (an entry has only a name, effective dates and a status), so every calendar has
 * the same rule: Saturday and Sunday are non-working, every other day works (choice).
 */
export function isWorkingDay(dayNumber: number): boolean {
  return isoWeekday(dayNumber) <= 5;
}

/** The day itself when it is a working day, else the next working day. */
export function nextWorkingDay(dayNumber: number): number {
  for (let day = dayNumber; day < dayNumber + WORKING_DAY_SEARCH_DAYS_MAX; day += 1) {
    if (isWorkingDay(day)) return day;
  }
  throw new RangeError(
    `no working day within ${WORKING_DAY_SEARCH_DAYS_MAX} days of ${formatIsoDate(dayNumber)}`,
  );
}

/** What a business date depends on besides the clock. */
export interface BusinessDateRule {
  /** `businessDateSettings.businessDateShift`, in days. */
  shiftDays: number;
  /** `BUSINESS_DATE` as a day number; wins over the clock, the shift and the calendar. */
  pinnedDay?: number;
}

/**
 * The business date rule for a configured shift and an optional `BUSINESS_DATE`. Throws a
 * `RangeError` when the pinned date is not an ISO date: the caller validates `BUSINESS_DATE` at
 * start-up, so this is an assertion, not an input check.
 */
export function businessDateRule(
  shiftDays: number,
  businessDatePinned: string | undefined,
): BusinessDateRule {
  if (businessDatePinned === undefined) return { shiftDays };
  const pinnedDay = parseIsoDate(businessDatePinned);
  if (pinnedDay === undefined)
    throw new RangeError(`BUSINESS_DATE is not an ISO date: ${JSON.stringify(businessDatePinned)}`);
  return { shiftDays, pinnedDay };
}

/**
 * The business day (day number) of a node whose local clock reads `local`: the local day plus
 * the shift, moved forward to a working day. A pinned day is returned as it is (choice: the
 * setting `BUSINESS_DATE` pins the business date itself, so no shift or calendar applies to it).
 */
export function businessDayOf(local: LocalTime, rule: BusinessDateRule): number {
  if (rule.pinnedDay !== undefined) return rule.pinnedDay;
  return nextWorkingDay(local.dayNumber + rule.shiftDays);
}

/**
 * Computes a business date from scratch: the convenience form of {@link businessDayOf} for callers
 * outside the hot path (the background job that re-evaluates unposted journals, tests). Returns an
 * ISO date, or `undefined` when the time zone is unknown or the pinned date is not an ISO date.
 */
export function computeBusinessDate(input: {
  now: Date;
  timeZone: string;
  businessDateShift?: number;
  businessDatePinned?: string;
}): string | undefined {
  if (input.businessDatePinned !== undefined && parseIsoDate(input.businessDatePinned) === undefined)
    return undefined;
  const clock = createZoneClock(input.timeZone);
  if (clock === undefined) return undefined;
  const rule = businessDateRule(input.businessDateShift ?? 0, input.businessDatePinned);
  return formatIsoDate(businessDayOf(localTimeOf(clock, input.now.getTime()), rule));
}

/**
 * Whether a journal with this core date is posted on this business date: on or before it
 * (docs/domain/accounting.md, Posting). Both are ISO dates, whose text order is their date order.
 * Storage calls this to turn unposted journals into posted ones as the business date moves; no
 * request is needed for that.
 */
export function isPosted(coreDate: string, businessDate: string): boolean {
  return coreDate <= businessDate;
}
