import type { Generated } from 'kysely';

/**
 * The tables as Kysely sees them. Both dialects store the same shapes: timestamps are RFC 3339
 * UTC strings (`2026-11-22T10:04:05.123Z`, which sort as text), dates are `YYYY-MM-DD`, flags are
 * 0/1 integers, JSON documents are text. Amounts are `NUMERIC` on PostgreSQL and text on SQLite
 * (whose NUMERIC affinity would turn them into binary floats); both come back as strings.
 */
export interface Database {
  users: UsersTable;
  credentials: CredentialsTable;
  token_families: TokenFamiliesTable;
  oauth_tokens: OAuthTokensTable;
  configuration: ConfigurationTable;
  audit_log: AuditLogTable;
  audit_chain: AuditChainTable;
  sign_in_failure_tallies: SignInFailureTalliesTable;
  configuration_revisions: ConfigurationRevisionsTable;
  ingestions: IngestionsTable;
  chunks: ChunksTable;
  records: RecordsTable;
  record_errors: RecordErrorsTable;
  processing_errors: ProcessingErrorsTable;
  journals: JournalsTable;
  journal_lines: JournalLinesTable;
  balance_moves: BalanceMovesTable;
  balances: BalancesTable;
  journal_day_counts: JournalDayCountsTable;
  processing_error_days: ProcessingErrorDaysTable;
  processing_error_states: ProcessingErrorStatesTable;
  extract_journal_log: ExtractJournalLogTable;
  entity_record_counts: EntityRecordCountsTable;
  session_day_counts: SessionDayCountsTable;
  session_entity_counts: SessionEntityCountsTable;
  admin_sign_ins: AdminSignInsTable;
  admin_one_time_views: AdminOneTimeViewsTable;
  auth_failures: AuthFailuresTable;
  request_counts: RequestCountsTable;
  reprocess_runs: ReprocessRunsTable;
  reprocess_run_outcomes: ReprocessRunOutcomesTable;
  reprocess_schedule: ReprocessScheduleTable;
  reversals: ReversalsTable;
  extraction_configurations: ExtractionConfigurationsTable;
  extraction_executions: ExtractionExecutionsTable;
  extraction_parts: ExtractionPartsTable;
  events: EventsTable;
  event_subscriptions: EventSubscriptionsTable;
  event_secrets: EventSecretsTable;
  event_deliveries: EventDeliveriesTable;
  event_keys: EventKeysTable;
  approval_requests: ApprovalRequestsTable;
  approval_day_counts: ApprovalDayCountsTable;
  period_states_version: PeriodStatesVersionTable;
  period_states: PeriodStatesTable;
  period_snapshots: PeriodSnapshotsTable;
  period_snapshot_lines: PeriodSnapshotLinesTable;
}

export interface UsersTable {
  email: string;
  display_name: string;
  password_hash: string | null;
  roles: string;
  disabled: number;
  created_at: string;
}

export interface CredentialsTable {
  client_id: string;
  secret_hash: string;
  owner_email: string;
  name: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  /** When the credential last obtained a token; null when never (or before the column existed). */
  last_used_at: Generated<string | null>;
}

/** Sign-ins of the administration interface (migration 0004, renamed by 0011). */
export interface AdminSignInsTable {
  /** The SHA-256 of the sign-in's cookie value, never the value. */
  sign_in_hash: string;
  user_email: string;
  created_at: string;
  last_seen_at: string;
  /** The idle deadline, never later than `ends_at`. */
  expires_at: string;
  /** The absolute deadline, however active the session is. */
  ends_at: string;
}

/** What a sign-in is shown once, sealed under its cookie value (migration 0010, renamed by 0011). */
export interface AdminOneTimeViewsTable {
  /** Orders a sign-in's views, oldest first. */
  id: Generated<number>;
  sign_in_hash: string;
  /** What the view is of, within the sign-in (a new credential's client id). */
  view_key: string;
  /** The value, sealed under a key derived from the session's cookie value. */
  sealed: string;
  expires_at: string;
}

