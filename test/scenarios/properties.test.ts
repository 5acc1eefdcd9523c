/**
 * Property checks over generated configurations and events (house style, after TigerBeetle's
 * state machine tests): every journal balances per currency, a reversal cancels its original, the
 * trial balance per basis and currency is zero, and processing is deterministic. Sums are checked
 * with scaled BigInts, independently of the decimal helper under test.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addDaysIso } from '../../src/modules/accounting/dates.js';
import { processBusinessEvent, processDirectJournals } from '../../src/modules/accounting/engine.js';
import type { JournalDraft } from '../../src/modules/accounting/journal-draft.js';
import { prepareAccounting } from '../../src/modules/accounting/prepare.js';
import type { Configuration } from '../../src/modules/configuration/model.js';
import { context, testConfiguration } from './accounting-fixture.js';

const SCALE_DIGITS = 18;

/** A decimal string as an integer count of 10^-18. */
function scaled(text: string): bigint {
  const negative = text.startsWith('-');
  const [whole = '0', fraction = ''] = (negative ? text.slice(1) : text).split('.');
  const value = BigInt(whole + fraction.padEnd(SCALE_DIGITS, '0'));
  return negative ? -value : value;
}

const amountArb = fc
  .tuple(fc.bigInt({ min: -(10n ** 17n), max: 10n ** 17n }), fc.integer({ min: 0, max: 4 }))
  .map(([units, scale]) => {
    const digits = (units < 0n ? -units : units).toString().padStart(scale + 1, '0');
    const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
    return units < 0n ? `-${text}` : text;
  });

const pairArb = fc.record({
  amountField: fc.constantFrom('a1', 'a2', 'a3'),
  currencyField: fc.constantFrom('c1', 'c2'),
  postingDateField: fc.constantFrom('d1', 'd2'),
  amountSignage: fc.constantFrom('AUTO', 'POS', 'NEG') as fc.Arbitrary<'AUTO' | 'POS' | 'NEG'>,
  debitCode: fc.constantFrom('RECEIVABLE', 'CASH', 'EXPENSE'),
  creditCode: fc.constantFrom('REVENUE', 'GAIN', 'ACCRUED'),
});

const componentArb = fc.record({
  accountingConfigName: fc.constantFrom('IFRS', 'LOCAL_GAAP', 'TAX'),
  journalType: fc.constantFrom('STD', 'ACR'),
  pairs: fc.array(pairArb, { minLength: 1, maxLength: 3 }),
});

type GeneratedComponent = typeof componentArb extends fc.Arbitrary<infer T> ? T : never;

/** The test configuration with event type GEN posting generated, balanced components. */
function generatedConfiguration(components: GeneratedComponent[]): Configuration {
  return testConfiguration((configuration) => {
    configuration.businessEventDefinition.attributes?.push(
      ...['a1', 'a2', 'a3'].map((name) => ({ name, role: 'attribute' as const, type: 'decimal' as const })),
      ...['c1', 'c2'].map((name) => ({ name, role: 'attribute' as const, type: 'text' as const })),
      ...['d1', 'd2'].map((name) => ({ name, role: 'attribute' as const, type: 'date' as const })),
    );
    configuration.businessEventTypes.push({ name: 'GEN' });
    components.forEach((component, index) => {
      configuration.postingComponents.push({
        code: `GEN_${index}`,
        accountingConfigName: component.accountingConfigName,
        journalType: component.journalType,
        postingPatterns: component.pairs.flatMap((pair) =>
          (['DR', 'CR'] as const).map((debitCredit) => ({
            amountField: pair.amountField,
            currencyField: pair.currencyField,
            postingDateField: pair.postingDateField,
            amountSignage: pair.amountSignage,
            postingCode: debitCredit === 'DR' ? pair.debitCode : pair.creditCode,
            debitCredit,
          })),
        ),
      });
    });
    configuration.postingComponentIdentifications.push({
      businessEventTypeName: 'GEN',
      postingComponents: components.map((_, index) => ({ postingComponentCode: `GEN_${index}` })),
    });
  });
}

const dateArb = fc.integer({ min: 0, max: 60 }).map((offset) => addDaysIso('2026-03-01', offset));

const eventArb = fc.record({
  eventType: fc.constant('GEN'),
  legalEntity: fc.constantFrom('NL01', 'US01'),
  a1: amountArb,
  a2: fc.oneof(amountArb, fc.constant('0')),
  a3: fc.oneof(amountArb, fc.constant('-0.00')),
  c1: fc.constantFrom('EUR', 'USD'),
  c2: fc.constantFrom('EUR', 'JPY'),
  d1: dateArb,
  d2: dateArb,
});

