/**
 * A small configuration an accountant can read, and helpers that print journals as tables, for
 * the accounting scenarios. One legal entity in Amsterdam (IFRS with 3 grace days, LOCAL_GAAP
 * with no grace but posting-date override) and one in New York (IFRS only); a TAX basis exists
 * but is assigned to no node.
 */

import type {
  JournalDraft,
  ProcessingContext,
  ProcessingOutcome,
} from '../../src/modules/accounting/journal-draft.js';
import { lineRecord } from '../../src/modules/accounting/line-record.js';
import type { PreparedAccounting } from '../../src/modules/accounting/prepare.js';
import type { Configuration } from '../../src/modules/configuration/model.js';

type Pattern = Configuration['postingComponents'][number]['postingPatterns'][number];

function pattern(debitCredit: 'DR' | 'CR', postingCode: string, more: Partial<Pattern> = {}): Pattern {
  return {
    amountField: 'amount',
    currencyField: 'currency',
    postingDateField: 'postingDate',
    postingCode,
    amountSignage: 'AUTO',
    debitCredit,
    ...more,
  };
}

function component(
  code: string,
  accountingConfigName: string,
  journalType: string,
  postingPatterns: Pattern[],
): Configuration['postingComponents'][number] {
  return { code, accountingConfigName, journalType, postingPatterns };
}

/** Event types of the test configuration and the components they trigger. */
const IDENTIFICATIONS: Record<string, string[]> = {
  SALE: ['SALE_IFRS', 'SALE_LOCAL', 'SALE_TAX'],
  SALE_WITH_TAX: ['SALE_IFRS', 'TAX_IFRS'],
  ACCRUAL: ['ACCRUAL_IFRS'],
  ADJUSTMENT: ['ADJUST_IFRS'],
  FX_SALE: ['FX_IFRS'],
  CROSS_CURRENCY: ['CROSS_IFRS'],
  TAX_ONLY: ['SALE_TAX'],
  UNMAPPED: ['UNMAPPED_IFRS'],
  ONE_SIDED: ['ONE_SIDED_IFRS'],
  LOCAL_ONLY: ['SALE_LOCAL'],
  NOTHING: [],
};

