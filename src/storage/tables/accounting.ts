/**
 * The rows the accounting engine writes: journals and their lines, balances, reversals,
 * processing errors, and reprocessing runs.
 */
import type { Generated } from 'kysely';

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
  /** The caller's client id (the signed-in user's own for the administration interface). */
  client_id: string;
  created_at: string;
  /** The configuration revision stored when it ran. */
  revision: number;
  /** Reversal journals written (an automatic reversal withdrawn with its journal included). */
  journals: number;
  lines: number;
  already_reversed: number;
  not_reversible: number;
  /** JSON: the first already reversed and not reversible journal ids, and the totals. */
  details: string;
}

/**
 * An attribute plan of the first business event fingerprint form (migration 0032): the JSON list
 * of `{ name, decimal }` in name order that journals stored before the current form were hashed
 * with.
 */
export interface EventFingerprintFormsTable {
  plan: string;
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
