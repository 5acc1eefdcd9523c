import { type Static, Type } from '@sinclair/typebox';
import { Journal } from '../../http/api/answer-schemas.js';
import { matches } from './answers.js';

/**
 * The fields of a journal (as `GET /api/v1/journals` gives it) an export writes: lines keyed
 * by the journalDefinition field names plus `drCr`, and the links and subledger node values
 * when set.
 */
export const JournalView = Type.Composite([
  Type.Pick(Journal, ['journalId', 'status', 'coreDate', 'journalType', 'accountingConfig', 'lines']),
  Type.Partial(Type.Pick(Journal, ['ingestionId', 'reverses', 'reversedBy', 'node'])),
]);
export type JournalView = Static<typeof JournalView>;

/**
 * The part of a Configuration Data document that lays journal lines out. The document's own
 * schema is written for Ajv (its enumerations are raw JSON Schema, which TypeBox's checker does
 * not run), and the service checked the document on upload: only what the export reads is read.
 */
const JournalLayoutSource = Type.Object({
  configuration: Type.Object({
    journalDefinition: Type.Object({
      fields: Type.Optional(
        Type.Array(Type.Object({ name: Type.String(), role: Type.Optional(Type.String()) })),
      ),
    }),
  }),
});

/** A field of `configuration.journalDefinition.fields`. */
export interface JournalField {
  name: string;
  role?: string | undefined;
}

/** The configured names of the line fields an export needs, and every field in order. */
export interface JournalLayout {
  account: string;
  transactionAmount: string;
  transactionCurrency: string;
  fields: JournalField[];
}

/** The journal-level columns, in the order of the CSV export. */
export const JOURNAL_COLUMNS = [
  'journalId',
  'status',
  'coreDate',
  'journalType',
  'accountingConfig',
  'ingestionId',
  'reverses',
  'reversedBy',
] as const;

/** A decimal as the service writes it: optional sign, digits, optional fraction. */
const DECIMAL_PATTERN = /^[+-]?\d+(\.\d+)?$/;

/**
 * The journal layout from a Configuration Data document (`configuration.journalDefinition.fields`
 * with roles `account`, `transactionAmount`, `transactionCurrency`). Throws Error naming the
 * missing role when the definition lacks one.
 */
export function journalLayoutOf(document: unknown): JournalLayout {
  const fields: JournalField[] = matches(JournalLayoutSource, document)
    ? (document.configuration.journalDefinition.fields ?? []).map(({ name, role }) => ({ name, role }))
    : [];
  const named = (role: string): string => {
    const field = fields.find((candidate) => candidate.role === role);
    if (field === undefined)
      throw new Error(`the configuration's journalDefinition has no field with the role ${role}`);
    return field.name;
  };
  return {
    account: named('account'),
    transactionAmount: named('transactionAmount'),
    transactionCurrency: named('transactionCurrency'),
    fields,
  };
}

/** A CSV column: its header and where its value comes from. */
export interface CsvColumn {
  header: string;
  source: 'journal' | 'line';
  key: string;
}

/**
 * The CSV columns: the journal columns, then every journalDefinition field, then `drCr`. A line
 * field that repeats a journal column with the same role (journalId, coreDate, ...) is left
 * out; one that only shares the name is headed `line.NAME`. Pure.
 */
export function csvColumnsOf(fields: readonly JournalField[]): CsvColumn[] {
  const journalColumns = new Set<string>(JOURNAL_COLUMNS);
  const columns: CsvColumn[] = JOURNAL_COLUMNS.map((key) => ({ header: key, source: 'journal', key }));
  for (const field of [...fields, { name: 'drCr', role: undefined }]) {
    if (journalColumns.has(field.name)) {
      if (field.role === field.name) continue;
      columns.push({ header: `line.${field.name}`, source: 'line', key: field.name });
    } else {
      columns.push({ header: field.name, source: 'line', key: field.name });
    }
  }
  return columns;
}

