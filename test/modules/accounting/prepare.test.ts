import { describe, expect, it } from 'vitest';
import { nodeKeyOf, prepareAccounting } from '../../../src/modules/accounting/prepare.js';
import { testConfiguration } from '../../scenarios/accounting-fixture.js';

describe('prepareAccounting', () => {
  const prepared = prepareAccounting(testConfiguration());

  it('builds the lookup tables once', () => {
    expect(prepared.eventTypeAttribute).toBe('eventType');
    expect(prepared.nodeAttributes).toEqual(['legalEntity']);
    expect(prepared.eventTypes.has('SALE')).toBe(true);
    expect(prepared.nodesByKey.get(nodeKeyOf({ legalEntity: 'NL01' }))?.timeZone).toBe('Europe/Amsterdam');
    expect(prepared.componentsByEventType.get('SALE')?.map((reference) => reference.code)).toEqual([
      'SALE_IFRS',
      'SALE_LOCAL',
      'SALE_TAX',
    ]);
    expect(
      prepared.componentsByEventType.get('SALE')?.[0]?.component?.patterns.map((pattern) => pattern.account),
    ).toEqual(['1100 Receivables', '8000 Revenue']);
    expect(prepared.journalTypes.get('ACR')).toEqual({ code: 'ACR', reversing: true, reversalOffsetDays: 1 });
    expect(prepared.journalDefinition.fieldByRole.get('transactionAmount')).toBe('amount');
    expect(prepared.journalDefinition.nodeFields).toEqual(['legalEntity']);
    expect(prepared.postingDateOverride).toBe(true);
    expect(prepared.accountingConfigs.get('IFRS')?.fiscalCalendar?.name).toBe('CALENDAR_YEAR');
  });

  it('keys nodes by sorted field names', () => {
    expect(nodeKeyOf({ b: '2', a: '1' })).toBe(nodeKeyOf({ a: '1', b: '2' }));
    expect(nodeKeyOf({ a: '1', b: '2' })).not.toBe(nodeKeyOf({ a: '12' }));
  });

  it('is total on an empty configuration', () => {
    const empty = prepareAccounting({
      accountLookups: [],
      accountingConfigurations: [],
      businessCalendars: [],
      businessDateSettings: {},
      businessEventDefinition: {},
      businessEventTypes: [],
      dimensionSets: [],
      entities: [],
      featureFlags: {},
      fiscalCalendars: [],
      flows: [],
      journalDefinition: {},
      journalTypes: [],
      nodeValues: [],
      nodes: [],
      postingComponentIdentifications: [],
      postingComponents: [],
    });
    expect(empty.eventTypeAttribute).toBeUndefined();
    expect(empty.businessDateShiftDays).toBe(0);
    expect(empty.postingDateOverride).toBe(false);
  });
});
