/**
 * Periods closed, locked and reopened by hand (docs/domain/accounting.md, Periods closed, locked
 * and reopened by hand; docs/adr/0025-manual-period-states.md). The calendar and the node
 * config's grace time open and close periods by themselves; an authorised user may also close a
 * period early (when no work dated in it is pending), lock it, and reopen it with a reason. Each
 * close or lock keeps a trial-balance snapshot of the period's last day. The states are read by
 * processing and by reversals from the same store (`PeriodStates`), per node and accounting
 * configuration, since the grace time and the time zone, hence the calendar state, are a node's.
 */
import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { formatIsoDate, parseIsoDate } from '../accounting/dates.js';
import { type NodeOpenPeriods, nodeOpenPeriods } from '../accounting/node-business-date.js';
import {
  fiscalPeriodOf,
  nextPeriodFirstDayOf,
  periodFirstDayOf,
  periodLastDayOf,
} from '../accounting/periods.js';
import { nodeKeyOf, type PreparedAccountingRevision, type PreparedNode } from '../accounting/prepare.js';
import type { ConfigurationSnapshots } from '../configuration/snapshot.js';
import type {
  ManualPeriodState,
  PeriodAction,
  PeriodStore,
  StoredPeriodState,
  StoredSnapshot,
  TrialBalanceLine,
} from './store.js';

/** Periods one listing may span per node. */
export const PERIODS_LISTED_MAX = 60;
/** Periods listed per node when no range is asked for: this many up to the current one. */
export const PERIODS_LISTED_DEFAULT = 12;
/** Rows (nodes times periods) one listing may answer; past it, name a node or a shorter range. */
export const PERIOD_ROWS_MAX = 2_000;
/** The longest reason of a reopening. */
export const PERIOD_REASON_LENGTH_MAX = 500;
/**
 * The first and the last day a period may hold: years 1 to 9999, those an ISO date of four
 * digits names. Year 0 reads as a date but is no year of any books, and a period of it could be
 * locked and snapshotted, so it is refused like year 10000.
 */
export const PERIOD_DAY_MIN = '0001-01-01';
export const PERIOD_DAY_MAX = '9999-12-31';

/**
 * The day number of `text`, a day a request names at `path` (a period's first day, an end of a
 * range). Errors: `validation-failed` naming `path` for a text that is not a date, or a date
 * before year 1 or after year 9999.
 */
export function periodDayOf(path: string, text: string): number {
  const day = parseIsoDate(text);
  if (day === undefined || text < PERIOD_DAY_MIN || text > PERIOD_DAY_MAX)
    throw new AppError(
      'validation-failed',
      `${path.slice(1)} ${text} is not a date from ${PERIOD_DAY_MIN} to ${PERIOD_DAY_MAX}`,
      { errors: [{ path, message: `must be a date from ${PERIOD_DAY_MIN} to ${PERIOD_DAY_MAX}` }] },
    );
  return day;
}

/** A period's state: by the calendar (`open`, `grace`, `closed`) or by hand (`closed`, `locked`). */
export type PeriodStateName = 'open' | 'grace' | 'closed' | 'locked';

/**
 * Why a period is in its state: `calendar` (the current period and the later ones are open, the
 * earlier ones closed), `grace` (the previous period in the node config's grace time),
 * `closed-by-hand`, `locked-by-hand`, `reopened`.
 */
export type PeriodBasis = 'calendar' | 'grace' | 'closed-by-hand' | 'locked-by-hand' | 'reopened';

