import type { Configuration } from './model.js';

/** What the storage adapter stores before any upload and after a deletion. */
export { emptyConfiguration } from './document.js';
export { CONFIGURATION_FORMAT_VERSION, type Configuration } from './model.js';

/** The stored configuration document and its revision (0 for a new instance). */
export interface StoredConfiguration {
  revision: number;
  version: string;
  configuration: Configuration;
  updatedAt: string | null;
  updatedBy: string | null;
}

/**
 * How much processing data a configuration upload or deletion wipes (or would wipe): ingestion
 * sessions, their accepted records, the journals and journal lines made from them, and the
 * processing errors of their records. Chunks and rejected records go with their sessions too.
 */
export interface ProcessingDataCounts {
  ingestions: number;
  records: number;
  journals: number;
  journalLines: number;
  processingErrors: number;
}

/** One audit log entry: who changed the configuration, when, to what, and what it wiped. */
export interface AuditEntry {
  id: number;
  at: string;
  actor: string;
  action:
    | 'configuration.upload'
    | 'configuration.delete'
    | 'processing.reprocess'
    | 'processing.reprocess-schedule';
  version: string | null;
  revision: number;
  sections: Record<string, number>;
  /** What the change wiped; null on entries written before the counts were recorded. */
  deleted: ProcessingDataCounts | null;
  /** What a reprocessing run or schedule change did (migration 0018). */
  details?: Record<string, unknown>;
}

/** What a `replace` did: the new revision and what it wiped, or nothing since the revision changed. */
export type ReplaceOutcome =
  | { replaced: true; revision: number; deleted: ProcessingDataCounts }
  | { replaced: false; revision: number };

/**
 * The storage port of the configuration module. `replace` is the one write: in a single
 * transaction it stores the new document under the next revision, counts and wipes the
 * processing data (ingestions and everything hanging off them), and appends the audit entry with
 * those counts, so no reader ever sees a mix of old and new, no instance keeps processing data
 * of the old configuration, and the counts are exactly what was deleted.
 */
export interface ConfigurationStore {
  read(): Promise<StoredConfiguration>;
  /** The current revision alone: a cheap read that tells whether a cached snapshot is stale. */
  readRevision(): Promise<number>;
  /** The processing data that a `replace` would wipe now; reads only. */
  countProcessingData(): Promise<ProcessingDataCounts>;
  /**
   * With `ifRevisionIn`, replaces only when the stored revision is one of those, read under the
   * transaction's lock; otherwise changes nothing and answers `changed` with the revision found.
   */
  replace(input: {
    version: string;
    configuration: Configuration;
    at: string;
    actor: string;
    action: AuditEntry['action'];
    sections: Record<string, number>;
    ifRevisionIn?: readonly number[] | undefined;
  }): Promise<ReplaceOutcome>;
  /** One page of the audit log, newest first (by the order the entries were written). */
  listAudit(page: number, limit: number): Promise<{ rows: AuditEntry[]; total: number }>;
}
