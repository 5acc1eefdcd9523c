import type {
  AdminOneTimeViewsTable,
  AdminSignInsTable,
  AuthFailuresTable,
  CredentialsTable,
  OAuthTokensTable,
  RequestCountsTable,
  SignInFailureTalliesTable,
  TokenFamiliesTable,
  UsersTable,
} from './tables/access.js';
import type {
  BalanceMovesTable,
  BalancesTable,
  EventFingerprintFormsTable,
  JournalLinesTable,
  JournalsTable,
  ProcessingErrorsTable,
  ReprocessRunOutcomesTable,
  ReprocessRunsTable,
  ReprocessScheduleTable,
  ReversalsTable,
} from './tables/accounting.js';
import type {
  AuditChainTable,
  AuditLogTable,
  ConfigurationRevisionsTable,
  ConfigurationTable,
} from './tables/configuration.js';
import type {
  ApprovalDayCountsTable,
  EntityRecordCountsTable,
  JournalDayCountsTable,
  ProcessingErrorDaysTable,
  ProcessingErrorStatesTable,
  SessionDayCountsTable,
  SessionEntityCountsTable,
} from './tables/counters.js';
import type {
  EventDeliveriesTable,
  EventKeysTable,
  EventSecretsTable,
  EventSubscriptionsTable,
  EventsTable,
} from './tables/events.js';
import type {
  ExtractionConfigurationsTable,
  ExtractionExecutionsTable,
  ExtractionPartsTable,
  ExtractJournalLogTable,
} from './tables/extracts.js';
import type {
  ApprovalRequestsTable,
  ChangeAnswersTable,
  PeriodSnapshotLinesTable,
  PeriodSnapshotsTable,
  PeriodStatesTable,
  PeriodStatesVersionTable,
} from './tables/governance.js';
import type { ChunksTable, IngestionsTable, RecordErrorsTable, RecordsTable } from './tables/ingestion.js';

/**
 * The tables as Kysely sees them, their rows' shapes in `tables/` (one file per area). Both
 * dialects store the same shapes: timestamps are RFC 3339 UTC strings (`2026-11-22T10:04:05.123Z`,
 * which sort as text), dates are `YYYY-MM-DD`, flags are 0/1 integers, JSON documents are text.
 * Amounts are `NUMERIC` on PostgreSQL and text on SQLite (whose NUMERIC affinity would turn them
 * into binary floats); both come back as strings.
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
  event_fingerprint_forms: EventFingerprintFormsTable;
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
  change_answers: ChangeAnswersTable;
  approval_day_counts: ApprovalDayCountsTable;
  period_states_version: PeriodStatesVersionTable;
  period_states: PeriodStatesTable;
  period_snapshots: PeriodSnapshotsTable;
  period_snapshot_lines: PeriodSnapshotLinesTable;
}
