/**
 * The storage port of the periods module (docs/domain/accounting.md, Periods closed, locked and
 * reopened by hand). Every change of a period's state is one transaction: the version counter goes
 * up first (on PostgreSQL this waits for the chunks being processed and holds off the next ones
 * until it commits), then the stored state is checked again, the pending work counted, the
 * snapshot taken, the state written and the audit entry recorded; or nothing is.
 */
import type { ManualPeriodState, PeriodStates } from '../accounting/periods.js';

export {
  type ManualPeriodState,
  type PeriodStates,
  periodStatesOf,
} from '../accounting/periods.js';
export { nodeKeyOf } from '../accounting/prepare.js';
export { type TrialBalanceLine, trialBalanceHash } from './trial-balance.js';

import type { TrialBalanceLine } from './trial-balance.js';

/** What a user may do to a period. */
export type PeriodAction = 'close' | 'lock' | 'reopen';

/** A period's manual state as stored, with who set it. */
export interface StoredPeriodState {
  accountingConfig: string;
  node: Record<string, string>;
  firstDay: string;
  lastDay: string;
  state: ManualPeriodState;
  actedBy: string;
  actedAt: string;
  /** Why it was reopened; null for a close or a lock. */
  reason: string | null;
}

/** The work that keeps a period from being closed or locked. */
export interface PendingWork {
  /** Records of any session still waiting for processing: their dates are known only once processed. */
  waitingRecords: number;
  /** Journals of the node and accounting configuration dated in the period and not yet posted. */
  unpostedJournals: number;
}

/** A trial-balance snapshot, without its lines. */
export interface StoredSnapshot {
  snapshotId: string;
  accountingConfig: string;
  node: Record<string, string>;
  firstDay: string;
  lastDay: string;
  action: 'close' | 'lock';
  takenBy: string;
  takenAt: string;
  lines: number;
  /** SHA-256 (hex) of the canonical text (`trial-balance.ts`). */
  hash: string;
}

/** A change of a period's state, as the service decided it may be made. */
export interface PeriodActionInput {
  action: PeriodAction;
  accountingConfig: string;
  node: Readonly<Record<string, string>>;
  firstDay: string;
  lastDay: string;
  /** Required for a reopening; recorded with it. */
  reason: string | null;
  actedBy: string;
  clientId: string;
  at: string;
  /** The id of the snapshot a close or a lock takes. */
  snapshotId: string;
  /**
   * Why the action is refused given the manual state stored now (`undefined`: none), or
   * `undefined` when it may go on; called inside the transaction, after the counter is held.
   */
  refusalOf(stored: StoredPeriodState | undefined): string | undefined;
  /**
   * The approval request this change runs for (docs/domain/approvals.md): the change's
   * transaction marks it `approved`, and changes nothing when it is no longer `processing`.
   */
  approvalRequestId?: string | undefined;
}

/**
 * What a change came to: `done`, with the new state and the snapshot it took (close, lock);
 * `refused`, the state does not allow it (the detail says why); `pending`, work dated in the
 * period is not finished. Nothing is written unless `done`.
 */
export type PeriodActionResult =
  | { kind: 'done'; state: StoredPeriodState; snapshot: StoredSnapshot | undefined }
  | { kind: 'refused'; detail: string }
  | { kind: 'pending'; pending: PendingWork };

/** Snapshots listed per period at most. */
export const PERIOD_SNAPSHOTS_LISTED_MAX = 100;
/**
 * Balances one snapshot may hold (accounts times currencies of one node and accounting
 * configuration); a close beyond it is refused rather than answering a snapshot no page can show.
 */
export const PERIOD_SNAPSHOT_LINES_MAX = 20_000;

/** The periods port (see the header). */
export interface PeriodStore {
  /** Every manual state with the counter's version, for processing and the period checks. */
  periodStates(): Promise<PeriodStates>;
  /** The stored manual states of an accounting configuration, of one node when given. */
  statesOf(
    accountingConfig: string,
    node: Readonly<Record<string, string>> | undefined,
  ): Promise<StoredPeriodState[]>;
  /**
   * Changes a period's state (see the header); a close or a lock also takes the snapshot. Errors
   * (thrown as `AppError`): `conflict` when the trial balance has more than
   * PERIOD_SNAPSHOT_LINES_MAX lines.
   */
  act(input: PeriodActionInput): Promise<PeriodActionResult>;
  /** How many snapshots each period of an accounting configuration (of one node when given) has. */
  snapshotCounts(
    accountingConfig: string,
    node: Readonly<Record<string, string>> | undefined,
  ): Promise<{ node: Record<string, string>; firstDay: string; count: number }[]>;
  /** The snapshots of one period, newest first, at most PERIOD_SNAPSHOTS_LISTED_MAX. */
  snapshots(
    accountingConfig: string,
    node: Readonly<Record<string, string>>,
    firstDay: string,
  ): Promise<StoredSnapshot[]>;
  /** One snapshot with its lines sorted by account and currency. */
  snapshot(snapshotId: string): Promise<(StoredSnapshot & { balances: TrialBalanceLine[] }) | undefined>;
}
