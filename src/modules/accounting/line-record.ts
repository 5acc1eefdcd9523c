import type { JournalFieldRole } from '../configuration/model.js';
import type { PreparedJournalDefinition } from './prepare.js';

/**
 * Roles whose values a stored journal or line already holds in columns of its own. A line's record
 * (docs/domain/accounting.md, Journal records) is stored as the values of the other fields only,
 * its "extras", and rebuilt on reading: the full record repeated every journal value on every line
 * and made line inserts several times slower on PostgreSQL (docs/benchmarks.md).
 */
const STORED_ROLES: ReadonlySet<JournalFieldRole> = new Set<JournalFieldRole>([
  'coreDate',
  'journalType',
  'accountingConfig',
  'account',
  'transactionAmount',
  'transactionCurrency',
  'journalId',
  'lineId',
  'journalLineNo',
  'ingestionId',
  'reverses',
  'reversedBy',
  'originJournalId',
  'node',
]);

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

/** The values of a line record's fields that no column holds (non-null ones only). */
export function lineExtras(
  definition: PreparedJournalDefinition,
  record: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const extras: Record<string, unknown> = {};
  for (const field of definition.fields) {
    if (field.role !== undefined && STORED_ROLES.has(field.role)) continue;
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
    let value: unknown;
    switch (field.role) {
      case 'coreDate':
        value = journal.coreDate;
        break;
      case 'journalType':
        value = journal.journalType;
        break;
      case 'accountingConfig':
        value = journal.accountingConfig;
        break;
      case 'account':
        value = line.account;
        break;
      case 'transactionAmount':
        value = line.amount;
        break;
      case 'transactionCurrency':
        value = line.currency;
        break;
      case 'journalId':
        value = journal.journalId;
        break;
      case 'lineId':
        value = line.lineId;
        break;
      case 'journalLineNo':
        value = line.lineNo;
        break;
      case 'ingestionId':
        value = journal.ingestionId;
        break;
      case 'reverses':
        value = journal.reverses;
        break;
      case 'reversedBy':
        value = journal.reversedBy;
        break;
      case 'originJournalId':
        value = journal.originJournalId;
        break;
      case 'node':
        value = journal.node[field.name];
        break;
      default:
        value = line.extras[field.name];
    }
    record[field.name] = value ?? null;
  }
  return record;
}
