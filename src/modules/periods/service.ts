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
  type PreparedFiscalCalendar,
  periodFirstDayOf,
  periodLastDayOf,
} from '../accounting/periods.js';
import { nodeKeyOf, type PreparedAccountingRevision, type PreparedNode } from '../accounting/prepare.js';
import type { AuditActor } from '../audit/store.js';
import { BindingMoved, type ChangeOptions, type ChangeRunner, type Outcome } from '../changes/runner.js';
import type { ConfigurationSnapshots } from '../configuration/snapshot.js';
import { type PeriodChange, type PeriodChangeTables, periodChanges } from './changes.js';
import {
  calendarStateOf,
  type PeriodBinding,
  type PeriodPlace,
  type PeriodView,
  periodViewOf,
  refusalOf,
} from './rules.js';
import type { PeriodAction, PeriodStore, StoredSnapshot, TrialBalanceLine } from './store.js';

export type { PeriodChange } from './changes.js';
export type { PeriodBasis, PeriodBinding, PeriodStateName, PeriodView } from './rules.js';

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

/** Periods: listing, close, lock, reopen and snapshots (see the header). */
export class PeriodService<T extends PreparedAccountingRevision> {
  readonly #store: PeriodStore;
  readonly #runner: ChangeRunner<PeriodChangeTables>;
  readonly #snapshots: ConfigurationSnapshots<T>;
  readonly #clock: Clock;
  readonly #newId: () => string;
  readonly #businessDatePinned: string | undefined;

  constructor(
    store: PeriodStore,
    runner: ChangeRunner<PeriodChangeTables>,
    snapshots: ConfigurationSnapshots<T>,
    clock: Clock,
    options: { newId: () => string; businessDatePinned: string | undefined },
  ) {
    this.#store = store;
    this.#runner = runner;
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
        periods.push(
          periodViewOf(
            placeOf(config, node, first, current),
            calendarStateOf(open, firstDay),
            storedByKey.get(key),
            countByKey.get(key) ?? 0,
          ),
        );
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
    const { accounting, config, nodes, revision } = await this.#nodesOf(target.accountingConfig, target.node);
    const node = nodes[0];
    if (node === undefined) throw new AppError('not-found', 'no such node');
    const open = this.#openOf(accounting, node, target.accountingConfig);
    const current = parseIsoDate(open.currentPeriodFirstDay) ?? 0;
    return {
      node,
      note,
      calendar: calendarStateOf(open, target.firstDay),
      place: placeOf(config, node, first, current),
      revision,
    };
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
   * Closes, locks or reopens one period, through the change runner (`changes.ts`): a dry run
   * answers what the change would, an `Idempotency-Key` replays the first answer. A close or a
   * lock is refused while work dated in the period is pending and keeps a trial-balance snapshot
   * of the period's last day; a reopening needs a reason. Errors: `not-found`, `validation-failed`
   * (a first day that does not start a period, a blank reason), `period-state-conflict` (the state
   * does not allow it), `period-work-pending` (with the counts in `pending`), `conflict` (a trial
   * balance too large), `idempotency-key-reused`.
   */
  async act(
    action: PeriodAction,
    target: PeriodTarget,
    reason: string | undefined,
    options: ChangeOptions,
  ): Promise<Outcome<PeriodChange>> {
    return this.#runner.run(periodChanges[action], await this.#inputOf(action, target, reason), options);
  }

  /**
   * Reopens a period for an approved request, as `actor`: the same change as `act`, run only while
   * the period's `basis` and `actedAt` are still those it was approved on (checked in the change's
   * own transaction, which marks the request `approved`); `moved` otherwise, changing nothing.
   * Errors: those of `act`.
   */
  async reopenBound(
    target: PeriodTarget,
    reason: string,
    actor: AuditActor,
    bound: PeriodBinding & { approvalRequestId: string },
  ): Promise<PeriodChange | { moved: string }> {
    const input = await this.#inputOf('reopen', target, reason);
    try {
      const binding = { basis: bound.basis, actedAt: bound.actedAt };
      const { answer } = await this.#runner.run(
        periodChanges.reopen,
        { ...input, bound: binding },
        { actor, approvalRequestId: bound.approvalRequestId },
      );
      return answer;
    } catch (error) {
      if (error instanceof BindingMoved) return { moved: error.detail };
      throw error;
    }
  }

  /** What the change of `action` on `target` runs with; the request's errors of `act`. */
  async #inputOf(action: PeriodAction, target: PeriodTarget, reason: string | undefined) {
    const { node, note, calendar, place } = await this.#changeOf(action, target, reason);
    return {
      period: {
        accountingConfig: target.accountingConfig,
        node: node.fields,
        firstDay: place.firstDay,
        lastDay: place.lastDay,
      },
      reason: action === 'reopen' ? note : null,
      calendar,
      place,
      snapshotId: this.#newId(),
    };
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

/** What the period starting on day `first` of `node` is, whatever its state; `current` is the node's current period. */
function placeOf(
  config: { fiscalCalendar: PreparedFiscalCalendar | undefined },
  node: PreparedNode,
  first: number,
  current: number,
): PeriodPlace {
  const fiscal =
    config.fiscalCalendar === undefined ? undefined : fiscalPeriodOf(config.fiscalCalendar, first);
  return {
    node: { ...node.fields },
    firstDay: formatIsoDate(first),
    lastDay: formatIsoDate(periodLastDayOf(first)),
    fiscalYear: fiscal?.fiscalYear ?? null,
    number: fiscal?.number ?? null,
    current: first === current,
  };
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
