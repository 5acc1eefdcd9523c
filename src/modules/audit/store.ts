/**
 * The storage port of the audit trail, implemented in `storage/audit-trail.ts` (which is also
 * the one writer every audited store calls inside its own transaction).
 */
import type { KeyedPage, PageStart } from '../../lib/keyed-page.js';
import type { AuditEntry, ChainHead } from './entry.js';

export {
  type AuditAction,
  type AuditActor,
  type AuditConfigurationFields,
  type AuditEntry,
  type AuditRecord,
  type AuditSummary,
  actorOfCaller,
  auditHashOf,
  type ChainHead,
  GENESIS_HASH,
  secretKeyIn,
} from './entry.js';

/** Reads of the trail; the writes happen in the transactions of the changes they record. */
export interface AuditStore {
  /** A page of entries, newest first (by the order they were written); keyed by row id. */
  listEntries(start: PageStart<number>, limit: number): Promise<KeyedPage<AuditEntry, number>>;
  /** The number of entries. */
  countEntries(): Promise<number>;
  /** Up to `limit` entries in the order they were written, after row id `afterId` (0: from the first). */
  readChain(afterId: number, limit: number): Promise<AuditEntry[]>;
  /** The row id just before the first entry at a position past `afterSeq` (where an export starts). */
  idBeforeSeq(afterSeq: number): Promise<number>;
  /** Whether an entry at position `seq` exists. */
  hasSeq(seq: number): Promise<boolean>;
  /** The chain head: the last position handed out and its hash. */
  readHead(): Promise<ChainHead>;
}
