/**
 * Every processing error code (docs/domain/accounting.md, Processing errors) with the message it
 * records. A failing record produces no journal at all and draws no id.
 */
import { describe, expect, it } from 'vitest';
import type { DirectJournalContext } from '../../src/modules/accounting/direct-journals.js';
import { processBusinessEvent, processDirectJournals } from '../../src/modules/accounting/engine.js';
import { JOURNAL_LINES_MAX } from '../../src/modules/accounting/journal-assembly.js';
import type { ProcessingContext } from '../../src/modules/accounting/journal-draft.js';
import { prepareAccounting } from '../../src/modules/accounting/prepare.js';
import {
  PROCESSING_ERROR_CODES,
  type ProcessingError,
} from '../../src/modules/accounting/processing-error.js';
import type { Configuration } from '../../src/modules/configuration/model.js';
import { context, saleEvent, testConfiguration } from './accounting-fixture.js';

const prepared = prepareAccounting(testConfiguration());
const covered = new Set<string>();

function eventError(
  event: Record<string, unknown>,
  change?: (configuration: Configuration) => void,
): ProcessingError {
  let ids = 0;
  const config = change === undefined ? prepared : prepareAccounting(testConfiguration(change));
  const outcome = processBusinessEvent(config, event, {
    ...context(),
    newId: () => {
      ids += 1;
      return `id-${ids}`;
    },
  });
  if (outcome.ok) throw new Error('expected an error');
  expect(ids).toBe(0);
  covered.add(outcome.error.code);
  return outcome.error;
}

function directLine(
  originJournalId: string,
  amount: string,
  more: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    originJournalId,
    coreDate: '2026-03-10',
    journalType: 'STD',
    basis: 'IFRS',
    account: amount.startsWith('-') ? '8000 Revenue' : '1000 Cash',
    amount,
    currency: 'EUR',
    legalEntity: 'NL01',
    ...more,
  };
}

function linesError(
  lines: Record<string, unknown>[],
  more: Omit<DirectJournalContext, keyof ProcessingContext> = {},
): ProcessingError {
  const [group] = processDirectJournals(prepared, lines, { ...context(), ...more });
  if (group === undefined || group.outcome.ok) throw new Error('expected an error');
  covered.add(group.outcome.error.code);
  return group.outcome.error;
}