/** The test configuration; `change` edits a fresh copy. */
export function testConfiguration(change: (configuration: Configuration) => void = () => {}): Configuration {
  const configuration: Configuration = {
    accountLookups: [
      ['RECEIVABLE', '1100 Receivables'],
      ['REVENUE', '8000 Revenue'],
      ['REVENUE_LOCAL', '8000-NL Omzet'],
      ['TAX_PAYABLE', '1500 VAT payable'],
      ['EXPENSE', '4000 Expenses'],
      ['ACCRUED', '1600 Accrued liabilities'],
      ['CASH', '1000 Cash'],
      ['GAIN', '8100 Gains'],
      ['LOSS', '4100 Losses'],
      ['UNMAPPED', ''],
    ]
      .filter(([, account]) => account !== '')
      .map(([postingCode, account]) => ({
        postingCode: postingCode ?? '',
        accountLookupPatterns: [{ account: account ?? '' }],
      })),
    accountingConfigurations: ['IFRS', 'LOCAL_GAAP', 'TAX'].map((name) => ({
      name,
      businessCalendarName: 'TARGET2',
      dimensionSetName: 'DIMENSIONS',
      fiscalCalendarName: 'CALENDAR_YEAR',
    })),
    businessCalendars: [{ name: 'TARGET2', status: 'ACTIVE' }],
    businessDateSettings: { businessDateShift: 0 },
    businessEventDefinition: {
      attributes: [
        { name: 'eventType', role: 'event_type', type: 'text' },
        { name: 'legalEntity', role: 'node', type: 'text' },
        { name: 'postingDate', role: 'effective_date', type: 'date' },
        { name: 'amount', role: 'attribute', type: 'decimal' },
        { name: 'currency', role: 'attribute', type: 'text' },
        { name: 'taxAmount', role: 'attribute', type: 'decimal' },
        { name: 'localAmount', role: 'attribute', type: 'decimal' },
        { name: 'localCurrency', role: 'attribute', type: 'text' },
        { name: 'settlementDate', role: 'attribute', type: 'date' },
        { name: 'reference', role: 'attribute', type: 'text' },
      ],
    },
    businessEventTypes: Object.keys(IDENTIFICATIONS).map((name) => ({ name })),
    dimensionSets: [{ name: 'DIMENSIONS', attributes: [] }],
    entities: [],
    featureFlags: { 'posting-date-override': true },
    fiscalCalendars: [
      { name: 'CALENDAR_YEAR', type: 'gregorian', endOfFirstYear: '2024-12-31', startYear: 2024 },
    ],
    flows: [],
    journalDefinition: {
      fields: [
        { name: 'journalId', role: 'journalId', type: 'uuid' },
        { name: 'lineId', role: 'lineId', type: 'uuid' },
        { name: 'lineNo', role: 'journalLineNo', type: 'integer' },
        { name: 'coreDate', role: 'coreDate', type: 'date' },
        { name: 'journalType', role: 'journalType', type: 'text' },
        { name: 'basis', role: 'accountingConfig', type: 'text' },
        { name: 'account', role: 'account', type: 'text' },
        { name: 'amount', role: 'transactionAmount', type: 'amount' },
        { name: 'currency', role: 'transactionCurrency', type: 'text' },
        { name: 'ingestionId', role: 'ingestionId', type: 'text' },
        { name: 'legalEntity', role: 'node', type: 'text' },
        { name: 'reverses', role: 'reverses', type: 'uuid' },
        { name: 'reversedBy', role: 'reversedBy', type: 'uuid' },
        { name: 'originJournalId', role: 'originJournalId', type: 'text' },
        { name: 'originJournalLineId', role: 'originJournalLineId', type: 'text' },
        { name: 'reference', type: 'text' },
        { name: 'memo', type: 'text' },
      ],
      primaryKeys: ['journalId', 'lineId'],
    },
    journalTypes: [
      { code: 'STD', behavior: 'PERMANENT' },
      { code: 'ACR', behavior: 'REVERSING', reversingDate: 'NEXT_DAY' },
    ],
    nodeValues: [{ fieldName: 'legalEntity', values: ['NL01', 'US01'] }],
    nodes: [
      {
        fields: { legalEntity: 'NL01' },
        timeZone: 'Europe/Amsterdam',
        nodeConfigs: [
          { accountingConfigName: 'IFRS', graceDays: 3, graceHours: 0, overridePostingDate: 'none' },
          {
            accountingConfigName: 'LOCAL_GAAP',
            graceDays: 0,
            graceHours: 0,
            overridePostingDate: 'firstOpenPeriod',
          },
        ],
      },
      {
        fields: { legalEntity: 'US01' },
        timeZone: 'America/New_York',
        nodeConfigs: [{ accountingConfigName: 'IFRS', graceDays: 0, graceHours: 12 }],
      },
    ],
    postingComponentIdentifications: Object.entries(IDENTIFICATIONS)
      .filter(([, codes]) => codes.length > 0)
      .map(([businessEventTypeName, codes]) => ({
        businessEventTypeName,
        postingComponents: codes.map((postingComponentCode) => ({ postingComponentCode })),
      })),
    postingComponents: [
      component('SALE_IFRS', 'IFRS', 'STD', [pattern('DR', 'RECEIVABLE'), pattern('CR', 'REVENUE')]),
      component('SALE_LOCAL', 'LOCAL_GAAP', 'STD', [
        pattern('DR', 'RECEIVABLE'),
        pattern('CR', 'REVENUE_LOCAL'),
      ]),
      component('SALE_TAX', 'TAX', 'STD', [pattern('DR', 'RECEIVABLE'), pattern('CR', 'TAX_PAYABLE')]),
      component('TAX_IFRS', 'IFRS', 'STD', [
        pattern('DR', 'RECEIVABLE', { amountField: 'taxAmount' }),
        pattern('CR', 'TAX_PAYABLE', { amountField: 'taxAmount' }),
      ]),
      component('ACCRUAL_IFRS', 'IFRS', 'ACR', [pattern('DR', 'EXPENSE'), pattern('CR', 'ACCRUED')]),
      component('ADJUST_IFRS', 'IFRS', 'STD', [
        pattern('DR', 'CASH', { amountSignage: 'POS' }),
        pattern('CR', 'GAIN', { amountSignage: 'POS' }),
        pattern('CR', 'CASH', { amountSignage: 'NEG' }),
        pattern('DR', 'LOSS', { amountSignage: 'NEG' }),
      ]),
      component('FX_IFRS', 'IFRS', 'STD', [
        pattern('DR', 'RECEIVABLE'),
        pattern('CR', 'REVENUE'),
        pattern('DR', 'CASH', { amountField: 'localAmount', currencyField: 'localCurrency' }),
        pattern('CR', 'GAIN', { amountField: 'localAmount', currencyField: 'localCurrency' }),
      ]),
      component('CROSS_IFRS', 'IFRS', 'STD', [
        pattern('DR', 'RECEIVABLE'),
        pattern('CR', 'REVENUE', { currencyField: 'localCurrency' }),
      ]),
      component('UNMAPPED_IFRS', 'IFRS', 'STD', [pattern('DR', 'RECEIVABLE'), pattern('CR', 'UNMAPPED')]),
      component('ONE_SIDED_IFRS', 'IFRS', 'STD', [pattern('DR', 'RECEIVABLE')]),
    ],
  };
  change(configuration);
  return configuration;
}

