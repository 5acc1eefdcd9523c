/**
 * The storage port of the periods module (docs/domain/accounting.md, Periods closed, locked and
 * reopened by hand). Every change of a period's state is one transaction of the change runner: the
 * version counter goes up first (on PostgreSQL this waits for the chunks being processed and
 * holds off the next ones until it commits), then the stored state is checked again, the pending
 * work counted, the snapshot taken, the state written and the audit entry recorded; or nothing
 * is (`changes.ts`).
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

/** One period of one node and accounting configuration, by its days. */
export interface PeriodKey {
  accountingConfig: string;
  node: Readonly<Record<string, string>>;
  firstDay: string;
  lastDay: string;
}

/**
 * The periods' tables inside a change's transaction (the change runner's, `modules/changes/`):
 * rows, not rules. A change calls `bumpVersion` first (see the header).
 */
export interface PeriodTables {
  /**
   * Increments the version of the period states; on PostgreSQL this waits for the chunks and
   * reversals in progress and holds off the next ones until the change commits.
   */
  bumpVersion(): Promise<void>;
  /** The manual state stored for the period, if any. */
  stateOf(period: PeriodKey): Promise<StoredPeriodState | undefined>;
  /** The work dated in the period (and any record still waiting) that is not finished. */
  pendingWork(period: PeriodKey): Promise<PendingWork>;
  /**
   * Takes the trial-balance snapshot of a close or a lock, as of the period's last day. Errors:
   * `conflict` when the trial balance has more than PERIOD_SNAPSHOT_LINES_MAX lines.
   */
  takeSnapshot(
    period: PeriodKey,
    taken: { snapshotId: string; action: 'close' | 'lock'; takenBy: string; takenAt: string },
  ): Promise<StoredSnapshot>;
  /** Stores the period's manual state, set by the client `clientId`. */
  saveState(state: StoredPeriodState, clientId: string): Promise<void>;
  /** How many snapshots the period has. */
  snapshotCount(period: PeriodKey): Promise<number>;
}

/** Snapshots listed per period at most. */
export const PERIOD_SNAPSHOTS_LISTED_MAX = 100;
/**
 * Balances one snapshot may hold (accounts times currencies of one node and accounting
 * configuration); a close beyond it is refused rather than answering a snapshot no page can show.
 */
export const PERIOD_SNAPSHOT_LINES_MAX = 20_000;

/** The periods port's reads (see the header); its changes are made in `PeriodTables`. */
export interface PeriodStore {
  /** Every manual state with the counter's version, for processing and the period checks. */
  periodStates(): Promise<PeriodStates>;
  /** The stored manual states of an accounting configuration, of one node when given. */
  statesOf(
    accountingConfig: string,
    node: Readonly<Record<string, string>> | undefined,
  ): Promise<StoredPeriodState[]>;
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
