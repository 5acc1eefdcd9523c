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

/** A configuration revision as a change stores it. */
export interface RevisionWrite {
  revision: number;
  version: string;
  configuration: Configuration;
  /** The revision's canonical document text and its SHA-256 (hex). */
  document: { text: string; sha256: string };
  at: string;
  actor: string;
  action: 'upload' | 'delete';
  sections: Record<string, number>;
}

/**
 * The tables a change of the configuration writes, in the change runner's transaction
 * (`changes.ts`): one write stores the new document under the next revision and counts and wipes
 * the processing data (ingestions and everything hanging off them), or, keeping it, checks under
 * the same locks that the stored data allows the change; so no reader ever sees a mix of old and
 * new, no instance keeps processing data of the old configuration, and the counts are exactly
 * what was deleted.
 */
export interface ConfigurationTables {
  /**
   * The stored revision, read under the locks a change of the configuration takes first, in the
   * order every writer of processing data keeps: the configuration row (made first when
   * missing), then the chunks and the sessions tables, held until the transaction ends.
   */
  lockForChange(at: string): Promise<number>;
  /** The changes of `risks` the data stored now makes blocking, reading the records after `checkedUpTo`. */
  blockingChanges(risks: readonly StoredDataRisk[], checkedUpTo: number): Promise<BlockingChange[]>;
  countProcessingData(): Promise<ProcessingDataCounts>;
  /** Deletes every session with its records, journals, lines, errors, reversals and kept balances. */
  wipeProcessingData(): Promise<void>;
  /** Stores `write` as the configuration and keeps its revision. */
  storeRevision(write: RevisionWrite): Promise<void>;
}

/**
 * The storage port of the configuration module: reads of the configuration, of its revisions and
 * of the processing data a change would wipe; a change itself is made through the change runner,
 * on `ConfigurationTables`.
 */
export interface ConfigurationStore {
  read(): Promise<StoredConfiguration>;
  /** The current revision alone: a cheap read that tells whether a cached snapshot is stale. */
  readRevision(): Promise<number>;
  /** The processing data that a change of the configuration would wipe now; reads only. */
  countProcessingData(): Promise<ProcessingDataCounts>;
  /**
   * The risks that the data stored now makes blocking, read without a transaction and, on a
   * dialect whose statements hold the event loop, in bounded steps; and how far the records were
   * read, for the `keep` of a change (`ConfigurationTables.blockingChanges`).
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