describe('processing errors of business events', () => {
  it('unknown-event-type names the value and the attribute', () => {
    expect(eventError(saleEvent({ eventType: 'BOGUS' }))).toEqual({
      code: 'unknown-event-type',
      message: 'event type "BOGUS" (attribute "eventType") is not in businessEventTypes',
    });
  });

  it('unknown-node names the node values', () => {
    expect(eventError(saleEvent({ legalEntity: 'XX99' }))).toEqual({
      code: 'unknown-node',
      message:
        'no nodes entry has the fields {"legalEntity":"XX99"} (business event attributes with role node)',
    });
  });

  it('unknown-posting-component names the identification entry', () => {
    const error = eventError(saleEvent({ eventType: 'TAX_ONLY' }), (configuration) => {
      const identification = configuration.postingComponentIdentifications.find(
        (entry) => entry.businessEventTypeName === 'TAX_ONLY',
      );
      identification?.postingComponents.push({ postingComponentCode: 'GHOST' });
    });
    expect(error).toEqual({
      code: 'unknown-posting-component',
      message:
        'posting component "GHOST" of the postingComponentIdentifications entry for event type "TAX_ONLY" is not in postingComponents',
    });
  });

  it('unknown-accounting-config names the component', () => {
    const error = eventError(saleEvent({ eventType: 'TAX_ONLY' }), (configuration) => {
      configuration.nodes[0]?.nodeConfigs.push({ accountingConfigName: 'GHOST' });
      const tax = configuration.postingComponents.find((component) => component.code === 'SALE_TAX');
      if (tax !== undefined) tax.accountingConfigName = 'GHOST';
    });
    expect(error).toEqual({
      code: 'unknown-accounting-config',
      message:
        'accounting configuration "GHOST" of posting component "SALE_TAX" is not in accountingConfigurations',
    });
  });

  it('unknown-journal-type names the component', () => {
    const error = eventError(saleEvent(), (configuration) => {
      const sale = configuration.postingComponents.find((component) => component.code === 'SALE_IFRS');
      if (sale !== undefined) sale.journalType = 'GHOST';
    });
    expect(error).toEqual({
      code: 'unknown-journal-type',
      message: 'journal type "GHOST" of posting component "SALE_IFRS" is not in journalTypes',
    });
  });

  it('invalid-time-zone names the node and the zone', () => {
    const error = eventError(saleEvent(), (configuration) => {
      const node = configuration.nodes[0];
      if (node !== undefined) node.timeZone = 'Mars/Olympus_Mons';
    });
    expect(error).toEqual({
      code: 'invalid-time-zone',
      message:
        'node {"legalEntity":"NL01"} has time zone "Mars/Olympus_Mons", which is not a known IANA zone',
    });
  });

  it('invalid-amount names the amount field and the pattern', () => {
    expect(eventError(saleEvent({ amount: '12,5' }))).toEqual({
      code: 'invalid-amount',
      message:
        'amount field "amount" of posting pattern "RECEIVABLE" of posting component "SALE_IFRS" is "12,5", not an exact decimal',
    });
  });

  it('invalid-currency names the currency field', () => {
    expect(eventError(saleEvent({ currency: null }))).toEqual({
      code: 'invalid-currency',
      message:
        'currency field "currency" of posting pattern "RECEIVABLE" of posting component "SALE_IFRS" is null, not a currency code',
    });
  });

  it('invalid-date names the posting date field', () => {
    expect(eventError(saleEvent({ postingDate: '2026-02-30' }))).toEqual({
      code: 'invalid-date',
      message:
        'posting date field "postingDate" of posting pattern "RECEIVABLE" of posting component "SALE_IFRS" is "2026-02-30", not a date YYYY-MM-DD',
    });
  });

  it('no-account names the posting code without an account lookup', () => {
    expect(eventError(saleEvent({ eventType: 'UNMAPPED' }))).toEqual({
      code: 'no-account',
      message:
        'posting code "UNMAPPED" of posting component "UNMAPPED_IFRS" has no account in accountLookups',
    });
  });

  it('no-journal when the event type has no posting component', () => {
    expect(eventError(saleEvent({ eventType: 'NOTHING' }))).toEqual({
      code: 'no-journal',
      message: 'event type "NOTHING" has no posting component in postingComponentIdentifications',
    });
  });

  it('no-journal when no basis of its components is assigned to the node', () => {
    expect(eventError(saleEvent({ eventType: 'TAX_ONLY' }))).toEqual({
      code: 'no-journal',
      message:
        'the accounting configurations of the posting components of event type "TAX_ONLY" ("TAX") are not assigned to the node',
    });
  });

  it('no-journal when every amount is zero', () => {
    expect(eventError(saleEvent({ amount: '0.00' })).code).toBe('no-journal');
    expect(eventError(saleEvent({ eventType: 'ADJUSTMENT', amount: '-0' })).message).toBe(
      'every amount of the posting patterns of event type "ADJUSTMENT" is zero, absent or of a sign its pattern skips',
    );
  });

  it('unbalanced when a journal has only one side', () => {
    expect(eventError(saleEvent({ eventType: 'ONE_SIDED' }))).toEqual({
      code: 'unbalanced',
      message:
        'journal of posting component "ONE_SIDED_IFRS" (accounting configuration "IFRS", journal type "STD", core ' +
        'date 2026-03-10) does not balance in EUR: debits 100.00, credits 0',
    });
  });

  it('unbalanced when debits equal credits overall but not per currency', () => {
    expect(eventError(saleEvent({ eventType: 'CROSS_CURRENCY', localCurrency: 'USD' }))).toEqual({
      code: 'unbalanced',
      message:
        'journal of posting component "CROSS_IFRS" (accounting configuration "IFRS", journal type "STD", core ' +
        'date 2026-03-10) does not balance in EUR: debits 100.00, credits 0',
    });
  });

  it('closed-period names the journal and the earliest open period', () => {
    const error = eventError(saleEvent({ postingDate: '2026-01-31' }));
    expect(error.code).toBe('closed-period');
    expect(error.message).toContain('"SALE_IFRS"');
    expect(error.message).toContain('starts 2026-03-01');
  });
});

