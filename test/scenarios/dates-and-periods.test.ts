/**
 * Business dates, posted versus unposted, and open and closed periods (docs/domain/accounting.md).
 * NL01 is in Amsterdam (IFRS: 3 grace days, no override; LOCAL_GAAP: no grace, override to the
 * first open period); US01 is in New York (IFRS: 12 grace hours).
 */
import { describe, expect, it } from 'vitest';
import { isPosted, nodeBusinessDate, processBusinessEvent } from '../../src/modules/accounting/engine.js';
import { nodeOpenPeriods } from '../../src/modules/accounting/node-business-date.js';
import { prepareAccounting } from '../../src/modules/accounting/prepare.js';
import { context, journalsOf, recordsOf, saleEvent, testConfiguration } from './accounting-fixture.js';

const prepared = prepareAccounting(testConfiguration());

/** An IFRS-only sale (event type SALE_WITH_TAX without tax) on a date. */
function ifrsSale(postingDate: string, legalEntity = 'NL01'): Record<string, unknown> {
  return saleEvent({ eventType: 'SALE_WITH_TAX', postingDate, legalEntity });
}

function statusAt(now: string, event: Record<string, unknown>, more = {}) {
  const outcome = processBusinessEvent(prepared, event, context(new Date(now), more));
  return outcome.ok
    ? outcome.journals.map((journal) => `${journal.coreDate} ${journal.status}`)
    : outcome.error.code;
}

describe('business date of a node', () => {
  const cases: Array<[rule: string, now: string, legalEntity: string, businessDate: string]> = [
    ['the local date in the node time zone', '2026-03-10T10:00:00Z', 'NL01', '2026-03-10'],
    ['Amsterdam is already on the next day at 23:30 UTC', '2026-03-10T23:30:00Z', 'NL01', '2026-03-11'],
    ['New York is still on the same day at 23:30 UTC', '2026-03-10T23:30:00Z', 'US01', '2026-03-10'],
    ['a Saturday moves forward to Monday', '2026-03-14T10:00:00Z', 'NL01', '2026-03-16'],
    ['a Sunday moves forward to Monday', '2026-03-15T10:00:00Z', 'NL01', '2026-03-16'],
  ];
  it.each(cases)('%s', (_rule, now, legalEntity, businessDate) => {
    expect(nodeBusinessDate(prepared, { legalEntity }, { now: new Date(now) })).toBe(businessDate);
  });

  it('is shifted by businessDateShift days before moving to a working day', () => {
    const shifted = prepareAccounting(
      testConfiguration((configuration) => {
        configuration.businessDateSettings.businessDateShift = -1;
      }),
    );
    const on = (now: string) => nodeBusinessDate(shifted, { legalEntity: 'NL01' }, { now: new Date(now) });
    expect(on('2026-03-10T10:00:00Z')).toBe('2026-03-09');
    // Monday minus one day is a Sunday, which moves forward to Monday again.
    expect(on('2026-03-09T10:00:00Z')).toBe('2026-03-09');
  });

  it('is pinned by BUSINESS_DATE, whatever the clock says', () => {
    const clock = { now: new Date('2026-03-10T10:00:00Z'), businessDatePinned: '2026-03-14' };
    expect(nodeBusinessDate(prepared, { legalEntity: 'NL01' }, clock)).toBe('2026-03-14');
  });

  it('is undefined for an unknown node', () => {
    expect(nodeBusinessDate(prepared, { legalEntity: 'XX' }, { now: new Date() })).toBeUndefined();
  });
});

describe('posted and unposted journals', () => {
  it('a journal on or before the business date is posted', () => {
    expect(statusAt('2026-03-10T10:00:00Z', ifrsSale('2026-03-10'))).toEqual(['2026-03-10 posted']);
    expect(statusAt('2026-03-10T10:00:00Z', ifrsSale('2026-03-02'))).toEqual(['2026-03-02 posted']);
  });

  it('a future journal is unposted, and becomes posted when the business date reaches it', () => {
    const [journal] = journalsOf(processBusinessEvent(prepared, ifrsSale('2026-03-12'), context()));
    expect(journal?.status).toBe('unposted');
    const businessDate = (now: string) =>
      nodeBusinessDate(prepared, journal?.node ?? {}, { now: new Date(now) }) ?? '';
    expect(isPosted(journal?.coreDate ?? '', businessDate('2026-03-11T10:00:00Z'))).toBe(false);
    expect(isPosted(journal?.coreDate ?? '', businessDate('2026-03-12T10:00:00Z'))).toBe(true);
  });

  it('a weekend date is posted on the Saturday before it, because the business date is Monday', () => {
    expect(statusAt('2026-03-14T10:00:00Z', ifrsSale('2026-03-15'))).toEqual(['2026-03-15 posted']);
  });

  it('the node time zone decides: the same date is posted in Amsterdam and unposted in New York', () => {
    expect(statusAt('2026-03-10T23:30:00Z', ifrsSale('2026-03-11', 'NL01'))).toEqual(['2026-03-11 posted']);
    expect(statusAt('2026-03-10T23:30:00Z', ifrsSale('2026-03-11', 'US01'))).toEqual(['2026-03-11 unposted']);
  });

  it('a pinned business date decides posting', () => {
    expect(
      statusAt('2026-03-10T10:00:00Z', ifrsSale('2026-03-13'), { businessDatePinned: '2026-03-13' }),
    ).toEqual(['2026-03-13 posted']);
  });

  it('a journal in a later period is accepted and waits unposted', () => {
    expect(statusAt('2026-03-10T10:00:00Z', ifrsSale('2026-05-04'))).toEqual(['2026-05-04 unposted']);
  });

  it('isPosted compares ISO dates', () => {
    expect(isPosted('2026-03-10', '2026-03-10')).toBe(true);
    expect(isPosted('2026-03-09', '2026-03-10')).toBe(true);
    expect(isPosted('2026-03-11', '2026-03-10')).toBe(false);
  });
});