/** Failed authentications of one key in one fixed window (migration 0005). */
export interface AuthFailuresTable {
  /** SHA-256 of the counted key: a client id or e-mail with an address, or an address. */
  key_hash: string;
  /** Epoch milliseconds at which the window began. */
  window_started_ms: number;
  failures: number;
}

/** Requests of one key in its current fixed window, for the per-client rate limit (migration 0006). */
export interface RequestCountsTable {
  /** SHA-256 of the counted key: a client id or an address, with its kind. */
  key_hash: string;
  /** Epoch milliseconds at which the window began, a multiple of the window length. */
  window_started_ms: number;
  requests: number;
}

export interface TokenFamiliesTable {
  family_id: string;
  client_id: string;
  created_at: string;
  revoked_at: string | null;
}

export interface OAuthTokensTable {
  token_hash: string;
  kind: 'access' | 'refresh';
  family_id: string;
  client_id: string;
  issued_at: string;
  expires_at: string;
  used_at: string | null;
  revoked_at: string | null;
  /**
   * A used refresh token: the answer of the refresh that used it, AES-256-GCM under a key derived
   * from the token (never the token or the answer in clear), kept for the reuse grace window
   * (migration 0006); else null.
   */
  answer_sealed: Generated<string | null>;
}

export interface ConfigurationTable {
  id: number;
  revision: number;
  version: string;
  document: string;
  updated_at: string;
  updated_by: string | null;
}

export interface AuditLogTable {
  id: Generated<number>;
  at: string;
  actor: string;
  action: string;
  version: string | null;
  revision: number;
  sections: string;
  /** JSON of the processing data counts the change wiped; null on entries older than the column. */
  deleted: string | null;
  /** JSON of what a reprocessing run or a schedule change did (migration 0018); null otherwise. */
  details: Generated<string | null>;
  /** The entry's position in the chain, from 1 without a gap (migration 0027). */
  seq: number;
  /** The credential that made the change through the API, when it did. */
  client_id: string | null;
  /** JSON pictures of the changed thing before and after the change; null when there was none. */
  summary_before: string | null;
  summary_after: string | null;
  /** The previous entry's hash and this entry's (`modules/audit/entry.ts`, `auditHashOf`). */
  prev_hash: string;
  hash: string;
}

/**
 * The head of the audit chain, one row (id 1): the last position handed out and its hash. Every
 * append updates it first, which serialises appends across instances (`storage/audit-trail.ts`).
 */
export interface AuditChainTable {
  id: number;
  seq: number;
  hash: string;
}

/**
 * Failed sign-ins counted per user (or `*unknown*`) and hour until the hour's entry is written
 * to the audit trail (`storage/sign-in-store.ts`).
 */
export interface SignInFailureTalliesTable {
  subject: string;
  window_started_at: string;
  failures: number;
}

/**
 * One configuration revision per upload or deletion (migration 0017): who made it, when, its
 * section counts, and the canonical text of its document with that text's SHA-256.
 */
export interface ConfigurationRevisionsTable {
  revision: number;
  at: string;
  /** Null only on a backfilled revision whose author was not recorded. */
  actor: string | null;
  action: 'upload' | 'delete';
  version: string;
  sha256: string;
  /** JSON of the section counts. */
  sections: string;
  document: string;
}

export interface IngestionsTable {
  ingestion_id: string;
  ingestion_name: string | null;
  namespace: string;
  entity: string;
  state: 'pending' | 'closed';
  timeout: string;
  timeout_ms: number;
  opened_by: string;
  opened_on: string;
  closed_by: string | null;
  closed_on: string | null;
  close_reason: 'manual' | null;
  last_activity_on: string;
  /** Epoch milliseconds: `now + timeout` at the last request, so SQL on both dialects can compare it. */
  expires_at_ms: number;
  /** The last chunk sequence number handed out; numbers are never reused, even by a failed chunk. */
  chunk_seq_next: number;
  /** Chunks answered (stored or rejected), counted in the chunk's own transaction. */
  chunks: number;
  api_calls: number;
  total_rows: number;
  success_rows: number;
  failed_rows: number;
  processed_rows: number;
  processing_failed_rows: number;
  /**
   * 1 once the session's numbers are in the session counters (migration 0016,
   * `session-counters.ts`): folded when it is closed, or by the sweep after it expired.
   */
  counted: Generated<number>;
  /** 1 once `ingestion.processed` was recorded for the session (migration 0025). */
  processed_reported: Generated<number>;
}

