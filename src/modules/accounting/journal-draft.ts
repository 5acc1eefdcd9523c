/**
 * What the accounting core hands to storage: journal drafts, the context a caller supplies (clock,
 * id source, ingestion id), and the all-or-nothing outcome of one record
 * (docs/domain/accounting.md, Journal records, Reversals, Business events). Drafts are plain data;
 * storage persists them as they are.
 */
import type { PeriodStates } from './periods.js';
import type { ProcessingError } from './processing-error.js';

/** Side of a journal line. */
export type DrCr = 'DR' | 'CR';

/** Posting status of a journal (docs/domain/accounting.md, Posting). */
export type JournalStatus = 'posted' | 'unposted';

/** One journal line. */
export interface JournalLineDraft {
  /** System UUID of the line (role `lineId`). */
  lineId: string;
  /** 1..n within the journal (role `journalLineNo`). */
  lineNo: number;
  account: string;
  /** Signed exact decimal: debit positive, credit negative (docs/domain/accounting.md, Choices). */
  amount: string;
  currency: string;
  /** Derived from the sign of `amount`. */
  drCr: DrCr;
  /**
   * The values of the line's journal definition fields that no column holds (copied event
   * attributes, the sender's origin line id and fields), those with a value only. The line's
   * record keyed by every field (docs/domain/accounting.md, Journal records) is made from the
   * journal, these values and the definition by `lineRecord` (line-record.ts), when the line is
   * read; the engine does not build it, which halved its time per event.
   */
  extras: Record<string, unknown>;
}

/** One journal: lines of one core date, node, accounting configuration and journal type. */
export interface JournalDraft {
  /** System UUID of the journal (role `journalId`). */
  journalId: string;
  /** ISO date `YYYY-MM-DD`. */
  coreDate: string;
  /**
   * The date the journal asked for when a closed period moved it (docs/domain/accounting.md,
   * Posting date override).
   */
  originalCoreDate?: string;
  journalType: string;
  accountingConfig: string;
  /** Node field name to value; the prepared node's own frozen object, shared by its journals. */
  node: Readonly<Record<string, string>>;
  ingestionId: string;
  status: JournalStatus;
  /** `journalId` of the journal this one reverses (docs/domain/accounting.md, Reversals). */
  reverses?: string;
  /** `journalId` of the journal that reverses this one (docs/domain/accounting.md, Reversals). */
  reversedBy?: string;
  /**
   * The sender's journal id of a directly ingested journal (docs/domain/accounting.md, Direct
   * journals).
   */
  originJournalId?: string;
  /**
   * The fingerprint of the business event that produced the journal (event-fingerprint.ts), so
   * that a rollback finds it; absent for direct journals and for reversals written by a rollback.
   */
  eventFingerprint?: string;
  lines: JournalLineDraft[];
}

/** What the caller supplies to every processing call; the core reads no clock and makes no ids. */
export interface ProcessingContext {
  /** Ingestion of the record; copied into the `ingestionId` field of every line. */
  ingestionId: string;
  /** The instant processing happens, for business dates and periods. */
  now: Date;
  /**
   * `BUSINESS_DATE` (`YYYY-MM-DD`) when set: the business date of every node
   * (docs/domain/accounting.md, Business date).
   */
  businessDatePinned?: string;
  /** A fresh UUID per call; called only once every check passed, journal id before its line ids. */
  newId: () => string;
  /**
   * The periods closed, locked or reopened by hand (docs/domain/accounting.md, Periods), as the
   * store held them when the caller read them; the calendar alone decides when absent.
   */
  periods?: PeriodStates;
  /**
   * Whether processing is stopping: the work of a chunk checks it between records and gives the
   * chunk up ({@link ChunkAbandoned}); nothing of the chunk is written, and it waits for the next
   * start. Never, when absent.
   */
  stopping?: () => boolean;
}

/**
 * Thrown by the work of a chunk that processing gave up because it stops: not a fault of the
 * chunk, which is neither retried nor failed, but left waiting as if it had not been claimed.
 */
export class ChunkAbandoned extends Error {
  constructor() {
    super('processing is stopping: the chunk in progress is given up and waits for the next start');
    this.name = 'ChunkAbandoned';
  }
}

/** Throws {@link ChunkAbandoned} when processing is stopping (see `ProcessingContext.stopping`). */
export function giveUpWhenStopping(ctx: ProcessingContext): void {
  if (ctx.stopping?.() === true) throw new ChunkAbandoned();
}

/** All or nothing: the journals of one record, or the one error that kept it from producing any. */
export type ProcessingOutcome =
  | { ok: true; journals: JournalDraft[] }
  | { ok: false; error: ProcessingError };
