import { type ColumnJournalRole, isColumnRole } from '../configuration/journal-roles.js';
import type { PreparedJournalDefinition } from './prepare.js';

/** The journal values a line record is rebuilt from. */
export interface StoredJournalValues {
  journalId: string;
  coreDate: string;
  journalType: string;
  accountingConfig: string;
  ingestionId: string;
  reverses: string | null;
  reversedBy: string | null;
  originJournalId: string | null;
  node: Readonly<Record<string, string>>;
}

/** The line values a line record is rebuilt from; `extras` holds the fields of no stored role. */
export interface StoredLineValues {
  lineId: string;
  lineNo: number;
  account: string;
  amount: string;
  currency: string;
  extras: Readonly<Record<string, unknown>>;
}

/**
 * How a line record's field of a role stored in a column is read back, one entry per such role
 * of the journal roles table (the compiler keeps them in step). A line's record
 * (docs/domain/accounting.md, Journal records) is stored as the values of the other fields only,
 * its "extras", and rebuilt on reading: the full record repeated every journal value on every line
 * and made line inserts several times slower on PostgreSQL (docs/benchmarks.md).
 */
const COLUMN_VALUES: {
  readonly [R in ColumnJournalRole]: (
    journal: StoredJournalValues,
    line: StoredLineValues,
    field: string,
  ) => unknown;
} = {
  coreDate: (journal) => journal.coreDate,
  journalType: (journal) => journal.journalType,
  accountingConfig: (journal) => journal.accountingConfig,
  account: (_, line) => line.account,
  transactionAmount: (_, line) => line.amount,
  transactionCurrency: (_, line) => line.currency,
  journalId: (journal) => journal.journalId,
  lineId: (_, line) => line.lineId,
  reverses: (journal) => journal.reverses,
  reversedBy: (journal) => journal.reversedBy,
  journalLineNo: (_, line) => line.lineNo,
  ingestionId: (journal) => journal.ingestionId,
  originJournalId: (journal) => journal.originJournalId,
  node: (journal, _, field) => journal.node[field],
};

/** The values of a line record's fields that no column holds (non-null ones only). */
export function lineExtras(
  definition: PreparedJournalDefinition,
  record: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const extras: Record<string, unknown> = {};
  for (const field of definition.fields) {
    if (field.role !== undefined && isColumnRole(field.role)) continue;
    const value = record[field.name];
    if (value !== null && value !== undefined) extras[field.name] = value;
  }
  return extras;
}

/**
 * Rebuilds a line record keyed by every journal definition field, in configured order, a field
 * without a value being `null`: exactly the record the engine made.
 */
export function lineRecord(
  definition: PreparedJournalDefinition,
  journal: StoredJournalValues,
  line: StoredLineValues,
): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const field of definition.fields) {
    const role = field.role;
    const value =
      role !== undefined && isColumnRole(role)
        ? COLUMN_VALUES[role](journal, line, field.name)
        : line.extras[field.name];
    record[field.name] = value ?? null;
  }
  return record;
}
