/**
 * Periods closed, locked and reopened by hand (docs/domain/accounting.md, Periods closed, locked
 * and reopened by hand), as the engine applies them: the states go in with the processing context
 * and take precedence over the calendar. Tuesday 2026-03-10: for NL01 (Amsterdam) March is the
 * current period and February is closed by the calendar; LOCAL_GAAP overrides the posting date.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseIsoDate } from '../../src/modules/accounting/dates.js';
import { processBusinessEvent } from '../../src/modules/accounting/engine.js';
import {
  firstOpenDayAfter,
  isInClosedPeriod,
  type ManualPeriodState,
  type PeriodWindow,
  periodFirstDayOf,
  periodStatesOf,
} from '../../src/modules/accounting/periods.js';
import { nodeKeyOf, prepareAccounting } from '../../src/modules/accounting/prepare.js';
import { reversalDateOf } from '../../src/modules/accounting/reversal-journals.js';
import { context, journalsOf, saleEvent, testConfiguration } from './accounting-fixture.js';

const prepared = prepareAccounting(testConfiguration());
const NL01 = nodeKeyOf({ legalEntity: 'NL01' });

function day(iso: string): number {
  const parsed = parseIsoDate(iso);
  if (parsed === undefined) throw new Error(`not a date: ${iso}`);
  return parsed;
}

/** The states of NL01 for one basis: `[firstDay, lastDay, state]` rows. */
function states(accountingConfig: string, rows: [string, string, ManualPeriodState][], version = 1) {
  return periodStatesOf(
    version,
    rows.map(([firstDay, lastDay, state]) => ({ nodeKey: NL01, accountingConfig, firstDay, lastDay, state })),
  );
}

/** The core dates of an event's journals, or its error code. */
function outcomeOf(event: Record<string, unknown>, periods = states('IFRS', [])) {
  const outcome = processBusinessEvent(prepared, event, context(undefined, { periods }));
  return outcome.ok
    ? journalsOf(outcome).map((j) => [j.coreDate, j.originalCoreDate ?? null])
    : outcome.error.code;
}

describe('manual period states in the engine', () => {
  const ifrsSale = (postingDate: string) =>
    saleEvent({ eventType: 'SALE_WITH_TAX', postingDate, legalEntity: 'NL01' });
  const localSale = (postingDate: string) =>
    saleEvent({ eventType: 'LOCAL_ONLY', postingDate, legalEntity: 'NL01' });

  it('refuses a journal of a current period closed or locked by hand, and accepts one of a reopened period', () => {
    expect(outcomeOf(ifrsSale('2026-03-05'))).toEqual([['2026-03-05', null]]);
    expect(outcomeOf(ifrsSale('2026-03-05'), states('IFRS', [['2026-03-01', '2026-03-31', 'closed']]))).toBe(
      'closed-period',
    );
    expect(outcomeOf(ifrsSale('2026-03-05'), states('IFRS', [['2026-03-01', '2026-03-31', 'locked']]))).toBe(
      'closed-period',
    );
    expect(outcomeOf(ifrsSale('2025-11-20'))).toBe('closed-period');
    expect(
      outcomeOf(ifrsSale('2025-11-20'), states('IFRS', [['2025-11-01', '2025-11-30', 'reopened']])),
    ).toEqual([['2025-11-20', null]]);
    // The states of another basis do not apply.
    expect(
      outcomeOf(ifrsSale('2026-03-05'), states('LOCAL_GAAP', [['2026-03-01', '2026-03-31', 'locked']])),
    ).toEqual([['2026-03-05', null]]);
  });

  it('moves an overridden journal past a locked period, never into it, and never back into a reopened one', () => {
    expect(outcomeOf(localSale('2026-02-27'))).toEqual([['2026-03-01', '2026-02-27']]);
    const marchLocked = states('LOCAL_GAAP', [['2026-03-01', '2026-03-31', 'locked']]);
    expect(outcomeOf(localSale('2026-02-27'), marchLocked)).toEqual([['2026-04-01', '2026-02-27']]);
    expect(outcomeOf(localSale('2026-03-05'), marchLocked)).toEqual([['2026-04-01', '2026-03-05']]);
    const januaryReopened = states('LOCAL_GAAP', [['2026-01-01', '2026-01-31', 'reopened']]);
    expect(outcomeOf(localSale('2026-01-15'), januaryReopened)).toEqual([['2026-01-15', null]]);
    expect(outcomeOf(localSale('2026-02-27'), januaryReopened)).toEqual([['2026-03-01', '2026-02-27']]);
    expect(outcomeOf(localSale('2025-12-10'), januaryReopened)).toEqual([['2026-01-01', '2025-12-10']]);
  });

  it('dates the automatic reversal of the last day of a reopened period past the closed or locked days after it', () => {
    const accrual = (postingDate: string) =>
      saleEvent({ eventType: 'ACCRUAL', amount: '75.25', postingDate, legalEntity: 'NL01' });
    const novemberReopened: [string, string, ManualPeriodState] = ['2025-11-01', '2025-11-30', 'reopened'];
    // December is closed by the calendar: the reversal moves to the earliest open period.
    expect(outcomeOf(accrual('2025-11-30'), states('IFRS', [novemberReopened]))).toEqual([
      ['2025-11-30', null],
      ['2026-03-01', '2025-12-01'],
    ]);
    // ... or to a reopened period before it, never into a locked one.
    expect(
      outcomeOf(
        accrual('2025-11-30'),
        states('IFRS', [
          novemberReopened,
          ['2025-12-01', '2025-12-31', 'locked'],
          ['2026-01-01', '2026-01-31', 'reopened'],
        ]),
      ),
    ).toEqual([
      ['2025-11-30', null],
      ['2026-01-01', '2025-12-01'],
    ]);
    // A current period closed by hand after the journal's open one.
    expect(
      outcomeOf(
        accrual('2026-02-28'),
        states('IFRS', [
          ['2026-02-01', '2026-02-28', 'reopened'],
          ['2026-03-01', '2026-03-31', 'closed'],
        ]),
      ),
    ).toEqual([
      ['2026-02-28', null],
      ['2026-04-01', '2026-03-01'],
    ]);
    // Within an open period nothing moves.
    expect(outcomeOf(accrual('2025-11-20'), states('IFRS', [novemberReopened]))).toEqual([
      ['2025-11-20', null],
      ['2025-11-21', null],
    ]);
  });

  it('sees new states at once: the memo is computed again when the states object changes', () => {
    const open = states('IFRS', [], 1);
    const closed = states('IFRS', [['2026-03-01', '2026-03-31', 'closed']], 2);
    expect(outcomeOf(ifrsSale('2026-03-05'), open)).toEqual([['2026-03-05', null]]);
    expect(outcomeOf(ifrsSale('2026-03-05'), closed)).toBe('closed-period');
    expect(outcomeOf(ifrsSale('2026-03-05'), open)).toEqual([['2026-03-05', null]]);
  });
});

