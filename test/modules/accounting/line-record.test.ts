import { describe, expect, it } from 'vitest';
import { processBusinessEvent, processDirectJournals } from '../../../src/modules/accounting/engine.js';
import type { JournalDraft } from '../../../src/modules/accounting/journal-draft.js';
import { lineRecord } from '../../../src/modules/accounting/line-record.js';
import { prepareAccounting } from '../../../src/modules/accounting/prepare.js';
import type { Configuration } from '../../../src/modules/configuration/model.js';
import { realisticConfiguration } from '../../helpers/fixtures.js';
import { businessEvent } from '../../helpers/records.js';

/**
 * Line records are stored as their extras and rebuilt on reading: the record of a stored line is
 * the record of the draft it was made from, field for field and in the same order.
 */
describe('line records stored as extras', () => {
  const prepared = prepareAccounting(realisticConfiguration().configuration as unknown as Configuration);
  let id = 0;
  const ctx = {
    ingestionId: 'in_1',
    now: new Date('2026-11-20T12:00:00Z'),
    businessDatePinned: '2026-11-20',
    newId: () => {
      id += 1;
      return `00000000-0000-4000-8000-${String(id).padStart(12, '0')}`;
    },
  };

  const roundTrip = (journal: JournalDraft) => {
    for (const line of journal.lines) {
      const made = lineRecord(prepared.journalDefinition, journal, line);
      const extras = JSON.parse(JSON.stringify(line.extras)) as Record<string, unknown>;
      const rebuilt = lineRecord(
        prepared.journalDefinition,
        {
          ...journal,
          reverses: journal.reverses ?? null,
          reversedBy: journal.reversedBy ?? null,
          originJournalId: journal.originJournalId ?? null,
        },
        { ...line, extras },
      );
      expect(rebuilt).toEqual(made);
      expect(Object.keys(rebuilt)).toEqual(Object.keys(made));
      expect(Object.keys(made)).toEqual(prepared.journalDefinition.fields.map((field) => field.name));
    }
  };

  it('rebuilds generated lines, reversals included, exactly', () => {
    for (const event of [
      businessEvent({ amount: '123456789012345.67' }),
      businessEvent({ eventType: 'INTEREST_ACCRUAL', amount: '-3.5' }),
      businessEvent({ legalEntity: 'LF_US', branch: 'NYC', eventType: 'FEE_CHARGED' }),
    ]) {
      const outcome = processBusinessEvent(prepared, event, ctx);
      expect(outcome.ok).toBe(true);
      if (outcome.ok) for (const journal of outcome.journals) roundTrip(journal);
    }
  });

  it('rebuilds directly ingested lines with their origin line ids and copied fields', () => {
    const line = (amount: string, originLine: string) => ({
      coreDate: '2026-11-20',
      journalType: 'REV',
      accountingConfig: 'IFRS',
      account: '1300',
      transactionAmount: amount,
      transactionCurrency: 'EUR',
      originJournalId: 'J-9',
      originJournalLineId: originLine,
      legalEntity: 'LF_NL',
      branch: 'AMS',
      productCode: 'MORTGAGE',
    });
    const groups = processDirectJournals(prepared, [line('10.00', 'L1'), line('-10.00', 'L2')], ctx);
    const outcome = groups[0]?.outcome;
    expect(outcome?.ok).toBe(true);
    if (outcome?.ok) for (const journal of outcome.journals) roundTrip(journal);
  });
});
