/**
 * Business events in, journal lines out (docs/domain/accounting.md, Business events to Journal
 * records). Each row reads [core date, accounting basis, journal type, account, debit, credit,
 * currency].
 */
import { describe, expect, it } from 'vitest';
import realistic from '../../docs/examples/configuration.json' with { type: 'json' };
import { processBusinessEvent } from '../../src/modules/accounting/engine.js';
import { prepareAccounting } from '../../src/modules/accounting/prepare.js';
import type { Configuration } from '../../src/modules/configuration/model.js';
import {
  context,
  journalsOf,
  type LedgerRow,
  ledgerRows,
  recordsOf,
  saleEvent,
  testConfiguration,
} from './accounting-fixture.js';

const prepared = prepareAccounting(testConfiguration());

function post(event: Record<string, unknown>, config = prepared): LedgerRow[] {
  return ledgerRows(journalsOf(processBusinessEvent(config, event, context())));
}

describe('business events become journal lines', () => {
  const table: Array<{ rule: string; event: Record<string, unknown>; lines: LedgerRow[] }> = [
    {
      rule: 'one event posts in every accounting basis assigned to its node; TAX is assigned to no node',
      event: saleEvent(),
      lines: [
        ['2026-03-10', 'IFRS', 'STD', '1100 Receivables', '100.00', '', 'EUR'],
        ['2026-03-10', 'IFRS', 'STD', '8000 Revenue', '', '100.00', 'EUR'],
        ['2026-03-10', 'LOCAL_GAAP', 'STD', '1100 Receivables', '100.00', '', 'EUR'],
        ['2026-03-10', 'LOCAL_GAAP', 'STD', '8000-NL Omzet', '', '100.00', 'EUR'],
      ],
    },
    {
      rule: 'a node with only IFRS posts only IFRS',
      event: saleEvent({ legalEntity: 'US01' }),
      lines: [
        ['2026-03-10', 'IFRS', 'STD', '1100 Receivables', '100.00', '', 'EUR'],
        ['2026-03-10', 'IFRS', 'STD', '8000 Revenue', '', '100.00', 'EUR'],
      ],
    },
    {
      rule: 'AUTO: a negative amount posts its absolute value on the opposite side',
      event: saleEvent({ legalEntity: 'US01', amount: '-40.00' }),
      lines: [
        ['2026-03-10', 'IFRS', 'STD', '1100 Receivables', '', '40.00', 'EUR'],
        ['2026-03-10', 'IFRS', 'STD', '8000 Revenue', '40.00', '', 'EUR'],
      ],
    },
    {
      rule: 'POS patterns apply to a positive amount only',
      event: saleEvent({ eventType: 'ADJUSTMENT', amount: '10.50' }),
      lines: [
        ['2026-03-10', 'IFRS', 'STD', '1000 Cash', '10.50', '', 'EUR'],
        ['2026-03-10', 'IFRS', 'STD', '8100 Gains', '', '10.50', 'EUR'],
      ],
    },
    {
      rule: 'NEG patterns apply to a negative amount only, with its absolute value on their own side',
      event: saleEvent({ eventType: 'ADJUSTMENT', amount: '-10.50' }),
      lines: [
        ['2026-03-10', 'IFRS', 'STD', '1000 Cash', '', '10.50', 'EUR'],
        ['2026-03-10', 'IFRS', 'STD', '4100 Losses', '10.50', '', 'EUR'],
      ],
    },
    {
      rule: 'a zero amount produces no line (the zero tax pair is left out)',
      event: saleEvent({ eventType: 'SALE_WITH_TAX', taxAmount: '0.00' }),
      lines: [
        ['2026-03-10', 'IFRS', 'STD', '1100 Receivables', '100.00', '', 'EUR'],
        ['2026-03-10', 'IFRS', 'STD', '8000 Revenue', '', '100.00', 'EUR'],
      ],
    },
    {
      rule: 'an absent amount produces no line either (choice)',
      event: saleEvent({ eventType: 'SALE_WITH_TAX' }),
      lines: [
        ['2026-03-10', 'IFRS', 'STD', '1100 Receivables', '100.00', '', 'EUR'],
        ['2026-03-10', 'IFRS', 'STD', '8000 Revenue', '', '100.00', 'EUR'],
      ],
    },
    {
      rule: 'components of one basis, type and date share one journal',
      event: saleEvent({ eventType: 'SALE_WITH_TAX', taxAmount: '21.00' }),
      lines: [
        ['2026-03-10', 'IFRS', 'STD', '1100 Receivables', '100.00', '', 'EUR'],
        ['2026-03-10', 'IFRS', 'STD', '8000 Revenue', '', '100.00', 'EUR'],
        ['2026-03-10', 'IFRS', 'STD', '1100 Receivables', '21.00', '', 'EUR'],
        ['2026-03-10', 'IFRS', 'STD', '1500 VAT payable', '', '21.00', 'EUR'],
      ],
    },
    {
      rule: 'a journal balances per currency, each currency on its own',
      event: saleEvent({
        eventType: 'FX_SALE',
        amount: '110.00',
        currency: 'USD',
        localAmount: '100.00',
        localCurrency: 'EUR',
      }),
      lines: [
        ['2026-03-10', 'IFRS', 'STD', '1100 Receivables', '110.00', '', 'USD'],
        ['2026-03-10', 'IFRS', 'STD', '8000 Revenue', '', '110.00', 'USD'],
        ['2026-03-10', 'IFRS', 'STD', '1000 Cash', '100.00', '', 'EUR'],
        ['2026-03-10', 'IFRS', 'STD', '8100 Gains', '', '100.00', 'EUR'],
      ],
    },
    {
      rule: 'amounts are exact: fifteen integer digits and cents',
      event: saleEvent({ legalEntity: 'US01', amount: '123456789012345.67' }),
      lines: [
        ['2026-03-10', 'IFRS', 'STD', '1100 Receivables', '123456789012345.67', '', 'EUR'],
        ['2026-03-10', 'IFRS', 'STD', '8000 Revenue', '', '123456789012345.67', 'EUR'],
      ],
    },
    {
      rule: 'amounts are exact: three decimals keep their scale',
      event: saleEvent({ legalEntity: 'US01', amount: '12.345', currency: 'KWD' }),
      lines: [
        ['2026-03-10', 'IFRS', 'STD', '1100 Receivables', '12.345', '', 'KWD'],
        ['2026-03-10', 'IFRS', 'STD', '8000 Revenue', '', '12.345', 'KWD'],
      ],
    },
  ];

  it.each(table)('$rule', ({ event, lines }) => {
    expect(post(event)).toEqual(lines);
  });

  it('groups lines by posting date: one journal per core date', () => {
    const byDate = prepareAccounting(
      testConfiguration((configuration) => {
        for (const component of configuration.postingComponents) {
          if (component.code !== 'TAX_IFRS') continue;
          for (const pattern of component.postingPatterns) pattern.postingDateField = 'settlementDate';
        }
      }),
    );
    const event = saleEvent({ eventType: 'SALE_WITH_TAX', taxAmount: '21.00', settlementDate: '2026-03-09' });
    const journals = journalsOf(processBusinessEvent(byDate, event, context()));
    expect(journals.map((journal) => [journal.coreDate, journal.lines.length])).toEqual([
      ['2026-03-10', 2],
      ['2026-03-09', 2],
    ]);
  });

  it('groups lines by accounting basis: one journal per basis, each with its own node and lines', () => {
    const journals = journalsOf(processBusinessEvent(prepared, saleEvent(), context()));
    expect(journals.map((journal) => [journal.accountingConfig, journal.journalType, journal.node])).toEqual([
      ['IFRS', 'STD', { legalEntity: 'NL01' }],
      ['LOCAL_GAAP', 'STD', { legalEntity: 'NL01' }],
    ]);
  });

  it('posts the realistic fixture configuration in both of its bases', () => {
    const configuration = realistic.configuration as unknown as Configuration;
    const event = {
      eventType: 'LOAN_DISBURSEMENT',
      effectiveDate: '2026-03-10',
      amount: '250000.00',
      currency: 'EUR',
      legalEntity: 'LF_NL',
      branch: 'AMS',
      productCode: 'MORTGAGE',
    };
    const realisticPrepared = prepareAccounting(configuration);
    const journals = journalsOf(processBusinessEvent(realisticPrepared, event, context()));
    expect(journals.map((journal) => journal.accountingConfig)).toEqual(['IFRS', 'LOCAL_GAAP']);
    for (const journal of journals) {
      expect(journal.lines.map((line) => line.amount)).toEqual(['250000.00', '-250000.00']);
      expect(recordsOf(realisticPrepared, journal)[0]).toMatchObject({
        legalEntity: 'LF_NL',
        branch: 'AMS',
        productCode: 'MORTGAGE',
      });
    }
  });
});