/** One period of one node as listed. */
export interface PeriodView {
  node: Record<string, string>;
  firstDay: string;
  lastDay: string;
  /** The fiscal year and period number in the accounting configuration's fiscal calendar. */
  fiscalYear: number | null;
  number: number | null;
  /** Whether it holds the node's business date. */
  current: boolean;
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

/** The periods of an accounting configuration, per node. */
export interface PeriodListing {
  accountingConfig: string;
  periods: PeriodView[];
}

/** What a listing asks. */
export interface PeriodQuery {
  accountingConfig: string;
  node?: Record<string, string>;
  from?: string;
  to?: string;
}

/** Which period a change is about. */
export interface PeriodTarget {
  accountingConfig: string;
  node: Record<string, string>;
  firstDay: string;
}

/** Who acts: the user's e-mail and the client id. */
export interface PeriodCaller {
  ownerEmail: string;
  clientId: string;
}

/** What a change answers: the period as it is now, and the snapshot a close or a lock took. */
export interface PeriodChange {
  period: PeriodView;
  snapshot: StoredSnapshot | null;
}

/** What an approved change binds to: the period's basis and when it was last set by hand. */
export type PeriodBinding = Pick<PeriodView, 'basis' | 'actedAt'>;

/** Every change, in the order they are listed. */
const PERIOD_ACTIONS: readonly PeriodAction[] = ['close', 'lock', 'reopen'];

/** The state of a period by the calendar alone at one instant. */
type CalendarState = 'future' | 'open' | 'grace' | 'closed';

function calendarStateOf(open: NodeOpenPeriods, firstDay: string): CalendarState {
  if (firstDay > open.currentPeriodFirstDay) return 'future';
  if (firstDay === open.currentPeriodFirstDay) return 'open';
  if (firstDay >= open.earliestOpenFirstDay) return open.previousOpen ? 'grace' : 'closed';
  return 'closed';
}

/** The listed state of a period from its calendar state and its manual state, if any. */
function viewStateOf(
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
function refusalOf(
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

/** Periods: listing, close, lock, reopen and snapshots (see the header). */
export class PeriodService<T extends PreparedAccountingRevision> {
  readonly #store: PeriodStore;
  readonly #snapshots: ConfigurationSnapshots<T>;
  readonly #clock: Clock;
  readonly #newId: () => string;
  readonly #businessDatePinned: string | undefined;

  constructor(
    store: PeriodStore,
    snapshots: ConfigurationSnapshots<T>,
    clock: Clock,
    options: { newId: () => string; businessDatePinned: string | undefined },
  ) {
    this.#store = store;
    this.#snapshots = snapshots;
    this.#clock = clock;
    this.#newId = options.newId;
    this.#businessDatePinned = options.businessDatePinned;
  }

  /** The names of the accounting configurations of the configuration stored now, sorted. */
  async accountingConfigNames(): Promise<string[]> {
    const { prepared } = await this.#snapshots.current();
    return [...prepared.accounting.accountingConfigs.keys()].sort();
  }

  /**
   * The nodes the accounting configuration is assigned to (only `node` when given), with the
   * prepared configuration. Errors: `not-found` for an accounting configuration that does not
   * exist, or a node it is not assigned to.
   */
  async #nodesOf(accountingConfig: string, node: Record<string, string> | undefined) {
    const { stored, prepared } = await this.#snapshots.current();
    const accounting = prepared.accounting;
    const config = accounting.accountingConfigs.get(accountingConfig);
    if (config === undefined)
      throw new AppError('not-found', `no accounting configuration ${accountingConfig}`);
    let nodes: PreparedNode[];
    if (node === undefined)
      nodes = [...accounting.nodesByKey.values()].filter((n) => n.configs.has(accountingConfig));
    else {
      const found = accounting.nodesByKey.get(nodeKeyOf(node));
      if (found === undefined || !found.configs.has(accountingConfig))
        throw new AppError(
          'not-found',
          `no node ${JSON.stringify(node)} with accounting configuration ${accountingConfig}`,
        );
      nodes = [found];
    }
    return { accounting, config, nodes, revision: stored.revision };
  }

  /** The open window of a node now; `conflict` when its time zone is unknown. */
  #openOf(accounting: T['accounting'], node: PreparedNode, accountingConfig: string): NodeOpenPeriods {
    const now = this.#clock.now();
    const open = nodeOpenPeriods(accounting, node.fields, accountingConfig, {
      now,
      ...(this.#businessDatePinned === undefined ? {} : { businessDatePinned: this.#businessDatePinned }),
    });
    if (open === undefined)
      throw new AppError('conflict', `node ${JSON.stringify(node.fields)} has a time zone that is not known`);
    return open;
  }

  /**
   * The periods of an accounting configuration per node: by default the PERIODS_LISTED_DEFAULT
   * periods up to each node's current one, else those that overlap `from`..`to`. Errors:
   * `validation-failed` for an end of the range that is not a date of years 1 to 9999, a range
   * that ends before it starts, spans more than PERIODS_LISTED_MAX periods, or gives more than
   * PERIOD_ROWS_MAX rows; `not-found` (see `#nodesOf`).
   */
  async list(query: PeriodQuery): Promise<PeriodListing> {
    // The request's own rules first: a bad range is a 400 whatever the configuration holds.
    const range = rangeOf(query);
    const { accounting, config, nodes } = await this.#nodesOf(query.accountingConfig, query.node);
    const [stored, counts] = await Promise.all([
      this.#store.statesOf(query.accountingConfig, query.node),
      this.#store.snapshotCounts(query.accountingConfig, query.node),
    ]);
    const storedByKey = new Map(stored.map((s) => [`${nodeKeyOf(s.node)}\t${s.firstDay}`, s]));
    const countByKey = new Map(counts.map((c) => [`${nodeKeyOf(c.node)}\t${c.firstDay}`, c.count]));
    const periods: PeriodView[] = [];
    for (const node of nodes) {
      const open = this.#openOf(accounting, node, query.accountingConfig);
      const current = parseIsoDate(open.currentPeriodFirstDay) ?? 0;
      let first = range?.from ?? monthsBefore(current, PERIODS_LISTED_DEFAULT - 1);
      const last = range?.to ?? current;
      for (; first <= last; first = nextPeriodFirstDayOf(first)) {
        if (periods.length >= PERIOD_ROWS_MAX)
          throw new AppError('validation-failed', `a listing holds at most ${PERIOD_ROWS_MAX} periods`, {
            errors: [{ path: '/node', message: 'name a node, or ask for a shorter range' }],
          });
        const firstDay = formatIsoDate(first);
        const key = `${node.key}\t${firstDay}`;
        const calendar = calendarStateOf(open, firstDay);
        const stored = storedByKey.get(key);
        const fiscal =
          config.fiscalCalendar === undefined ? undefined : fiscalPeriodOf(config.fiscalCalendar, first);
        periods.push({
          node: { ...node.fields },
          firstDay,
          lastDay: formatIsoDate(periodLastDayOf(first)),
          fiscalYear: fiscal?.fiscalYear ?? null,
          number: fiscal?.number ?? null,
          current: first === current,
          ...viewStateOf(calendar, stored),
          snapshots: countByKey.get(key) ?? 0,
          actions: PERIOD_ACTIONS.filter((a) => refusalOf(a, calendar, stored?.state) === undefined),
        });
      }
    }
    return { accountingConfig: query.accountingConfig, periods };
  }

  /**
   * The node, first day, reason and calendar state of a change, checked as `act` checks them.
   * Errors, in this order: `validation-failed` (a first day that is not a date of years 1 to 9999
   * or does not start a period, a blank reason of a reopening), `not-found`.
   */
  async #changeOf(action: PeriodAction, target: PeriodTarget, reason: string | undefined) {
    // The request's own rules first: a bad first day or reason is a 400 whatever the
    // configuration holds.
    const first = periodDayOf('/firstDay', target.firstDay);
    if (periodFirstDayOf(first) !== first)
      throw new AppError('validation-failed', `${target.firstDay} is not the first day of a period`, {
        errors: [{ path: '/firstDay', message: 'must be the first day of a period (of a calendar month)' }],
      });
    const note = reason?.trim() ?? '';
    if (action === 'reopen' && note === '')
      throw new AppError('validation-failed', 'a reason is required to reopen a period', {
        errors: [{ path: '/reason', message: 'must not be blank' }],
      });
    const { accounting, nodes, revision } = await this.#nodesOf(target.accountingConfig, target.node);
    const node = nodes[0];
    if (node === undefined) throw new AppError('not-found', 'no such node');
    const open = this.#openOf(accounting, node, target.accountingConfig);
    return { node, first, note, calendar: calendarStateOf(open, target.firstDay), revision };
  }

  /**
   * What a reopening of one period would start from, changing nothing: the period as listed
   * now, whose `basis` and `actedAt` a request waiting for approval binds to (`reopenBound`), and
   * the configuration revision it was judged on. Errors: those of `act` but the pending work,
   * `period-state-conflict` when the period is open.
   */
  async reviewReopen(
    target: PeriodTarget,
    reason: string | undefined,
  ): Promise<{ period: PeriodView; revision: number }> {
    const { node, calendar, revision } = await this.#changeOf('reopen', target, reason);
    const [stored] = await this.#store
      .statesOf(target.accountingConfig, node.fields)
      .then((states) => states.filter((s) => s.firstDay === target.firstDay));
    const refusal = refusalOf('reopen', calendar, stored?.state);
    if (refusal !== undefined) throw new AppError('period-state-conflict', refusal);
    return { period: await this.#viewOf(target.accountingConfig, node.fields, target.firstDay), revision };
  }

  /**
   * Closes, locks or reopens one period for `caller`. A close or a lock is refused while work
   * dated in the period is pending and keeps a trial-balance snapshot of the period's last day; a
   * reopening needs a reason. Errors: `not-found`, `validation-failed` (a first day that does not
   * start a period, a blank reason), `period-state-conflict` (the state does not allow it),
   * `period-work-pending` (with the counts in `pending`), `conflict` (a trial balance too large).
   */
  async act(
    action: PeriodAction,
    target: PeriodTarget,
    reason: string | undefined,
    caller: PeriodCaller,
  ): Promise<PeriodChange> {
    const change = await this.#change(action, target, reason, caller, undefined);
    if ('moved' in change) throw new Error('a change without a binding cannot have moved');
    return change;
  }

  /**
   * Reopens a period for an approved request: only while the period's `basis` and `actedAt` are
   * still those it was approved on, checked in the change's own transaction; `moved` otherwise,
   * changing nothing. Errors: those of `act`.
   */
  async reopenBound(
    target: PeriodTarget,
    reason: string,
    caller: PeriodCaller,
    bound: PeriodBinding & { approvalRequestId: string },
  ): Promise<PeriodChange | { moved: string }> {
    return this.#change('reopen', target, reason, caller, bound);
  }

  async #change(
    action: PeriodAction,
    target: PeriodTarget,
    reason: string | undefined,
    caller: PeriodCaller,
    bound: (PeriodBinding & { approvalRequestId: string }) | undefined,
  ): Promise<PeriodChange | { moved: string }> {
    const { node, first, note, calendar } = await this.#changeOf(action, target, reason);
    let moved: string | undefined;
    const result = await this.#store.act({
      action,
      accountingConfig: target.accountingConfig,
      node: node.fields,
      firstDay: target.firstDay,
      lastDay: formatIsoDate(periodLastDayOf(first)),
      reason: action === 'reopen' ? note : null,
      actedBy: caller.ownerEmail,
      clientId: caller.clientId,
      at: this.#clock.now().toISOString(),
      snapshotId: this.#newId(),
      approvalRequestId: bound?.approvalRequestId,
      refusalOf: (stored) => {
        const now = viewStateOf(calendar, stored);
        if (bound !== undefined && (now.basis !== bound.basis || now.actedAt !== bound.actedAt)) {
          moved = `the period is ${now.state} (${now.basis}${now.actedAt === null ? '' : ` at ${now.actedAt}`}) now, no longer ${bound.basis}${bound.actedAt === null ? '' : ` at ${bound.actedAt}`}`;
          return moved;
        }
        return refusalOf(action, calendar, stored?.state);
      },
    });
    if (moved !== undefined) return { moved };
    if (result.kind === 'refused') throw new AppError('period-state-conflict', result.detail);
    if (result.kind === 'pending') {
      const { waitingRecords, unpostedJournals } = result.pending;
      throw new AppError(
        'period-work-pending',
        `the period cannot be ${action === 'close' ? 'closed' : 'locked'} yet: ${waitingRecords} records wait for processing and ${unpostedJournals} journals dated in it are unposted`,
        { pending: result.pending },
      );
    }
    const period = await this.#viewOf(target.accountingConfig, node.fields, target.firstDay);
    return { period, snapshot: result.snapshot ?? null };
  }

  /** One period as listed. */
  async #viewOf(
    accountingConfig: string,
    node: Record<string, string>,
    firstDay: string,
  ): Promise<PeriodView> {
    const listed = await this.list({ accountingConfig, node, from: firstDay, to: firstDay });
    const period = listed.periods[0];
    if (period === undefined) throw new Error('a period of a known node is not listed');
    return period;
  }

  /**
   * The snapshots of one period, newest first. Errors: `validation-failed` naming `firstDay` when
   * it is not a date of years 1 to 9999, `not-found` (see `#nodesOf`).
   */
  async snapshots(target: PeriodTarget): Promise<StoredSnapshot[]> {
    periodDayOf('/firstDay', target.firstDay);
    await this.#nodesOf(target.accountingConfig, target.node);
    return this.#store.snapshots(target.accountingConfig, target.node, target.firstDay);
  }

  /** One snapshot with its balances. Errors: `not-found`. */
  async snapshot(snapshotId: string): Promise<StoredSnapshot & { balances: TrialBalanceLine[] }> {
    const found = await this.#store.snapshot(snapshotId);
    if (found === undefined) throw new AppError('not-found', `no snapshot ${snapshotId}`);
    return found;
  }
}

