import type { KeyedPage, PageStart } from '../../lib/keyed-page.js';
import type { BlockingChange, StoredDataRisk } from './keep-data.js';
import type { Configuration } from './model.js';

/**
 * What the storage adapter stores before any upload and after a deletion, and what the migration
 * of the revisions computes for the configuration it finds (its revision text and section counts).
 */
export { emptyConfiguration, revisionDocumentText, sectionCounts } from './document.js';
export type { BlockingChange, StoredDataRisk, StoredDataTest } from './keep-data.js';
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

/**
 * What a `replace` did: the new revision and what it wiped (nothing when it kept the data), or
 * nothing, since the revision was not one of those allowed, or since the stored data forbids a
 * change that keeps it (`blocking`).
 */
export type ReplaceOutcome =
  | { replaced: true; revision: number; deleted: ProcessingDataCounts }
  | {
      replaced: false;
      revision: number;
      blocking?: BlockingChange[];
      /** What the change would have wiped, when that was not the `ifDeletes` asked for. */
      wouldDelete?: ProcessingDataCounts;
    };

/** One configuration revision: who made it, when, how, and what its document holds. */
export interface RevisionSummary {
  revision: number;
  at: string;
  /** Null only for a revision made before revisions were kept whose author was not recorded. */
  actor: string | null;
  action: 'upload' | 'delete';
  version: string;
  /** SHA-256 (hex) of the revision's canonical document text. */
  sha256: string;
  sections: Record<string, number>;
}

/** A revision with the canonical text of its configuration (`revisionDocumentText`). */
export interface RevisionDocument extends RevisionSummary {
  documentText: string;
}

/**
 * What a replace that keeps the processing data checks in its transaction: the risks of the
 * change, and how far `checkStoredData` already read the records (the transaction reads the
 * records after it, and the journals).
 */
export interface KeepCheck {
  risks: readonly StoredDataRisk[];
  checkedUpTo: number;
}

/**
 * The storage port of the configuration module. `replace` is the one write: in a single
 * transaction it stores the new document under the next revision, counts and wipes the
 * processing data (ingestions and everything hanging off them), and appends the audit entry with
 * those counts and the revision's row, so no reader ever sees a mix of old and new, no instance
 * keeps processing data of the old configuration, and the counts are exactly what was deleted.
 * With `keep` it wipes nothing: it checks instead, under the same locks, that the stored data
 * allows the change, and changes nothing when it does not.
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
    /** The revision's canonical document text and its SHA-256 (hex). */
    document: { text: string; sha256: string };
    at: string;
    actor: string;
    /** The credential that made the change through the API, when it did (for the audit trail). */
    clientId?: string | null;
    action: 'configuration.upload' | 'configuration.delete';
    sections: Record<string, number>;
    ifRevisionIn?: readonly number[] | undefined;
    keep?: KeepCheck | undefined;
    /**
     * When set (an approved request, docs/domain/approvals.md), replaces only when what it wipes,
     * counted under the transaction's locks, is exactly this; otherwise changes nothing and
     * answers the counts found as `wouldDelete`.
     */
    ifDeletes?: ProcessingDataCounts | undefined;
    /**
     * The approval request this change runs for (docs/domain/approvals.md): the change's
     * transaction marks it `approved`, and changes nothing when it is no longer `processing`.
     */
    approvalRequestId?: string | undefined;
  }): Promise<ReplaceOutcome>;
  /**
   * The risks that the data stored now makes blocking, read without a transaction and, on a
   * dialect whose statements hold the event loop, in bounded steps; and how far the records were
   * read, for the `keep` of a `replace`.
   */
  checkStoredData(
    risks: readonly StoredDataRisk[],
  ): Promise<{ blocking: BlockingChange[]; checkedUpTo: number }>;
  /** A page of revisions, newest first, without their documents. */
  listRevisions(start: PageStart<number>, limit: number): Promise<KeyedPage<RevisionSummary, number>>;
  /** The number of revisions kept. */
  countRevisions(): Promise<number>;
  /** One revision with its document text; undefined when there is none with that number. */
  readRevisionDocument(revision: number): Promise<RevisionDocument | undefined>;
}
