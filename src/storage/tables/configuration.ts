/**
 * The rows of the configuration document, its revisions, and the audit trail that records every
 * change.
 */
import type { Generated } from 'kysely';

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
