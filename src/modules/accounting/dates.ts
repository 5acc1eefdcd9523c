/**
 * Calendar days as the accounting core counts them: an ISO date `YYYY-MM-DD` outside, a day
 * number (days since 1970-01-01 in the proleptic Gregorian calendar) inside. Day numbers make
 * "plus one day", weekdays and month arithmetic integer operations on the hot path, free of time
 * zones and of `Date` allocations. The conversions are Howard Hinnant's `days_from_civil` /
 * `civil_from_days` algorithms.
 */

/** Milliseconds in a calendar day without daylight-saving transitions. */
export const DAY_MS = 86_400_000;

/** Milliseconds in an hour. */
export const HOUR_MS = 3_600_000;

const ISO_DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;
/** Characters of `YYYY-MM-DD`; no other text is an ISO date (or remembered as not being one). */
const ISO_DATE_LENGTH = 10;

/**
 * Dates remembered by {@link parseIsoDate} and {@link formatIsoDate}; past this many the memo
 * starts over. The events of a chunk mostly share a few dates, so each is converted once.
 */
export const DATE_MEMO_ENTRIES_MAX = 4096;

const parsedDays = new Map<string, number | undefined>();
const formattedDays = new Map<number, string>();

/** A civil date split into its parts; `month` is 1..12. */
export interface CivilDate {
  year: number;
  month: number;
  day: number;
}

/** Day number of a civil date (no range check). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** Civil date of a day number. */
export function civilFromDays(dayNumber: number): CivilDate {
  const z = dayNumber + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const mp = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

/**
 * Day number of an ISO date `YYYY-MM-DD`, or `undefined` when the text is not one or names a day
 * that does not exist (`2026-02-30`). Never throws.
 */
export function parseIsoDate(text: unknown): number | undefined {
  if (typeof text !== 'string' || text.length !== ISO_DATE_LENGTH) return undefined;
  const known = parsedDays.get(text);
  if (known !== undefined || parsedDays.has(text)) return known;
  const dayNumber = parseIsoDateText(text);
  if (parsedDays.size >= DATE_MEMO_ENTRIES_MAX) parsedDays.clear();
  parsedDays.set(text, dayNumber);
  return dayNumber;
}

function parseIsoDateText(text: string): number | undefined {
  const match = ISO_DATE_PATTERN.exec(text);
  if (match === null) return undefined;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (month < 1 || month > 12 || day < 1 || day > 31) return undefined;
  const dayNumber = daysFromCivil(year, month, day);
  const back = civilFromDays(dayNumber);
  return back.month === month && back.day === day ? dayNumber : undefined;
}

/** ISO date `YYYY-MM-DD` of a day number (years 0..9999). */
export function formatIsoDate(dayNumber: number): string {
  const known = formattedDays.get(dayNumber);
  if (known !== undefined) return known;
  const { year, month, day } = civilFromDays(dayNumber);
  const text = `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
  if (formattedDays.size >= DATE_MEMO_ENTRIES_MAX) formattedDays.clear();
  formattedDays.set(dayNumber, text);
  return text;
}

/** ISO date `days` days after (or before, when negative) an ISO date; throws on an invalid date. */
export function addDaysIso(isoDate: string, days: number): string {
  const dayNumber = parseIsoDate(isoDate);
  if (dayNumber === undefined) throw new RangeError(`not an ISO date: ${JSON.stringify(isoDate)}`);
  return formatIsoDate(dayNumber + days);
}

/** ISO weekday of a day number: 1 = Monday .. 7 = Sunday (1970-01-01 was a Thursday). */
export function isoWeekday(dayNumber: number): number {
  return ((((dayNumber + 3) % 7) + 7) % 7) + 1;
}

/** Months since year 0 of a day number's month: `year * 12 + month - 1`. */
export function monthIndexOf(dayNumber: number): number {
  const { year, month } = civilFromDays(dayNumber);
  return year * 12 + month - 1;
}

/** Day number of the first day of a month index (see {@link monthIndexOf}). */
export function firstDayOfMonthIndex(monthIndex: number): number {
  const year = Math.floor(monthIndex / 12);
  return daysFromCivil(year, monthIndex - year * 12 + 1, 1);
}