export interface ChunksTable {
  ingestion_id: string;
  chunk_seq: number;
  chunk_name: string | null;
  idempotency_key: string | null;
  body_sha256: string | null;
  accepted_rows: number;
  failed_rows: number;
  created_at: string;
  /** 1 when an atomic chunk with failed records was rejected (nothing kept), else 0. */
  rejected: number;
  /** JSON array of the records that failed validation, as sent, with their errors. */
  failed_records: string;
  /** The reference of the request first answered, repeated by a replay (migration 0002). */
  answer_reference: string | null;
  /** When the chunk was first answered, repeated by a replay (migration 0002). */
  answered_at: string;
}

export interface RecordsTable {
  record_id: Generated<number>;
  ingestion_id: string;
  chunk_seq: number;
  record_index: number;
  namespace: string;
  entity: string;
  data: string;
  processing: number;
  created_at: string;
  /** The reprocessing run that put the record back into the queue, while it waits (migration 0018). */
  reprocess_run: Generated<number | null>;
}

export interface RecordErrorsTable {
  id: Generated<number>;
  ingestion_id: string;
  chunk_seq: number;
  record_index: number;
  record: string;
  errors: string;
  created_at: string;
}

export interface ProcessingErrorsTable {
  id: Generated<number>;
  ingestion_id: string;
  record_id: number;
  namespace: string;
  entity: string;
  code: string;
  message: string;
  record: string;
  created_at: string;
  /** The configuration revision processing worked under (migration 0017). */
  revision: Generated<number>;
  /** `open`, `queued` (its record waits in a reprocessing run) or `closed` (it posted); migration 0018. */
  state: Generated<ProcessingErrorState>;
  /** How many times the record was processed, the first time included. */
  attempts: Generated<number>;
  last_attempt_at: Generated<string | null>;
  /** The code before the last attempt. */
  previous_code: Generated<string | null>;
  closed_at: Generated<string | null>;
  /** The reprocessing run that queued the record last. */
  run_id: Generated<number | null>;
}

export type ProcessingErrorState = 'open' | 'queued' | 'closed';

/** A reprocessing run (migration 0018, `accounting/reprocess-store.ts`). */
export interface ReprocessRunsTable {
  id: Generated<number>;
  trigger: 'manual' | 'scheduled';
  actor: string;
  /** The selection as JSON. */
  selection: string;
  revision: number;
  max_attempts: number;
  state: 'running' | 'finished';
  started_at: string;
  finished_at: string | null;
  queued: number;
  skipped: number;
  posted: number;
  still_failing: number;
}

/** The records of a run per outcome: `posted`, or the code they failed with again. */
export interface ReprocessRunOutcomesTable {
  run_id: number;
  code: string;
  records: number;
}

/** The one row of the reprocessing schedule (id 1). */
export interface ReprocessScheduleTable {
  id: number;
  mode: 'daily' | 'interval' | 'disabled';
  /** `HH:MM`, UTC, of the daily run. */
  daily_at: string;
  interval_minutes: number;
  max_attempts: number;
  /** When the next scheduled run is due; null until an instance has worked it out, and when disabled. */
  next_due_at: string | null;
  updated_at: string | null;
  updated_by: string | null;
}

export interface JournalsTable {
  journal_id: string;
  ingestion_id: string;
  record_id: number;
  core_date: string;
  original_core_date: string | null;
  journal_type: string;
  accounting_config: string;
  /** The node's field values as JSON with sorted keys, so equal nodes have equal text. */
  node: string;
  posted: number;
  reverses: string | null;
  reversed_by: string | null;
  origin_journal_id: string | null;
  line_count: number;
  created_at: string;
  /** The configuration revision processing worked under (migration 0017). */
  revision: Generated<number>;
  /**
   * A journal posted before an origin journal id could post only once per accounting
   * configuration, repeating an earlier one: that journal's id (migration 0007); else null.
   */
  duplicate_of: Generated<string | null>;
  /** The reversal journal that withdrew this one (a correction), null while none has (migration 0021). */
  withdrawn_by: Generated<string | null>;
  /** The canonical digest of the business event that produced this journal (migration 0021); null for others. */
  event_fingerprint: Generated<string | null>;
  /** The reversal request that made this reversal journal (migration 0022); null on every other journal. */
  reversal_id: Generated<string | null>;
}