/** One CSV value (RFC 4180): quoted when it holds a comma, quote or line break. Pure. */
export function csvValue(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text =
    typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The CSV header row. Pure. */
export function csvHeaderOf(columns: readonly CsvColumn[]): string {
  return columns.map((column) => csvValue(column.header)).join(',');
}

/** The CSV rows of one journal, one per line, joined by `\n`. Pure. */
export function journalToCsv(journal: JournalView, columns: readonly CsvColumn[]): string {
  const journalValues: Record<string, unknown> = { ...journal };
  return journal.lines
    .map((line) =>
      columns
        .map((column) => csvValue(column.source === 'journal' ? journalValues[column.key] : line[column.key]))
        .join(','),
    )
    .join('\n');
}

/** One journal as one JSON line. Pure. */
export function journalToJsonl(journal: JournalView): string {
  return JSON.stringify(journal);
}

/** A tag value of a ledger comment: commas end a tag and line breaks end the comment. */
function tagValue(value: string): string {
  return value.replace(/[,\r\n]+/g, ' ').trim();
}

/** A tag name of a ledger comment: letters, digits, `_` and `-` only. */
function tagName(name: string): string {
  return name.replace(/[^\w-]+/g, '_');
}

/**
 * An account name as ledger and hledger read it: two spaces or a tab would end the name, so
 * runs of white space become one space.
 */
function ledgerAccount(account: string): string {
  return account.replace(/\s+/g, ' ').trim();
}

/** One part of an account name that is not the account: a `:` in it would open a sub-account. */
function accountPart(value: string): string {
  return ledgerAccount(value).replaceAll(':', '_');
}

/**
 * The ledger account of a line: `ACCOUNTINGCONFIG:NODE VALUE:...:ACCOUNT`, so that balances of
 * different accounting configurations and nodes never add up in one account (a plain
 * `hledger balance` is right) and `hledger balance --depth 1` gives one total per
 * configuration. The node values come in the order the service gives the node's fields. Pure.
 */
export function ledgerAccountOf(journal: JournalView, account: string): string {
  const parts = [journal.accountingConfig, ...Object.values(journal.node ?? {}).map(String)].map(accountPart);
  return [...parts.filter((part) => part !== ''), ledgerAccount(account)].join(':');
}

/** A commodity symbol: plain letters as they are, anything else in double quotes (hledger). */
function ledgerCommodity(currency: string): string {
  return /^[A-Za-z]+$/.test(currency) ? currency : `"${currency.replaceAll('"', '')}"`;
}

/**
 * The transaction marks of the ledger format: a posted journal is cleared, an unposted one
 * pending, so `hledger balance --cleared` counts exactly the journals the service's balances
 * count, and the export still holds every journal.
 */
const LEDGER_CLEARED_MARK = '*';
const LEDGER_PENDING_MARK = '!';

/**
 * One journal as a transaction of the plain-text journal format of ledger-cli and hledger:
 * `DATE MARK JOURNALTYPE JOURNALID` (mark `*` posted, `!` unposted), a comment with `accountingConfig:` and `status:` tags (then
 * `ingestionId:`, `reverses:`, `reversedBy:` when set, and one tag per node field), and a
 * posting per line, `    CONFIG:NODE:ACCOUNT  AMOUNT CURRENCY` (see ledgerAccountOf). Amounts are written exactly as the service gives them (signed
 * decimal strings, debit positive), never through a float. Throws Error for a line without an
 * account, currency, or decimal-string amount. Pure.
 */
export function journalToLedger(journal: JournalView, layout: JournalLayout): string {
  const tags = [
    `accountingConfig:${tagValue(journal.accountingConfig)}`,
    `status:${tagValue(journal.status)}`,
    ...(['ingestionId', 'reverses', 'reversedBy'] as const)
      .filter((name) => journal[name] !== null && journal[name] !== undefined && journal[name] !== '')
      .map((name) => `${name}:${tagValue(String(journal[name]))}`),
    ...Object.entries(journal.node ?? {}).map(
      ([name, value]) => `${tagName(name)}:${tagValue(String(value))}`,
    ),
  ];
  const postings = journal.lines.map((line, index) => {
    const account = line[layout.account];
    const amount = line[layout.transactionAmount];
    const currency = line[layout.transactionCurrency];
    const where = `journal ${journal.journalId} line ${index + 1}`;
    if (typeof account !== 'string' || ledgerAccount(account) === '')
      throw new Error(`${where} has no account`);
    if (typeof amount !== 'string' || !DECIMAL_PATTERN.test(amount))
      throw new Error(`${where}: the amount must be a decimal string, got ${JSON.stringify(amount)}`);
    if (typeof currency !== 'string' || currency === '') throw new Error(`${where} has no currency`);
    return `    ${ledgerAccountOf(journal, account)}  ${amount.startsWith('+') ? amount.slice(1) : amount} ${ledgerCommodity(currency)}`;
  });
  const description = `${journal.journalType} ${journal.journalId}`.replace(/[\r\n]+/g, ' ');
  const mark = journal.status === 'posted' ? LEDGER_CLEARED_MARK : LEDGER_PENDING_MARK;
  return [`${journal.coreDate} ${mark} ${description}`, `    ; ${tags.join(', ')}`, ...postings].join('\n');
}
