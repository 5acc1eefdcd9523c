/**
 * The rows of extracts: the journal log that gives journals their extract positions, extraction
 * configurations, executions, and their parts.
 */
import type { Generated } from 'kysely';

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
