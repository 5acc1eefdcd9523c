import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  computeBusinessDate,
  isWorkingDay,
  nextWorkingDay,
} from '../../../src/modules/accounting/business-date.js';
import {
  addDaysIso,
  civilFromDays,
  DATE_MEMO_ENTRIES_MAX,
  daysFromCivil,
  formatIsoDate,
  isoWeekday,
  parseIsoDate,
} from '../../../src/modules/accounting/dates.js';
import {
  fiscalPeriodOf,
  openPeriodsAt,
  prepareFiscalCalendar,
} from '../../../src/modules/accounting/periods.js';

const day = (iso: string) => parseIsoDate(iso) ?? Number.NaN;

describe('calendar days', () => {
  it('parses real calendar days only', () => {
    expect(parseIsoDate('1970-01-01')).toBe(0);
    expect(parseIsoDate('2024-02-29')).toBeDefined();
    expect(parseIsoDate('2026-02-29')).toBeUndefined();
    expect(parseIsoDate('2026-02-30')).toBeUndefined();
    expect(parseIsoDate('2026-13-01')).toBeUndefined();
    expect(parseIsoDate('2026-3-1')).toBeUndefined();
    expect(parseIsoDate(20260301)).toBeUndefined();
  });

  it('answers the same once it has seen more dates than it remembers', () => {
    const first = parseIsoDate('2026-03-01') ?? Number.NaN;
    for (let offset = 0; offset <= DATE_MEMO_ENTRIES_MAX; offset += 1) {
      expect(parseIsoDate(formatIsoDate(first + offset))).toBe(first + offset);
    }
    expect(formatIsoDate(first)).toBe('2026-03-01');
    expect(parseIsoDate('2026-02-30')).toBeUndefined();
    expect(parseIsoDate('2026-02-30')).toBeUndefined();
  });

  it('round-trips every day number and agrees with Date', () => {
    fc.assert(
      fc.property(fc.integer({ min: -700_000, max: 2_900_000 }), (dayNumber) => {
        const { year, month, day: dom } = civilFromDays(dayNumber);
        expect(daysFromCivil(year, month, dom)).toBe(dayNumber);
        if (year >= 0 && year <= 9999) {
          expect(formatIsoDate(dayNumber)).toBe(new Date(dayNumber * 86_400_000).toISOString().slice(0, 10));
        }
      }),
    );
  });

  it('adds days across month and year ends and knows weekdays', () => {
    expect(addDaysIso('2026-03-31', 1)).toBe('2026-04-01');
    expect(addDaysIso('2026-12-31', 1)).toBe('2027-01-01');
    expect(addDaysIso('2024-02-28', 1)).toBe('2024-02-29');
    expect(isoWeekday(day('2026-03-09'))).toBe(1);
    expect(isoWeekday(day('2026-03-15'))).toBe(7);
    expect(isWorkingDay(day('2026-03-13'))).toBe(true);
    expect(isWorkingDay(day('2026-03-14'))).toBe(false);
    expect(formatIsoDate(nextWorkingDay(day('2026-03-14')))).toBe('2026-03-16');
  });
});

describe('business date from scratch', () => {
  it('uses the zone, the shift, working days and the pin', () => {
    const now = new Date('2026-03-13T23:30:00Z');
    expect(computeBusinessDate({ now, timeZone: 'UTC' })).toBe('2026-03-13');
    expect(computeBusinessDate({ now, timeZone: 'Asia/Tokyo' })).toBe('2026-03-16');
    expect(computeBusinessDate({ now, timeZone: 'UTC', businessDateShift: 2 })).toBe('2026-03-16');
    expect(computeBusinessDate({ now, timeZone: 'UTC', businessDatePinned: '2026-03-14' })).toBe(
      '2026-03-14',
    );
    expect(computeBusinessDate({ now, timeZone: 'Nowhere/Else' })).toBeUndefined();
    expect(computeBusinessDate({ now, timeZone: 'UTC', businessDatePinned: 'tomorrow' })).toBeUndefined();
  });

  it('follows daylight saving time (Amsterdam switches on 29 March 2026)', () => {
    expect(computeBusinessDate({ now: new Date('2026-03-29T22:30:00Z'), timeZone: 'Europe/Amsterdam' })).toBe(
      '2026-03-30',
    );
    expect(computeBusinessDate({ now: new Date('2026-03-26T22:30:00Z'), timeZone: 'Europe/Amsterdam' })).toBe(
      '2026-03-26',
    );
  });
});

describe('fiscal periods', () => {
  const calendarYear = prepareFiscalCalendar({
    name: 'CY',
    type: 'gregorian',
    endOfFirstYear: '2024-12-31',
    startYear: 2024,
  });
  const aprilToMarch = prepareFiscalCalendar({
    name: 'FY',
    type: 'gregorian',
    endOfFirstYear: '2025-03-31',
    startYear: 2024,
  });

  it('are calendar months numbered within fiscal years that end at endOfFirstYear', () => {
    if (calendarYear === undefined || aprilToMarch === undefined) throw new Error('calendars prepare');
    expect(fiscalPeriodOf(calendarYear, day('2026-02-14'))).toEqual({
      fiscalYear: 2026,
      number: 2,
      firstDay: '2026-02-01',
      lastDay: '2026-02-28',
    });
    expect(fiscalPeriodOf(aprilToMarch, day('2025-03-31'))).toMatchObject({ fiscalYear: 2024, number: 12 });
    expect(fiscalPeriodOf(aprilToMarch, day('2025-04-01'))).toMatchObject({ fiscalYear: 2025, number: 1 });
    expect(fiscalPeriodOf(aprilToMarch, day('2024-03-31'))).toMatchObject({ fiscalYear: 2023, number: 12 });
    expect(
      prepareFiscalCalendar({ name: 'X', type: 'gregorian', endOfFirstYear: 'soon', startYear: 1 }),
    ).toBeUndefined();
  });

  it('the previous period stays open for the grace time after the current one starts', () => {
    const graceMs = 3 * 86_400_000 + 6 * 3_600_000;
    const open = (clockDay: string, msOfDay: number) =>
      formatIsoDate(openPeriodsAt(day(clockDay), day(clockDay), msOfDay, graceMs).earliestOpenFirstDay);
    expect(open('2026-03-01', 0)).toBe('2026-02-01');
    expect(open('2026-03-04', 6 * 3_600_000 - 1)).toBe('2026-02-01');
    expect(open('2026-03-04', 6 * 3_600_000)).toBe('2026-03-01');
    expect(
      formatIsoDate(openPeriodsAt(day('2026-01-10'), day('2026-01-10'), 0, 0).earliestOpenFirstDay),
    ).toBe('2026-01-01');
    expect(
      formatIsoDate(openPeriodsAt(day('2026-01-01'), day('2026-01-01'), 0, 1).earliestOpenFirstDay),
    ).toBe('2025-12-01');
  });
});
