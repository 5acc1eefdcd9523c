/**
 * A node's business date and open periods from a prepared configuration (docs/domain/accounting.md,
 * Business date and Periods), for callers outside the engine: the background job that turns
 * unposted journals into posted ones as business dates move, and the read side (balances default to
 * the business date).
 */
import { businessDateRule, businessDayOf, localTimeOf } from './business-date.js';
import { formatIsoDate } from './dates.js';
import type { ProcessingContext } from './journal-draft.js';
import {
  CALENDAR_ONLY,
  type ManualPeriod,
  manualPeriodsOf,
  openPeriodsAt,
  type PeriodStates,
} from './periods.js';
import { nodeKeyOf, type PreparedAccounting, type PreparedNode } from './prepare.js';

/** The clock part of a processing context. */
export type BusinessClock = Pick<ProcessingContext, 'now' | 'businessDatePinned'>;

/** A node's open window at one instant, as ISO dates. */
export interface NodeOpenPeriods {
  businessDate: string;
  /** First day of the period holding the business date. */
  currentPeriodFirstDay: string;
  /** First day of the earliest open period of the calendar (the previous one during its grace time). */
  earliestOpenFirstDay: string;
  /** Whether the previous period is open in its grace time. */
  previousOpen: boolean;
  /** The node config's periods closed, locked or reopened by hand, which the calendar yields to. */
  manual: readonly ManualPeriod[];
}

function findNode(
  prepared: PreparedAccounting,
  node: Readonly<Record<string, string>>,
): PreparedNode | undefined {
  return prepared.nodesByKey.get(nodeKeyOf(node));
}

/**
 * The business date (`YYYY-MM-DD`) of the node with these field values at `clock.now`, or the
 * pinned date when `clock.businessDatePinned` is set; `undefined` when no node has these values or
 * its time zone is unknown. Business calendars have no holidays, so the date does not depend on
 * the accounting configuration (see `isWorkingDay`). A journal is posted when
 * `isPosted(journal.coreDate, nodeBusinessDate(...))`. Throws a `RangeError` when the pinned date
 * is not an ISO date.
 */
export function nodeBusinessDate(
  prepared: PreparedAccounting,
  node: Readonly<Record<string, string>>,
  clock: BusinessClock,
): string | undefined {
  const found = findNode(prepared, node);
  if (found?.clock === undefined) return undefined;
  const rule = businessDateRule(prepared.businessDateShiftDays, clock.businessDatePinned);
  return formatIsoDate(businessDayOf(localTimeOf(found.clock, clock.now.getTime()), rule));
}

/**
 * The open periods of a node for one accounting configuration at `clock.now` (Periods):
 * the business date, the first day of the current period and of the earliest open one by the
 * calendar, and the periods `states` sets by hand for them. Returns
 * `undefined` when the node is unknown, its time zone is unknown or the accounting configuration
 * is not assigned to it. Throws a `RangeError` when the pinned date is not an ISO date.
 */
export function nodeOpenPeriods(
  prepared: PreparedAccounting,
  node: Readonly<Record<string, string>>,
  accountingConfig: string,
  clock: BusinessClock,
  states: PeriodStates = CALENDAR_ONLY,
): NodeOpenPeriods | undefined {
  const found = findNode(prepared, node);
  const nodeConfig = found?.configs.get(accountingConfig);
  if (found?.clock === undefined || nodeConfig === undefined) return undefined;
  const rule = businessDateRule(prepared.businessDateShiftDays, clock.businessDatePinned);
  const local = localTimeOf(found.clock, clock.now.getTime());
  const businessDay = businessDayOf(local, rule);
  const open = openPeriodsAt(
    businessDay,
    rule.pinnedDay ?? local.dayNumber,
    local.msOfDay,
    nodeConfig.graceMs,
  );
  return {
    businessDate: formatIsoDate(businessDay),
    currentPeriodFirstDay: formatIsoDate(open.currentFirstDay),
    earliestOpenFirstDay: formatIsoDate(open.earliestOpenFirstDay),
    previousOpen: open.previousOpen,
    manual: manualPeriodsOf(states, found.key, accountingConfig),
  };
}