/** A reversal request that was answered (migration 0022, `accounting/reversal-store.ts`). */
export interface ReversalsTable {
  /** A time-ordered UUID. */
  id: string;
  reason: string;
  /** The selection as JSON. */
  selection: string;
  /** The date asked for every reversal journal; null when each took the dating rule's. */
  posting_date: string | null;
  /** The e-mail of the user the caller's credential belongs to. */
  created_by: string;
  /** The caller's client id: the scope of its idempotency keys. */
  client_id: string;
  created_at: string;
  /** The configuration revision stored when it ran. */
  revision: number;
  idempotency_key: string | null;
  /** SHA-256 of the canonical JSON of the request's selection, reason and posting date. */
  request_digest: string;
  /** Reversal journals written (an automatic reversal withdrawn with its journal included). */
  journals: number;
  lines: number;
  already_reversed: number;
  not_reversible: number;
  /** JSON: the first already reversed and not reversible journal ids, and the totals. */
  details: string;
}

export interface JournalLinesTable {
  line_id: string;
  journal_id: string;
  line_no: number;
  account: string;
  amount: string;
  currency: string;
  /** JSON of the line record's fields that no column holds (modules/accounting/line-record.ts). */
  extras: string;
}

/**
 * The net move of one balance on one core date: the posted lines of that accounting
 * configuration, node, account, currency and core date summed (migration 0012, kept as journals
 * post by `accounting/balances.ts`). The balances as of a date sum these.
 */
export interface BalanceMovesTable {
  accounting_config: string;
  /** As `journals.node`: the node's field values as JSON with sorted keys. */
  node: string;
  account: string;
  currency: string;
  core_date: string;
  amount: string;
}

/** A balance now: every posted line of its accounting configuration, node, account and currency summed. */
export interface BalancesTable {
  accounting_config: string;
  node: string;
  account: string;
  currency: string;
  amount: string;
}

/** Journals and their lines per core date, posted flag and accounting configuration (migrations 0014, 0015, `statistics-counters.ts`). */
export interface JournalDayCountsTable {
  core_date: string;
  posted: number;
  accounting_config: string;
  journals: number;
  lines: number;
}

/** Processing errors per UTC day (`YYYY-MM-DD`) of their `created_at` and code (migrations 0014, 0015). */
export interface ProcessingErrorDaysTable {
  day: string;
  code: string;
  errors: number;
}

/**
 * SQLite only (migration 0023): one row per journal written and per posting, numbered by its row
 * id in commit order (`extract-journal-log.ts`, the reads of `extracts/source-reads.ts`).
 */
export interface ExtractJournalLogTable {
  position: Generated<number>;
  journal_id: string;
  posted: number;
}

/**
 * Processing errors queued by a reprocessing run (`queued`) and closed by one (`closed`), per
 * stripe of their session (migration 0024, `statistics-counters.ts`); open ones are the sum of
 * `processing_error_days`.
 */
export interface ProcessingErrorStatesTable {
  state: 'queued' | 'closed';
  stripe: number;
  errors: number;
}

/** Records waiting and done, and processing errors, per namespace and entity (migration 0014). */
export interface EntityRecordCountsTable {
  namespace: string;
  entity: string;
  /** The stripe of the key (`counter-stripes.ts`): the rows of a key are summed. */
  stripe: number;
  waiting: number;
  done: number;
  errors: number;
}

/**
 * Sessions folded into the counters (closed, or expired and swept) per UTC day of `opened_on`,
 * with their chunks, API calls and rows (migration 0016, `session-counters.ts`).
 */
export interface SessionDayCountsTable {
  day: string;
  /** The stripe of the day (`counter-stripes.ts`): the rows of a day are summed. */
  stripe: number;
  sessions: number;
  closed: number;
  expired: number;
  chunks: number;
  api_calls: number;
  total_rows: number;
  success_rows: number;
  failed_rows: number;
}

