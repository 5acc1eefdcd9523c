import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  csvColumnsOf,
  csvHeaderOf,
  csvValue,
  type JournalView,
  journalLayoutOf,
  journalToCsv,
  journalToJsonl,
  journalToLedger,
  ledgerAccountOf,
} from '../../src/cli/remote/journal-formats.js';
import { realisticConfiguration } from '../helpers/fixtures.js';

const HLEDGER = '/usr/bin/hledger';
const hledgerAvailable = existsSync(HLEDGER);

const layout = journalLayoutOf(realisticConfiguration());

function line(account: string, amount: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    journalId: 'j-1',
    lineId: `l-${account}`,
    journalLineNo: 1,
    coreDate: '2026-11-20',
    journalType: 'PERMANENT',
    accountingConfig: 'IFRS',
    account,
    transactionAmount: amount,
    transactionCurrency: 'EUR',
    reverses: null,
    reversedBy: null,
    ingestionId: 'in_1',
    originJournalId: null,
    originJournalLineId: null,
    legalEntity: 'LF_NL',
    branch: 'AMS',
    productCode: 'MORTGAGE',
    drCr: amount.startsWith('-') ? 'CR' : 'DR',
    ...extra,
  };
}

/** Two journals of two currencies; the amounts have more digits than a double holds exactly. */
const journals: JournalView[] = [
  {
    journalId: '0b7c6a52-0000-4000-8000-000000000001',
    status: 'posted',
    coreDate: '2026-11-20',
    journalType: 'PERMANENT',
    accountingConfig: 'IFRS',
    ingestionId: 'in_1',
    reverses: null,
    reversedBy: null,
    node: { legalEntity: 'LF_NL', branch: 'AMS' },
    lines: [
      line('1100 Loans receivable', '12345678901234567.89'),
      line('2000  Customer, deposits', '-12345678901234567.89'),
    ],
  },
  {
    journalId: '0b7c6a52-0000-4000-8000-000000000002',
    status: 'unposted',
    coreDate: '2026-11-21',
    journalType: 'REVERSING',
    accountingConfig: 'LOCAL_GAAP',
    ingestionId: 'in_1',
    reverses: '0b7c6a52-0000-4000-8000-000000000001',
    reversedBy: null,
    lines: [
      line('1100 Loans receivable', '-100.005', { transactionCurrency: 'USD' }),
      line('4000 Interest income', '100.005', { transactionCurrency: 'USD' }),
    ],
  },
];

describe('journalLayoutOf', () => {
  it('finds the configured names of the account, amount and currency fields', () => {
    expect(layout).toMatchObject({
      account: 'account',
      transactionAmount: 'transactionAmount',
      transactionCurrency: 'transactionCurrency',
    });
  });

  it('names the role that is missing', () => {
    expect(() => journalLayoutOf({ configuration: { journalDefinition: { fields: [] } } })).toThrow(
      /role account/,
    );
  });
});

describe('csv', () => {
  const columns = csvColumnsOf(layout.fields);

  it('has the journal columns, then the line fields not already there, then drCr', () => {
    const header = csvHeaderOf(columns).split(',');
    expect(header.slice(0, 8)).toEqual([
      'journalId',
      'status',
      'coreDate',
      'journalType',
      'accountingConfig',
      'ingestionId',
      'reverses',
      'reversedBy',
    ]);
    expect(header).toContain('account');
    expect(header.at(-1)).toBe('drCr');
    expect(new Set(header).size).toBe(header.length);
  });

  it('writes one row per line, quoting where RFC 4180 says', () => {
    const rows = journalToCsv(journals[0] as JournalView, columns).split('\n');
    expect(rows).toHaveLength(2);
    expect(rows[1]).toContain('"2000  Customer, deposits",-12345678901234567.89,EUR');
    expect(
      rows[0]?.startsWith('0b7c6a52-0000-4000-8000-000000000001,posted,2026-11-20,PERMANENT,IFRS,in_1,,,'),
    ).toBe(true);
    expect(csvValue('say "hi"')).toBe('"say ""hi"""');
    expect(csvValue(null)).toBe('');
  });
});