/** A business event of the test configuration: a sale of 100.00 EUR on 2026-03-10 in NL01. */
export function saleEvent(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    eventType: 'SALE',
    legalEntity: 'NL01',
    postingDate: '2026-03-10',
    amount: '100.00',
    currency: 'EUR',
    reference: 'INV-1',
    ...fields,
  };
}

/** Tuesday 2026-03-10, 10:00 UTC (11:00 in Amsterdam). */
export const TUESDAY_10_MARCH = new Date('2026-03-10T10:00:00Z');

/** A processing context with a fixed clock and ids `id-1`, `id-2`, ... */
export function context(
  now: Date = TUESDAY_10_MARCH,
  more: Partial<ProcessingContext> = {},
): ProcessingContext {
  let next = 0;
  return {
    ingestionId: 'in_test',
    now,
    newId: () => {
      next += 1;
      return `id-${next}`;
    },
    ...more,
  };
}

/** One journal line as an accountant reads it: date, basis, type, account, debit, credit, currency. */
export type LedgerRow = [
  coreDate: string,
  basis: string,
  type: string,
  account: string,
  debit: string,
  credit: string,
  currency: string,
];

/** The journal lines of drafts as ledger rows, in order. */
export function ledgerRows(journals: readonly JournalDraft[]): LedgerRow[] {
  return journals.flatMap((journal) =>
    journal.lines.map((line): LedgerRow => {
      const magnitude = line.amount.startsWith('-') ? line.amount.slice(1) : line.amount;
      return [
        journal.coreDate,
        journal.accountingConfig,
        journal.journalType,
        line.account,
        line.drCr === 'DR' ? magnitude : '',
        line.drCr === 'CR' ? magnitude : '',
        line.currency,
      ];
    }),
  );
}

/**
 * The records of a journal's lines keyed by every journal definition field, as the API gives
 * them (docs/domain/accounting.md, Journal records): rebuilt from the draft by `lineRecord`, the
 * function that rebuilds stored lines.
 */
export function recordsOf(
  prepared: PreparedAccounting,
  journal: JournalDraft | undefined,
): Record<string, unknown>[] {
  return journal?.lines.map((line) => lineRecord(prepared.journalDefinition, journal, line)) ?? [];
}

/** The drafts of a successful outcome; fails the test with the error otherwise. */
export function journalsOf(outcome: ProcessingOutcome): JournalDraft[] {
  if (!outcome.ok) throw new Error(`expected journals, got ${outcome.error.code}: ${outcome.error.message}`);
  return outcome.journals;
}

/** The drafts as a printable table (for failure output and docs). */
export function printJournals(journals: readonly JournalDraft[]): string {
  const rows = journals.flatMap((journal) => [
    `${journal.journalId} ${journal.coreDate} ${journal.accountingConfig}/${journal.journalType} ${journal.status}` +
      `${journal.reverses === undefined ? '' : ` reverses ${journal.reverses}`}` +
      `${journal.reversedBy === undefined ? '' : ` reversedBy ${journal.reversedBy}`}`,
    ...journal.lines.map(
      (line) => `  ${line.account.padEnd(28)} ${line.drCr} ${line.amount.padStart(22)} ${line.currency}`,
    ),
  ]);
  return rows.join('\n');
}
