import { type ColumnJournalRole, isColumnRole } from '../configuration/journal-roles.js';
import type { PreparedJournalField } from './journal-field.js';

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
 * The journal values a record is made of: a stored journal's, or a journal draft's, whose
 * missing optional values are `undefined` (the record holds `null` for them either way).
 */
export type JournalRecordValues = Omit<StoredJournalValues, 'reverses' | 'reversedBy' | 'originJournalId'> & {
  reverses?: string | null;
  reversedBy?: string | null;
  originJournalId?: string | null;
};

/** The line values a record is made of. */
type LineRecordValues = Omit<StoredLineValues, 'extras'>;

/** The column roles whose value is the line's own; the others are the journal's, on every line. */
type LineColumnRole = 'account' | 'transactionAmount' | 'transactionCurrency' | 'lineId' | 'journalLineNo';
type JournalColumnRole = Exclude<ColumnJournalRole, LineColumnRole>;

/**
 * How a line record's field of a role stored in a column is read back, one entry per such role
 * of the journal roles table (the compiler keeps them in step), split by whether the value is
 * the journal's or the line's own. A line's record (docs/domain/accounting.md, Journal records) is
 * stored as the values of the other fields only, its "extras", and rebuilt on reading: the full
 * record repeated every journal value on every line and made line inserts several times slower on
 * PostgreSQL (docs/benchmarks.md).
 */
const JOURNAL_VALUES: {
  readonly [R in JournalColumnRole]: (journal: JournalRecordValues, field: string) => unknown;
} = {
  coreDate: (journal) => journal.coreDate,
  journalType: (journal) => journal.journalType,
  accountingConfig: (journal) => journal.accountingConfig,
  journalId: (journal) => journal.journalId,
  reverses: (journal) => journal.reverses,
  reversedBy: (journal) => journal.reversedBy,
  ingestionId: (journal) => journal.ingestionId,
  originJournalId: (journal) => journal.originJournalId,
  node: (journal, field) => journal.node[field],
};

const LINE_VALUES: { readonly [R in LineColumnRole]: (line: LineRecordValues) => unknown } = {
  account: (line) => line.account,
  transactionAmount: (line) => line.amount,
  transactionCurrency: (line) => line.currency,
  lineId: (line) => line.lineId,
  journalLineNo: (line) => line.lineNo,
};

function isLineColumnRole(role: ColumnJournalRole): role is LineColumnRole {
  return Object.hasOwn(LINE_VALUES, role);
}

/**
 * Where the value of a field no column holds comes from: the sender's origin line id, a
 * business event attribute of the same name, or (a field of no role that is no event attribute)
 * the sender's line of a direct journal only.
 */
export type ExtraFieldSource = 'originJournalLineId' | 'eventAttribute' | 'senderOnly';

/**
 * A journal definition compiled once per configuration revision into what building a line
 * record needs, so that a line costs a copy of a template and a few stores instead of a walk of
 * the definition with a role lookup per field.
 */
export interface LineRecordPlan {
  /** Every field name once, in configured order, with the value `null`. */
  template: Readonly<Record<string, null>>;
  journalFields: readonly { name: string; read: (journal: JournalRecordValues, field: string) => unknown }[];
  lineFields: readonly { name: string; read: (line: LineRecordValues) => unknown }[];
  /** The fields no column holds, in configured order: a stored line keeps these as its extras. */
  extraFields: readonly { name: string; source: ExtraFieldSource }[];
}

/**
 * Compiles the journal definition's fields. A name that occurs twice (which the configuration
 * check refuses) keeps its first position and takes the last field's value, as assigning the
 * fields one by one would.
 */
export function compileLineRecordPlan(fields: readonly PreparedJournalField[]): LineRecordPlan {
  const byName = new Map<string, PreparedJournalField>();
  for (const field of fields) byName.set(field.name, field);
  const template: Record<string, null> = {};
  const journalFields: LineRecordPlan['journalFields'][number][] = [];
  const lineFields: LineRecordPlan['lineFields'][number][] = [];
  const extraFields: LineRecordPlan['extraFields'][number][] = [];
  for (const [name, { role, copiesEventAttribute }] of byName) {
    template[name] = null;
    if (role === undefined) {
      extraFields.push({ name, source: copiesEventAttribute ? 'eventAttribute' : 'senderOnly' });
    } else if (!isColumnRole(role)) {
      extraFields.push({ name, source: role });
    } else if (isLineColumnRole(role)) {
      lineFields.push({ name, read: LINE_VALUES[role] });
    } else {
      journalFields.push({ name, read: JOURNAL_VALUES[role] });
    }
  }
  return { template, journalFields, lineFields, extraFields };
}

/**
 * A line's record keyed by every journal definition field, in configured order, a field without
 * a value being `null` (docs/domain/accounting.md, Journal records): from a stored journal and
 * line, or from a journal draft and its line, which give the same record. `definition` is the
 * prepared journal definition (`PreparedJournalDefinition`), of which only the compiled plan is
 * read.
 */
export function lineRecord(
  definition: { readonly plan: LineRecordPlan },
  journal: JournalRecordValues,
  line: StoredLineValues,
): Record<string, unknown> {
  const { plan } = definition;
  const record: Record<string, unknown> = { ...plan.template };
  for (const { name, read } of plan.journalFields) record[name] = read(journal, name) ?? null;
  for (const { name, read } of plan.lineFields) record[name] = read(line) ?? null;
  for (const { name } of plan.extraFields) record[name] = line.extras[name] ?? null;
  return record;
}
