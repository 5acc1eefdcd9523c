import type { Configuration } from './model.js';

/** The stored configuration document and its revision (0 for a new instance). */
export interface StoredConfiguration {
  revision: number;
  version: string;
  configuration: Configuration;
  updatedAt: string | null;
  updatedBy: string | null;
}

/** One audit log entry (contract 3): who changed the configuration, when, and what. */
export interface AuditEntry {
  id: number;
  at: string;
  actor: string;
  action: 'configuration.upload' | 'configuration.delete';
  version: string | null;
  revision: number;
  sections: Record<string, number>;
}

/**
 * The storage port of the configuration module. `replace` is the one write: in a single
 * transaction it stores the new document under the next revision, wipes the processing data
 * (ingestions and everything hanging off them), and appends the audit entry, so no reader ever
 * sees a mix of old and new, and no instance keeps processing data of the old configuration.
 */
export interface ConfigurationStore {
  read(): Promise<StoredConfiguration>;
  /** The current revision alone: a cheap read that tells whether a cached snapshot is stale. */
  readRevision(): Promise<number>;
  replace(input: {
    version: string;
    configuration: Configuration;
    at: string;
    actor: string;
    action: AuditEntry['action'];
    sections: Record<string, number>;
  }): Promise<number>;
  listAudit(page: number, limit: number): Promise<{ rows: AuditEntry[]; total: number }>;
}
