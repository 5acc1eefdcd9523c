/**
 * The rows of approvals and periods: requests waiting for a second person, period states and
 * their trial-balance snapshots.
 */
/** An action waiting, or that waited, for a second person (migration 0028). */
export interface ApprovalRequestsTable {
  /** A time-ordered UUID. */
  id: string;
  kind: string;
  status: string;
  /** The e-mail of the user whose credential (or sign-in) made the request: the maker. */
  maker_email: string;
  maker_client_id: string;
  created_at: string;
  idempotency_key: string | null;
  /** The action as its kind executes it (JSON); read only to execute it. */
  payload: string;
  document_sha256: string;
  /** The configuration revision the dry run was made against. */
  revision: number;
  /** JSON of the dry run's counts shown to the approver. */
  dry_run: string;
  /** JSON of what the approver reads besides the counts (a configuration's changes). */
  summary: string;
  decided_by: string | null;
  decided_by_client_id: string | null;
  decided_at: string | null;
  /** Why it was rejected; null otherwise. */
  reason: string | null;
  finished_at: string | null;
  /** JSON of what the execution did; null until it did. */
  outcome: string | null;
  /** JSON `{ code, detail }` of why it was invalid or failed; null otherwise. */
  problem: string | null;
}

/** One row (`id` 1): the counter that goes up with every change of a period's state (migration 0026). */
export interface PeriodStatesVersionTable {
  id: number;
  version: number;
}

/** The manual state of a period of a node and accounting configuration (migration 0026). */
export interface PeriodStatesTable {
  accounting_config: string;
  /** The node's canonical JSON, as `journals.node` holds it. */
  node: string;
  first_day: string;
  last_day: string;
  state: string;
  acted_by: string;
  client_id: string;
  acted_at: string;
  /** Why a period was reopened; null for a close or a lock. */
  reason: string | null;
}

/** A trial-balance snapshot taken by a close or a lock (migration 0026). */
export interface PeriodSnapshotsTable {
  id: string;
  accounting_config: string;
  node: string;
  first_day: string;
  last_day: string;
  /** `close` or `lock`. */
  action: string;
  taken_by: string;
  taken_at: string;
  lines: number;
  /** SHA-256 (hex) of the snapshot's canonical text. */
  hash: string;
}

/** A balance of a snapshot per account and currency. */
export interface PeriodSnapshotLinesTable {
  snapshot_id: string;
  account: string;
  currency: string;
  balance: string;
}

/** The first answer of a change made under an `Idempotency-Key` (migration 0034). */
export interface ChangeAnswersTable {
  /** The client whose key it is: its credential's client id, else the user. */
  client_id: string;
  idempotency_key: string;
  action: string;
  /** The SHA-256 of the change's request (`lib/idempotency.ts`). */
  digest: string;
  /** The answer as the change keeps it (JSON). */
  answer: string;
  created_at: string;
}