describe('journal records', () => {
  it('keys every line by the journal definition field names, filled per role', () => {
    const [journal] = journalsOf(
      processBusinessEvent(prepared, saleEvent({ legalEntity: 'US01' }), context()),
    );
    expect(recordsOf(prepared, journal)).toEqual([
      {
        journalId: 'id-1',
        lineId: 'id-2',
        lineNo: 1,
        coreDate: '2026-03-10',
        journalType: 'STD',
        basis: 'IFRS',
        account: '1100 Receivables',
        amount: '100.00',
        currency: 'EUR',
        ingestionId: 'in_test',
        legalEntity: 'US01',
        reverses: null,
        reversedBy: null,
        originJournalId: null,
        originJournalLineId: null,
        reference: 'INV-1',
        memo: null,
      },
      {
        journalId: 'id-1',
        lineId: 'id-3',
        lineNo: 2,
        coreDate: '2026-03-10',
        journalType: 'STD',
        basis: 'IFRS',
        account: '8000 Revenue',
        amount: '-100.00',
        currency: 'EUR',
        ingestionId: 'in_test',
        legalEntity: 'US01',
        reverses: null,
        reversedBy: null,
        originJournalId: null,
        originJournalLineId: null,
        reference: 'INV-1',
        memo: null,
      },
    ]);
  });

  it('signs amounts (debit positive, credit negative) and derives drCr', () => {
    const [journal] = journalsOf(
      processBusinessEvent(prepared, saleEvent({ legalEntity: 'US01' }), context()),
    );
    expect(journal?.lines.map((line) => [line.lineNo, line.account, line.amount, line.drCr])).toEqual([
      [1, '1100 Receivables', '100.00', 'DR'],
      [2, '8000 Revenue', '-100.00', 'CR'],
    ]);
  });

  it('numbers lines 1..n per journal and draws the journal id before its line ids', () => {
    const journals = journalsOf(processBusinessEvent(prepared, saleEvent(), context()));
    expect(
      journals.map((journal) => [journal.journalId, journal.lines.map((line) => [line.lineNo, line.lineId])]),
    ).toEqual([
      [
        'id-1',
        [
          [1, 'id-2'],
          [2, 'id-3'],
        ],
      ],
      [
        'id-4',
        [
          [1, 'id-5'],
          [2, 'id-6'],
        ],
      ],
    ]);
  });
});