describe('jsonl', () => {
  it('writes one journal per line, amounts as strings', () => {
    const text = journalToJsonl(journals[0] as JournalView);
    expect(text).not.toContain('\n');
    expect(JSON.parse(text)).toEqual(journals[0]);
  });
});

describe('ledger', () => {
  it('writes a transaction with tags and postings, amounts exactly as given', () => {
    expect(journalToLedger(journals[1] as JournalView, layout)).toBe(
      [
        '2026-11-21 ! REVERSING 0b7c6a52-0000-4000-8000-000000000002',
        '    ; accountingConfig:LOCAL_GAAP, status:unposted, ingestionId:in_1, reverses:0b7c6a52-0000-4000-8000-000000000001',
        '    LOCAL_GAAP:1100 Loans receivable  -100.005 USD',
        '    LOCAL_GAAP:4000 Interest income  100.005 USD',
      ].join('\n'),
    );
    const first = journalToLedger(journals[0] as JournalView, layout);
    expect(first).toContain(
      '    ; accountingConfig:IFRS, status:posted, ingestionId:in_1, legalEntity:LF_NL, branch:AMS\n',
    );
    expect(first).toContain('    IFRS:LF_NL:AMS:2000 Customer, deposits  -12345678901234567.89 EUR');
  });

  it('names accounts CONFIG:NODE VALUES:ACCOUNT, a colon in a node value kept in its part', () => {
    const journal = { ...(journals[0] as JournalView), node: { legalEntity: 'LF:NL', branch: 'A  M' } };
    expect(ledgerAccountOf(journal, '1100 Loans')).toBe('IFRS:LF_NL:A M:1100 Loans');
    expect(ledgerAccountOf({ ...journal, node: {} }, 'Assets:Cash')).toBe('IFRS:Assets:Cash');
  });

  it('refuses an amount that is not a decimal string', () => {
    const bad = { ...(journals[0] as JournalView), lines: [line('1100', '1e5'), line('2000', '-1e5')] };
    expect(() => journalToLedger(bad, layout)).toThrow(/decimal string/);
    const number = {
      ...(journals[0] as JournalView),
      lines: [{ ...line('1100', '1'), transactionAmount: 1 }],
    };
    expect(() => journalToLedger(number, layout)).toThrow(/decimal string/);
  });

  it.runIf(hledgerAvailable)('is read by hledger, which finds the expected balances', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ledgerflow-ledger-'));
    try {
      const file = join(dir, 'journals.ledger');
      writeFileSync(file, `${journals.map((journal) => `${journalToLedger(journal, layout)}\n`).join('\n')}`);
      execFileSync(HLEDGER, ['-f', file, 'check'], { encoding: 'utf8' });
      const csv = execFileSync(HLEDGER, ['-f', file, 'balance', '--flat', '--no-total', '-O', 'csv'], {
        encoding: 'utf8',
      });
      // Accounting configurations and nodes are parts of the account: never summed together.
      expect(csv.trim().split('\n')).toEqual([
        '"account","balance"',
        '"IFRS:LF_NL:AMS:1100 Loans receivable","12345678901234567.89 EUR"',
        '"IFRS:LF_NL:AMS:2000 Customer, deposits","-12345678901234567.89 EUR"',
        '"LOCAL_GAAP:1100 Loans receivable","-100.005 USD"',
        '"LOCAL_GAAP:4000 Interest income","100.005 USD"',
      ]);
      const tagged = execFileSync(HLEDGER, ['-f', file, 'register', 'tag:status=unposted', '-O', 'csv'], {
        encoding: 'utf8',
      });
      expect(tagged).toContain('4000 Interest income');
      expect(tagged).not.toContain('EUR');
      const branch = execFileSync(HLEDGER, ['-f', file, 'balance', 'tag:branch=AMS', '--flat', '-O', 'csv'], {
        encoding: 'utf8',
      });
      expect(branch).toContain('"IFRS:LF_NL:AMS:1100 Loans receivable","12345678901234567.89 EUR"');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
