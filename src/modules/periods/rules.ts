/**
 * The rules of a period's state (docs/domain/accounting.md, Periods closed, locked and reopened by
 * hand), pure: the state the calendar gives a period, the state it is listed in once a manual
 * state is stored, and which changes each allows. The listing (`service.ts`) and the changes
 * (`changes.ts`) read them alike, so a period is shown with exactly the actions a change accepts.
 */
import type { NodeOpenPeriods } from '../accounting/node-business-date.js';
import type { ManualPeriodState, PeriodAction, StoredPeriodState } from './store.js';

/** A period's state: by the calendar (`open`, `grace`, `closed`) or by hand (`closed`, `locked`). */
export type PeriodStateName = 'open' | 'grace' | 'closed' | 'locked';

/**
 * Why a period is in its state: `calendar` (the current period and the later ones are open, the
 * earlier ones closed), `grace` (the previous period in the node config's grace time),
 * `closed-by-hand`, `locked-by-hand`, `reopened`.
 */
export type PeriodBasis = 'calendar' | 'grace' | 'closed-by-hand' | 'locked-by-hand' | 'reopened';

/** What a period is, whatever its state: its node, days and place in the fiscal calendar. */
export interface PeriodPlace {
  node: Record<string, string>;
  firstDay: string;
  lastDay: string;
  /** The fiscal year and period number in the accounting configuration's fiscal calendar. */
  fiscalYear: number | null;
  number: number | null;
  /** Whether it holds the node's business date. */
  current: boolean;
}

/** One period of one node as listed. */
export interface PeriodView extends PeriodPlace {
  state: PeriodStateName;
  basis: PeriodBasis;
  /** Who set the manual state, and when; null when the calendar decides. */
  actedBy: string | null;
  actedAt: string | null;
  /** Why it was reopened. */
  reason: string | null;
  /** Trial-balance snapshots kept for it. */
  snapshots: number;
  /** The changes its state allows now (the pending work of a close or a lock is checked when asked). */
  actions: PeriodAction[];
}

/** What an approved change binds to: the period's basis and when it was last set by hand. */
export type PeriodBinding = Pick<PeriodView, 'basis' | 'actedAt'>;

/** Every change, in the order they are listed. */
const PERIOD_ACTIONS: readonly PeriodAction[] = ['close', 'lock', 'reopen'];

/** The state of a period by the calendar alone at one instant. */
export type CalendarState = 'future' | 'open' | 'grace' | 'closed';

/** The calendar state of the period starting `firstDay` of a node whose open window is `open`. */
export function calendarStateOf(open: NodeOpenPeriods, firstDay: string): CalendarState {
  if (firstDay > open.currentPeriodFirstDay) return 'future';
  if (firstDay === open.currentPeriodFirstDay) return 'open';
  if (firstDay >= open.earliestOpenFirstDay) return open.previousOpen ? 'grace' : 'closed';
  return 'closed';
}

/** The listed state of a period from its calendar state and its manual state, if any. */
export function viewStateOf(
  calendar: CalendarState,
  stored: StoredPeriodState | undefined,
): Pick<PeriodView, 'state' | 'basis' | 'actedBy' | 'actedAt' | 'reason'> {
  if (stored !== undefined) {
    const byHand = { actedBy: stored.actedBy, actedAt: stored.actedAt, reason: stored.reason };
    if (stored.state === 'locked') return { state: 'locked', basis: 'locked-by-hand', ...byHand };
    if (stored.state === 'closed') return { state: 'closed', basis: 'closed-by-hand', ...byHand };
    return { state: 'open', basis: 'reopened', ...byHand };
  }
  const none = { actedBy: null, actedAt: null, reason: null };
  if (calendar === 'grace') return { state: 'grace', basis: 'grace', ...none };
  return { state: calendar === 'closed' ? 'closed' : 'open', basis: 'calendar', ...none };
}

/**
 * Why `action` may not be taken on a period in `calendar` state with manual state `stored`, or
 * `undefined` when it may. A close needs an open period (by the calendar, in grace, or reopened)
 * that is not after the current one; a lock any period not after the current one that is not
 * locked; a reopening a closed or locked one.
 */
export function refusalOf(
  action: PeriodAction,
  calendar: CalendarState,
  stored: ManualPeriodState | undefined,
): string | undefined {
  if (action === 'reopen') {
    if (stored === 'closed' || stored === 'locked') return undefined;
    if (stored === 'reopened') return 'the period is open already: it was reopened';
    return calendar === 'closed' ? undefined : 'the period is open already by the calendar';
  }
  if (calendar === 'future')
    return `a period after the current one cannot be ${action === 'close' ? 'closed' : 'locked'}`;
  if (stored === 'locked') return 'the period is locked already';
  if (action === 'lock') return undefined;
  if (stored === 'closed') return 'the period is closed already';
  if (stored === undefined && calendar === 'closed') return 'the period is closed already by the calendar';
  return undefined;
}

/** A period as listed: its place, its state from `calendar` and `stored`, its snapshots and actions. */
export function periodViewOf(
  place: PeriodPlace,
  calendar: CalendarState,
  stored: StoredPeriodState | undefined,
  snapshots: number,
): PeriodView {
  return {
    ...place,
    ...viewStateOf(calendar, stored),
    snapshots,
    actions: PERIOD_ACTIONS.filter((action) => refusalOf(action, calendar, stored?.state) === undefined),
  };
}
