/**
 * The changes of a period's state, made through the change runner (`modules/changes/runner.ts`):
 * a close, a lock or a reopening of one period. The service checks the request's own rules and
 * reads the calendar first (`service.ts`); the change, in the runner's transaction, holds the
 * version counter, checks the stored state again (and, for an approved reopening, that it is still
 * the state the approval was bound to), refuses a close or a lock while work dated in the period
 * is pending, takes the snapshot, stores the new state, and answers the period as it is then.
 */
import { AppError } from '../../lib/errors.js';
import { signedInClientIdOf } from '../audit/entry.js';
import { type Applied, BindingMoved, type Change, type ChangeContext } from '../changes/runner.js';
import {
  type CalendarState,
  type PeriodBinding,
  type PeriodPlace,
  type PeriodView,
  periodViewOf,
  refusalOf,
  viewStateOf,
} from './rules.js';
import type { PeriodAction, PeriodKey, PeriodTables, StoredSnapshot } from './store.js';

/** The tables a change of a period's state writes. */
export interface PeriodChangeTables {
  periods: PeriodTables;
}

/** A change of one period as the service prepared it: the request checked, the calendar read. */
export interface PeriodChangeInput {
  period: PeriodKey;
  /** The reason of a reopening (trimmed); null for a close or a lock. */
  reason: string | null;
  /** The period's state by the calendar alone, and what it is whatever its state. */
  calendar: CalendarState;
  place: PeriodPlace;
  /** The id of the snapshot a close or a lock takes. */
  snapshotId: string;
  /** For an approved reopening: the state the approval was bound to. */
  bound?: PeriodBinding | undefined;
}

/** What a change answers: the period as it is now, and the snapshot a close or a lock took. */
export interface PeriodChange {
  period: PeriodView;
  snapshot: StoredSnapshot | null;
}

/** How a period moved away from the state an approval was bound to, or undefined when it did not. */
function movedFrom(bound: PeriodBinding, now: Pick<PeriodView, 'state' | 'basis' | 'actedAt'>) {
  if (now.basis === bound.basis && now.actedAt === bound.actedAt) return undefined;
  const at = (actedAt: string | null) => (actedAt === null ? '' : ` at ${actedAt}`);
  return `the period is ${now.state} (${now.basis}${at(now.actedAt)}) now, no longer ${bound.basis}${at(bound.actedAt)}`;
}

/** The change of `action`. */
function periodChangeOf(action: PeriodAction): Change<PeriodChangeInput, PeriodChange, PeriodChangeTables> {
  return {
    action: `periods.${action}`,
    // The calendar, the place and the snapshot id are read or drawn for this attempt.
    requestOf: ({ period, reason }) => ({ period, reason }),
    apply: (tx, input, context) => applyPeriodChange(action, tx, input, context),
  };
}

/** Each change of a period's state, by its action. */
export const periodChanges: {
  readonly [A in PeriodAction]: Change<PeriodChangeInput, PeriodChange, PeriodChangeTables>;
} = {
  close: periodChangeOf('close'),
  lock: periodChangeOf('lock'),
  reopen: periodChangeOf('reopen'),
};

/** `action` on the period of `input`, in `tx`: the steps in the order the header gives. */
async function applyPeriodChange(
  action: PeriodAction,
  tx: PeriodChangeTables,
  input: PeriodChangeInput,
  { at, actor }: ChangeContext,
): Promise<Applied<PeriodChange>> {
  const { period, calendar } = input;
  // The counter first: on PostgreSQL this waits for the processing and reversals in progress.
  await tx.periods.bumpVersion();
  const found = await tx.periods.stateOf(period);
  if (input.bound !== undefined) {
    const moved = movedFrom(input.bound, viewStateOf(calendar, found));
    if (moved !== undefined) throw new BindingMoved(moved);
  }
  const refusal = refusalOf(action, calendar, found?.state);
  if (refusal !== undefined) throw new AppError('period-state-conflict', refusal);
  let snapshot: StoredSnapshot | null = null;
  if (action !== 'reopen') {
    const pending = await tx.periods.pendingWork(period);
    if (pending.waitingRecords > 0 || pending.unpostedJournals > 0)
      throw new AppError(
        'period-work-pending',
        `the period cannot be ${action === 'close' ? 'closed' : 'locked'} yet: ${pending.waitingRecords} records wait for processing and ${pending.unpostedJournals} journals dated in it are unposted`,
        { pending },
      );
    snapshot = await tx.periods.takeSnapshot(period, {
      snapshotId: input.snapshotId,
      action,
      takenBy: actor.user,
      takenAt: at,
    });
  }
  const clientId = actor.clientId ?? signedInClientIdOf(actor.user);
  const state = {
    ...period,
    node: { ...period.node },
    state: action === 'close' ? 'closed' : action === 'lock' ? 'locked' : 'reopened',
    actedBy: actor.user,
    actedAt: at,
    reason: input.reason,
  } as const;
  await tx.periods.saveState(state, clientId);
  const snapshots = await tx.periods.snapshotCount(period);
  return {
    answer: { period: periodViewOf(input.place, calendar, state, snapshots), snapshot },
    audit: {
      details: {
        accountingConfig: period.accountingConfig,
        node: period.node,
        firstDay: period.firstDay,
        lastDay: period.lastDay,
        clientId,
        before: found?.state ?? null,
        after: state.state,
        reason: input.reason,
        ...(snapshot === null ? {} : { snapshotId: snapshot.snapshotId, hash: snapshot.hash }),
      },
    },
  };
}
