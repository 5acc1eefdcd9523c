/**
 * The one moment every test starts at. The fixtures (`records.ts`, the example configuration's
 * records in `docs/examples/`) are dated on the business date {@link TEST_BUSINESS_DATE}, so a
 * test's clock must start in that period or its records meet a closed period once the real
 * calendar moves on. No test reads the real date: in-process apps take {@link testClock}, and
 * services started as processes get `BUSINESS_DATE` pinned (`server.ts`).
 */
import { ManualClock } from '../../src/lib/clock.js';
import { parseIsoDate } from '../../src/modules/accounting/dates.js';
import { nodeOpenPeriods } from '../../src/modules/accounting/node-business-date.js';
import { prepareAccounting } from '../../src/modules/accounting/prepare.js';
import type { Configuration } from '../../src/modules/configuration/model.js';
import { realisticConfiguration } from './fixtures.js';

/** The business date the fixtures' records are dated on. */
export const TEST_BUSINESS_DATE = '2026-11-20';

/** Where a test's clock starts: mid-morning of {@link TEST_BUSINESS_DATE} on every node of the fixtures. */
export const TEST_NOW = `${TEST_BUSINESS_DATE}T10:00:00.000Z`;

/** A manual clock at `at` ({@link TEST_NOW} when omitted). */
export function testClock(at: string = TEST_NOW): ManualClock {
  return new ManualClock(at);
}

/**
 * Fails, naming the period, when a record dated {@link TEST_BUSINESS_DATE} would fall in a closed
 * period of the example configuration at `now` (or at `businessDatePinned`, as `BUSINESS_DATE`
 * pins it), by the product's own period rules. A test app whose clock starts there would turn
 * every fixture record into a `closed-period` error, and the test would fail on a count far from
 * its cause; this says the cause instead. A test that wants the fixtures' period closed moves its
 * clock after the app is made (`t.clock.set`).
 */
export function assertFixturesDateOpen(now: Date, businessDatePinned?: string): void {
  const fixtureDay = parseIsoDate(TEST_BUSINESS_DATE);
  if (fixtureDay === undefined) throw new Error(`TEST_BUSINESS_DATE ${TEST_BUSINESS_DATE} is not a date`);
  const prepared = prepareAccounting(realisticConfiguration().configuration as unknown as Configuration);
  const clock = { now, ...(businessDatePinned === undefined ? {} : { businessDatePinned }) };
  for (const node of prepared.nodesByKey.values()) {
    for (const accountingConfig of node.configs.keys()) {
      const open = nodeOpenPeriods(prepared, node.fields, accountingConfig, clock);
      const earliest = open === undefined ? undefined : parseIsoDate(open.earliestOpenFirstDay);
      if (open === undefined || earliest === undefined || fixtureDay >= earliest) continue;
      throw new Error(
        `the test clock starts at ${now.toISOString()}, where the fixtures' business date ` +
          `${TEST_BUSINESS_DATE} is in a closed period (${TEST_BUSINESS_DATE.slice(0, 7)}) of node ` +
          `${JSON.stringify(node.fields)} for ${accountingConfig}: the earliest open period starts ` +
          `${open.earliestOpenFirstDay}. Start the clock with testClock() (test/helpers/clock.ts) ` +
          'or date the records from the clock.',
      );
    }
  }
}