function expectBalanced(journal: JournalDraft): void {
  const totals = new Map<string, bigint>();
  for (const line of journal.lines) {
    const amount = scaled(line.amount);
    expect(amount).not.toBe(0n);
    expect(line.drCr).toBe(amount > 0n ? 'DR' : 'CR');
    totals.set(line.currency, (totals.get(line.currency) ?? 0n) + amount);
  }
  for (const total of totals.values()) expect(total).toBe(0n);
  expect(journal.lines.some((line) => line.drCr === 'DR')).toBe(true);
  expect(journal.lines.some((line) => line.drCr === 'CR')).toBe(true);
}

function expectReversalsCancel(journals: readonly JournalDraft[]): void {
  const byId = new Map(journals.map((journal) => [journal.journalId, journal]));
  for (const journal of journals) {
    if (journal.reversedBy === undefined) continue;
    const reversal = byId.get(journal.reversedBy);
    expect(reversal?.reverses).toBe(journal.journalId);
    expect(reversal?.coreDate).toBe(addDaysIso(journal.coreDate, 1));
    expect(reversal?.lines.map((line) => [line.account, line.currency, scaled(line.amount)])).toEqual(
      journal.lines.map((line) => [line.account, line.currency, -scaled(line.amount)]),
    );
  }
}

describe('properties of generated configurations and events', () => {
  it('every journal balances per currency, reversals cancel, and the trial balance is zero', () => {
    fc.assert(
      fc.property(
        fc.array(componentArb, { minLength: 1, maxLength: 4 }),
        fc.array(eventArb, { maxLength: 20 }),
        (components, events) => {
          const prepared = prepareAccounting(generatedConfiguration(components));
          const trial = new Map<string, bigint>();
          for (const event of events) {
            const outcome = processBusinessEvent(prepared, event, context());
            if (!outcome.ok) {
              expect(outcome.error.code).toBe('no-journal');
              continue;
            }
            for (const journal of outcome.journals) {
              expectBalanced(journal);
              expect(journal.lines.length).toBeGreaterThan(0);
              for (const line of journal.lines) {
                const key = `${journal.accountingConfig}/${line.currency}`;
                trial.set(key, (trial.get(key) ?? 0n) + scaled(line.amount));
              }
            }
            expectReversalsCancel(outcome.journals);
            // Nothing posts in a basis that is not assigned to the event's node.
            const assigned = event.legalEntity === 'NL01' ? ['IFRS', 'LOCAL_GAAP'] : ['IFRS'];
            for (const journal of outcome.journals) expect(assigned).toContain(journal.accountingConfig);
          }
          for (const total of trial.values()) expect(total).toBe(0n);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('is deterministic: the same event, clock and ids give the same journals', () => {
    fc.assert(
      fc.property(fc.array(componentArb, { minLength: 1, maxLength: 3 }), eventArb, (components, event) => {
        const prepared = prepareAccounting(generatedConfiguration(components));
        expect(processBusinessEvent(prepared, event, context())).toEqual(
          processBusinessEvent(prepared, event, context()),
        );
      }),
      { numRuns: 100 },
    );
  });

  it('a direct journal is accepted exactly when every currency sums to zero', () => {
    const prepared = prepareAccounting(testConfiguration());
    const lineArb = fc.record({
      amount: amountArb.filter((amount) => scaled(amount) !== 0n),
      currency: fc.constantFrom('EUR', 'USD'),
    });
    fc.assert(
      fc.property(fc.array(lineArb, { minLength: 1, maxLength: 6 }), fc.boolean(), (lines, balance) => {
        const records = lines.map((line, index) => ({
          originJournalId: 'P',
          coreDate: '2026-03-10',
          journalType: 'ACR',
          basis: 'IFRS',
          account: `A${index}`,
          amount: line.amount,
          currency: line.currency,
          legalEntity: 'NL01',
        }));
        if (balance) {
          // Offset every line with its negation so that each currency sums to zero.
          for (const record of [...records]) {
            const amount = record.amount.startsWith('-') ? record.amount.slice(1) : `-${record.amount}`;
            records.push({ ...record, account: `${record.account}-offset`, amount });
          }
        }
        const sums = new Map<string, bigint>();
        for (const record of records)
          sums.set(record.currency, (sums.get(record.currency) ?? 0n) + scaled(record.amount));
        const balanced = [...sums.values()].every((sum) => sum === 0n);
        const [group] = processDirectJournals(prepared, records, context());
        expect(group?.outcome.ok).toBe(balanced);
        if (group?.outcome.ok === true) {
          for (const journal of group.outcome.journals) expectBalanced(journal);
          expectReversalsCancel(group.outcome.journals);
        } else {
          expect(group?.outcome.ok === false && group.outcome.error.code).toBe('unbalanced');
        }
      }),
      { numRuns: 200 },
    );
  });
});