/** Sessions folded into the counters per namespace and entity, closed and expired (migration 0016). */
export interface SessionEntityCountsTable {
  namespace: string;
  entity: string;
  /** The stripe of the key (`counter-stripes.ts`): the rows of a key are summed. */
  stripe: number;
  sessions: number;
  closed: number;
  expired: number;
}

/**
 * An extraction configuration (migration 0023, `storage/extracts/`): what it reads and how, and
 * its incremental offsets as positions (docs/adr/0022-gap-free-extract-offsets.md).
 */
export interface ExtractionConfigurationsTable {
  id: Generated<number>;
  name: string;
  description: string | null;
  source: string;
  /** The filters as JSON. */
  filters: string;
  /** The fields as a JSON array; null for every field. */
  fields: string | null;
  format: 'jsonl' | 'csv';
  incremental: number;
  state: 'Draft' | 'Active' | 'Inactive';
  /** Where the next incremental answer starts. */
  acked_position: string;
  /** Where the answer being read ends, fixed by its first read; null when none is pending. */
  pending_position: string | null;
  pending_since: string | null;
  acked_at: string | null;
  created_at: string;
  created_by: string;
  updated_at: string;
  updated_by: string;
}

/** An asynchronous extraction of one configuration (migration 0023). */
export interface ExtractionExecutionsTable {
  id: Generated<number>;
  configuration_id: number;
  status: 'queued' | 'running' | 'completed' | 'failed';
  format: 'jsonl' | 'csv';
  from_position: string;
  to_position: string;
  /** JSON of the sort key of the last row written; null before the first run. */
  cursor: string | null;
  records: number;
  bytes: number;
  runs: number;
  requested_by: string;
  requested_at: string;
  started_at: string | null;
  completed_at: string | null;
  /** Until when the instance making it holds it; another takes it over after. */
  lease_until: string | null;
  failure: string | null;
  /** When its file is deleted; set when it completes or fails. */
  expires_at: string | null;
}

/** One run's part of an execution's file (migration 0023). */
export interface ExtractionPartsTable {
  execution_id: number;
  run_no: number;
  records: number;
  started_at: string;
  completed_at: string;
  content: string;
}

/** The outbox: one business event, with the body its deliveries send (migration 0025). */
export interface EventsTable {
  seq: Generated<number>;
  event_id: string;
  type: string;
  version: number;
  occurred_at: string;
  body: string;
  /** 1 once its deliveries were made. */
  fanned_out: Generated<number>;
}

/** A webhook receiver (migration 0025). */
export interface EventSubscriptionsTable {
  id: Generated<number>;
  url: string;
  /** JSON array of event type names. */
  event_types: string;
  description: string | null;
  status: 'active' | 'paused';
  created_at: string;
  created_by: string;
  updated_at: string;
  /** When a delivery failed for good; cleared by the next success. */
  flagged_at: string | null;
  flag_reason: string | null;
}

/** A signing secret, sealed (migration 0025). */
export interface EventSecretsTable {
  id: Generated<number>;
  sealed: string;
  created_at: string;
  created_by: string;
  /** Null for the current secret; the end of the overlap for one a rotation replaced. */
  expires_at: string | null;
}

/** One event's delivery to one subscription (migration 0025). */
export interface EventDeliveriesTable {
  id: Generated<number>;
  subscription_id: number;
  event_seq: number;
  status: 'pending' | 'delivering' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: string;
  /** Until when the instance attempting it holds it; another may attempt it after. */
  lease_until: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  /** The first bytes of the receiver's last answer. */
  last_response: string | null;
  last_duration_ms: number | null;
  created_at: string;
  delivered_at: string | null;
}

/** The key that seals signing secrets when WEBHOOK_SECRETS_KEY is not set (migration 0025). */
export interface EventKeysTable {
  id: number;
  key: string;
  created_at: string;
}

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

/** Requests awaiting approval and rejected, per UTC day made (migration 0028). */
export interface ApprovalDayCountsTable {
  day: string;
  awaiting: number;
  denied: number;
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
