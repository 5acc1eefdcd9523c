/**
 * The rows processing writes, in the column order of the bulk inserts: journals, their lines,
 * processing errors; and the balance moves of the posted lines (`balances.ts`). The processing
 * benchmark writes with them too (bench/processing-limit.ts).
 */

import {
  assertJournalBalances,
  type ChunkOutcome,
  type ClaimedChunk,
  type JournalDraft,
  type RollbackRequest,
} from '../../modules/accounting/store.js';
import type { ProcessingErrorsTable } from '../tables/accounting.js';
import { type BalanceMove, balanceMovesOf } from './balances.js';

/** A node's field values as JSON with sorted keys: equal nodes, equal text (for grouping). */
export function canonicalNodeJson(node: Readonly<Record<string, string>>): string {
  return JSON.stringify(
    Object.fromEntries(Object.entries(node).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
  );
}

/**
 * The canonical JSON of the nodes of written journals, by node object: the engine hands every
 * journal of a node the configuration's one frozen object, so a chunk's journals share a handful.
 */
const nodeJsonMemo = new WeakMap<Readonly<Record<string, string>>, string>();

function nodeJsonOf(node: Readonly<Record<string, string>>): string {
  let json = nodeJsonMemo.get(node);
  if (json === undefined) {
    json = canonicalNodeJson(node);
    if (Object.isFrozen(node)) nodeJsonMemo.set(node, json);
  }
  return json;
}

/** The columns of a journal row; the processing benchmark writes with them too (bench/processing-limit.ts). */
export const JOURNAL_COLUMNS: readonly string[] = [
  'journal_id',
  'ingestion_id',
  'record_id',
  'core_date',
  'original_core_date',
  'journal_type',
  'accounting_config',
  'node',
  'posted',
  'reverses',
  'reversed_by',
  'origin_journal_id',
  'line_count',
  'created_at',
  'revision',
  'event_fingerprint',
];

/** The columns of a journal line row. */
export const LINE_COLUMNS: readonly string[] = [
  'line_id',
  'journal_id',
  'line_no',
  'account',
  'amount',
  'currency',
  'extras',
];

export const ERROR_COLUMNS: readonly (keyof ProcessingErrorsTable & string)[] = [
  'ingestion_id',
  'record_id',
  'namespace',
  'entity',
  'code',
  'message',
  'record',
  'created_at',
  'revision',
];

/** A journal row in the order of JOURNAL_COLUMNS, made under configuration `revision`. */
export function journalRow(recordId: number, draft: JournalDraft, at: string, revision: number): unknown[] {
  return [
    draft.journalId,
    draft.ingestionId,
    recordId,
    draft.coreDate,
    draft.originalCoreDate ?? null,
    draft.journalType,
    draft.accountingConfig,
    nodeJsonOf(draft.node),
    draft.status === 'posted' ? 1 : 0,
    draft.reverses ?? null,
    draft.reversedBy ?? null,
    draft.originJournalId ?? null,
    draft.lines.length,
    at,
    revision,
    draft.eventFingerprint ?? null,
  ];
}

/**
 * The line rows of a chunk's journals, in the order of LINE_COLUMNS; a line stores its extras only.
 * Every journal is asserted to balance per currency first (`invariants.ts`): whatever made it, an
 * unbalanced journal stops the write.
 */
export function lineRows(journals: ChunkOutcome['journals']): unknown[][] {
  return journals.flatMap(({ draft }) => {
    assertJournalBalances(draft);
    return draft.lines.map((line) => [
      line.lineId,
      draft.journalId,
      line.lineNo,
      line.account,
      line.amount,
      line.currency,
      JSON.stringify(line.extras),
    ]);
  });
}

/** The rows a chunk's processing writes; on SQLite built before the write transaction begins. */
export interface OutcomeRows {
  journals: unknown[][];
  lines: unknown[][];
  errors: unknown[][];
  /** The posted lines summed per balance and core date, sorted: what the kept balances gain. */
  balanceMoves: BalanceMove[];
  /** Records with a processing error (each counted once, however many errors it has). */
  failedRecords: number;
  /** The instant the rows are stamped with. */
  at: string;
  /** The configuration revision the rows were made under. */
  revision: number;
  /** Rollback records, settled in the write transaction (`rollback-write.ts`). */
  rollbacks: readonly RollbackRequest[];
}

/** The rows of `outcome`, processed under configuration `revision` (the one the claim checked). */
export function outcomeRows(
  chunk: ClaimedChunk,
  outcome: ChunkOutcome,
  at: string,
  revision: number,
): OutcomeRows {
  return {
    journals: outcome.journals.map(({ recordId, draft }) => journalRow(recordId, draft, at, revision)),
    lines: lineRows(outcome.journals),
    balanceMoves: balanceMovesOf(outcome.journals, nodeJsonOf),
    errors: outcome.errors.map((e) => [
      chunk.ingestionId,
      e.recordId,
      chunk.namespace,
      chunk.entity,
      e.code,
      e.message,
      JSON.stringify(e.record),
      at,
      revision,
    ]),
    failedRecords: new Set(outcome.errors.map((e) => e.recordId)).size,
    at,
    revision,
    rollbacks: outcome.rollbacks ?? [],
  };
}