/** The day number of the first day of the period `count` periods before the one starting `first`. */
function monthsBefore(first: number, count: number): number {
  let day = first;
  for (let i = 0; i < count; i += 1) day = periodFirstDayOf(day - 1);
  return day;
}

/**
 * The first days of the first and last periods of an asked range, or `undefined` for the
 * default. Errors: `validation-failed` naming `from` or `to`.
 */
function rangeOf(query: PeriodQuery): { from: number; to: number } | undefined {
  if (query.from === undefined && query.to === undefined) return undefined;
  if (query.from === undefined || query.to === undefined)
    throw new AppError('validation-failed', 'a range needs both from and to', {
      errors: [
        {
          path: query.from === undefined ? '/from' : '/to',
          message: 'is required with the other end of the range',
        },
      ],
    });
  const fromDay = periodDayOf('/from', query.from);
  const toDay = periodDayOf('/to', query.to);
  const from = periodFirstDayOf(fromDay);
  const to = periodFirstDayOf(toDay);
  if (to < from)
    throw new AppError('validation-failed', 'the range must end on or after the day it starts', {
      errors: [{ path: '/to', message: 'must be on or after from' }],
    });
  let periods = 1;
  for (let day = from; day < to; day = nextPeriodFirstDayOf(day)) {
    periods += 1;
    if (periods > PERIODS_LISTED_MAX)
      throw new AppError('validation-failed', `a range spans at most ${PERIODS_LISTED_MAX} periods`, {
        errors: [{ path: '/to', message: `must be at most ${PERIODS_LISTED_MAX} periods after from` }],
      });
  }
  return { from, to };
}