describe('periods and grace time', () => {
  const cases: Array<
    [rule: string, now: string, postingDate: string, legalEntity: string, result: string[] | string]
  > = [
    ['the current period is open', '2026-03-10T10:00:00Z', '2026-03-01', 'NL01', ['2026-03-01 posted']],
    [
      'the previous period is closed once grace is over',
      '2026-03-10T10:00:00Z',
      '2026-02-27',
      'NL01',
      'closed-period',
    ],
    [
      'the previous period is open during 3 grace days',
      '2026-03-02T10:00:00Z',
      '2026-02-27',
      'NL01',
      ['2026-02-27 posted'],
    ],
    [
      'one minute before the end of grace (Amsterdam 3 March 23:59)',
      '2026-03-03T22:59:00Z',
      '2026-02-27',
      'NL01',
      ['2026-02-27 posted'],
    ],
    [
      'grace ends 3 days after the period starts (Amsterdam 4 March 00:00)',
      '2026-03-03T23:00:00Z',
      '2026-02-27',
      'NL01',
      'closed-period',
    ],
    [
      'periods older than the previous one are closed, even during grace',
      '2026-03-02T10:00:00Z',
      '2026-01-30',
      'NL01',
      'closed-period',
    ],
    [
      'grace hours: New York 1 March 11:59 is within 12 hours',
      '2026-03-01T16:59:00Z',
      '2026-02-27',
      'US01',
      ['2026-02-27 posted'],
    ],
    [
      'grace hours: New York 1 March 12:00 is not',
      '2026-03-01T17:00:00Z',
      '2026-02-27',
      'US01',
      'closed-period',
    ],
  ];
  it.each(cases)('%s', (_rule, now, postingDate, legalEntity, result) => {
    expect(statusAt(now, ifrsSale(postingDate, legalEntity))).toEqual(result);
  });

  it('names the journal, the fiscal period and the earliest open period in the closed-period message', () => {
    const outcome = processBusinessEvent(prepared, ifrsSale('2026-02-27'), context());
    expect(outcome).toEqual({
      ok: false,
      error: {
        code: 'closed-period',
        message:
          'journal of posting component "SALE_IFRS" (accounting configuration "IFRS", journal type "STD", ' +
          'core date 2026-02-27) falls in a closed period (fiscal calendar "CALENDAR_YEAR", fiscal year 2026 ' +
          'period 2): the earliest open period of node {"legalEntity":"NL01"} starts 2026-03-01 (business date ' +
          '2026-03-10, grace 3 days 0 hours, overridePostingDate none, feature flag posting-date-override on)',
      },
    });
  });

  it('reports the open window of a node and basis', () => {
    const at = (now: string) =>
      nodeOpenPeriods(prepared, { legalEntity: 'NL01' }, 'IFRS', { now: new Date(now) });
    expect(at('2026-03-02T10:00:00Z')).toEqual({
      businessDate: '2026-03-02',
      currentPeriodFirstDay: '2026-03-01',
      earliestOpenFirstDay: '2026-02-01',
      previousOpen: true,
      manual: [],
    });
    expect(at('2026-03-10T10:00:00Z')?.earliestOpenFirstDay).toBe('2026-03-01');
    expect(nodeOpenPeriods(prepared, { legalEntity: 'NL01' }, 'TAX', { now: new Date() })).toBeUndefined();
  });
});

describe('posting date override', () => {
  const localSale = saleEvent({ eventType: 'LOCAL_ONLY', postingDate: '2026-02-27' });

  it('moves a closed-period journal to the first day of the earliest open period and keeps the original date', () => {
    const [journal] = journalsOf(processBusinessEvent(prepared, localSale, context()));
    expect(journal).toMatchObject({
      coreDate: '2026-03-01',
      originalCoreDate: '2026-02-27',
      status: 'posted',
    });
    expect(recordsOf(prepared, journal).map((record) => record.coreDate)).toEqual([
      '2026-03-01',
      '2026-03-01',
    ]);
  });

  it('is off without the posting-date-override feature flag', () => {
    const flagOff = prepareAccounting(
      testConfiguration((configuration) => {
        configuration.featureFlags['posting-date-override'] = false;
      }),
    );
    const outcome = processBusinessEvent(flagOff, localSale, context());
    expect(outcome.ok ? 'ok' : outcome.error.code).toBe('closed-period');
  });

  it('is off when the node config says overridePostingDate none, even with the flag on', () => {
    expect(statusAt('2026-03-10T10:00:00Z', ifrsSale('2026-02-27'))).toBe('closed-period');
  });

  it('is all or nothing: a closed IFRS journal fails the event, so LOCAL_GAAP posts nothing either', () => {
    expect(statusAt('2026-03-10T10:00:00Z', saleEvent({ postingDate: '2026-02-27' }))).toBe('closed-period');
  });

  it('a reversal of a moved journal follows the moved date', () => {
    const moved = prepareAccounting(
      testConfiguration((configuration) => {
        const accrual = configuration.postingComponents.find(
          (component) => component.code === 'ACCRUAL_IFRS',
        );
        if (accrual !== undefined) accrual.accountingConfigName = 'LOCAL_GAAP';
      }),
    );
    const journals = journalsOf(
      processBusinessEvent(moved, saleEvent({ eventType: 'ACCRUAL', postingDate: '2026-01-15' }), context()),
    );
    expect(journals.map((journal) => [journal.coreDate, journal.originalCoreDate])).toEqual([
      ['2026-03-01', '2026-01-15'],
      ['2026-03-02', undefined],
    ]);
  });
});