describe('the period checks over manual states', () => {
  const window: PeriodWindow = {
    earliestOpenFirstDay: day('2026-03-01'),
    manual: [
      { firstDay: day('2025-11-01'), lastDay: day('2025-11-30'), state: 'reopened' },
      { firstDay: day('2026-03-01'), lastDay: day('2026-03-31'), state: 'closed' },
      { firstDay: day('2026-04-01'), lastDay: day('2026-04-30'), state: 'locked' },
    ],
  };

  it('is the calendar outside the manual periods, and their state inside', () => {
    const table: [string, boolean][] = [
      ['2025-10-31', true],
      ['2025-11-15', false],
      ['2025-12-01', true],
      ['2026-03-10', true],
      ['2026-04-30', true],
      ['2026-05-01', false],
    ];
    for (const [date, closed] of table)
      expect([date, isInClosedPeriod(window, day(date))]).toEqual([date, closed]);
  });

  it('finds the first open day after any day in an open period after it', () => {
    fc.assert(
      fc.property(fc.integer({ min: day('2024-01-01'), max: day('2027-12-31') }), (d) => {
        const first = firstOpenDayAfter(window, d);
        return first > d && !isInClosedPeriod(window, first) && periodFirstDayOf(first) === first;
      }),
    );
    expect(firstOpenDayAfter(window, day('2025-10-15'))).toBe(day('2025-11-01'));
    expect(firstOpenDayAfter(window, day('2025-11-15'))).toBe(day('2026-05-01'));
    expect(firstOpenDayAfter(window, day('2026-03-15'))).toBe(day('2026-05-01'));
  });

  it('dates a reversal on the first open day after a closed or locked period, and refuses a posting date in one', () => {
    const reversalWindow = {
      businessDate: '2026-06-10',
      earliestOpenFirstDay: '2026-03-01',
      manual: window.manual,
    };
    expect(reversalDateOf('2026-03-10', reversalWindow, undefined)).toMatchObject({
      ok: true,
      coreDate: '2026-05-01',
    });
    expect(reversalDateOf('2025-11-10', reversalWindow, undefined)).toMatchObject({
      ok: true,
      coreDate: '2025-11-10',
    });
    expect(reversalDateOf('2026-03-10', reversalWindow, '2026-04-15')).toEqual({
      ok: false,
      refusal: 'posting-date-in-closed-period',
      firstOpenDay: '2026-05-01',
    });
  });
});