describe('processing errors of direct journal lines', () => {
  it('missing-field names the field and its role', () => {
    expect(linesError([directLine('J', '5', { account: '' })])).toEqual({
      code: 'missing-field',
      message:
        'field "account" (role account) of line 1 of origin journal "J" is ""; the sender must supply it',
    });
    expect(linesError([directLine('', '5')]).message).toBe(
      'field "originJournalId" (role originJournalId) of line 1 of the chunk is ""; the sender must supply it',
    );
  });

  it('unknown-node', () => {
    expect(linesError([directLine('J', '5', { legalEntity: 'XX' })]).code).toBe('unknown-node');
  });

  it('unknown-accounting-config', () => {
    expect(linesError([directLine('J', '5', { basis: 'GHOST' })])).toEqual({
      code: 'unknown-accounting-config',
      message:
        'accounting configuration "GHOST" of line 1 of origin journal "J" is not in accountingConfigurations',
    });
  });

  it('accounting-config-not-assigned names the basis and the node', () => {
    expect(linesError([directLine('J', '5', { basis: 'TAX' })])).toEqual({
      code: 'accounting-config-not-assigned',
      message:
        'accounting configuration "TAX" of line 1 of origin journal "J" is not assigned to node {"legalEntity":"NL01"} (nodeConfigs)',
    });
  });

  it('unknown-journal-type', () => {
    expect(linesError([directLine('J', '5', { journalType: 'GHOST' })])).toEqual({
      code: 'unknown-journal-type',
      message: 'journal type "GHOST" of line 1 of origin journal "J" is not in journalTypes',
    });
  });

  it('invalid-amount', () => {
    expect(linesError([directLine('J', '1e3')]).code).toBe('invalid-amount');
  });

  it('zero-amount: direct lines are never zero', () => {
    expect(linesError([directLine('J', '0.00'), directLine('J', '-0.00')])).toEqual({
      code: 'zero-amount',
      message: 'transaction amount of line 1 of origin journal "J" is zero; journal lines are never zero',
    });
  });

  it('invalid-currency and invalid-date', () => {
    expect(linesError([directLine('J', '5', { currency: 978 })]).code).toBe('invalid-currency');
    expect(linesError([directLine('J', '5', { coreDate: '10/03/2026' })]).code).toBe('invalid-date');
  });

  it('inconsistent-journal when lines of one journal disagree on the core date', () => {
    expect(linesError([directLine('J', '5'), directLine('J', '-5', { coreDate: '2026-03-09' })])).toEqual({
      code: 'inconsistent-journal',
      message:
        'line 2 of origin journal "J" differs from line 1 in coreDate; the lines of one journal share core date, ' +
        'journal type, accounting configuration and node',
    });
  });

  it('journal-split-across-chunks when an earlier chunk had lines of the same origin journal', () => {
    expect(
      linesError([directLine('J', '5'), directLine('J', '-5')], { seenOriginJournalIds: new Set(['J']) }),
    ).toEqual({
      code: 'journal-split-across-chunks',
      message: 'origin journal "J" already has lines from an earlier chunk; a journal is sent in one chunk',
    });
  });

  it('duplicate-origin-journal when a journal of another session holds the origin journal id (finding: a retried feed doubles the books)', () => {
    const bookedOriginJournals = new Map([['IFRS', new Map([['J', 'journal-1']])]]);
    expect(linesError([directLine('J', '5'), directLine('J', '-5')], { bookedOriginJournals })).toEqual({
      code: 'duplicate-origin-journal',
      message:
        'origin journal "J" is already journal journal-1 of accounting configuration "IFRS"; an origin ' +
        'journal id is booked once per accounting configuration',
    });
    // The same origin journal id in another accounting configuration is another journal.
    const elsewhere = new Map([['LOCAL', new Map([['J', 'journal-2']])]]);
    const [group] = processDirectJournals(prepared, [directLine('J', '5'), directLine('J', '-5')], {
      ...context(),
      bookedOriginJournals: elsewhere,
    });
    expect(group?.outcome.ok).toBe(true);
  });

  it('too-many-lines above JOURNAL_LINES_MAX', () => {
    const lines = Array.from({ length: JOURNAL_LINES_MAX + 1 }, (_, index) =>
      directLine('BIG', index % 2 === 0 ? '1' : '-1'),
    );
    expect(linesError(lines).message).toContain(`at most ${JOURNAL_LINES_MAX}`);
  });

  it('unbalanced and closed-period apply as for generated journals', () => {
    expect(linesError([directLine('J', '5'), directLine('J', '-4')]).code).toBe('unbalanced');
    expect(linesError([directLine('J', '5')]).code).toBe('unbalanced');
    expect(
      linesError([
        directLine('J', '5', { coreDate: '2026-01-05' }),
        directLine('J', '-5', { coreDate: '2026-01-05' }),
      ]).code,
    ).toBe('closed-period');
  });
});

describe('the error catalogue', () => {
  it('every code is exercised by a scenario above', () => {
    // The codes of flow steps are exercised by test/http/flows.test.ts, which runs the scripts.
    const flowCodes = [
      'script-error',
      'script-timeout',
      'script-memory',
      'script-output',
      'invalid-business-event',
    ];
    // `processing-failed` is the processor's, not the engine's: test/http/processing-failures.test.ts.
    // The rollback codes depend on the journals stored: test/http/rollback.test.ts.
    const storedCodes = ['processing-failed', 'rollback-target-not-found', 'already-rolled-back'];
    const uncovered = [...PROCESSING_ERROR_CODES].filter(
      (code) => !covered.has(code) && !flowCodes.includes(code) && !storedCodes.includes(code),
    );
    expect(uncovered).toEqual([]);
  });
});
