import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { prepareAccounting } from '../../../src/modules/accounting/prepare.js';
import type { Configuration } from '../../../src/modules/configuration/model.js';
import { type EntityDefinition, FIELD_TYPES } from '../../../src/modules/entities/entity.js';
import { exampleChunk, examplePlanOf } from '../../../src/modules/entities/example.js';
import { entitiesOf } from '../../../src/modules/entities/from-configuration.js';
import { compileRecordValidator } from '../../../src/modules/entities/record-validator.js';

const realistic = (
  JSON.parse(readFileSync(new URL('../../../docs/examples/configuration.json', import.meta.url), 'utf8')) as {
    configuration: Configuration;
  }
).configuration;

/** One attribute of every type, mandatory, plus a LIST of each element type. */
const everyType: EntityDefinition = {
  namespace: 'test',
  name: 'everything',
  description: '',
  temporalityType: 'Transaction',
  type: 'DefinedEntity',
  kind: 'user',
  attributes: [
    ...FIELD_TYPES.map((type) => ({ name: `a${type}`, label: type, mandatory: true, type })),
    ...FIELD_TYPES.map((type) => ({
      name: `list${type}`,
      label: `list of ${type}`,
      mandatory: true,
      type: 'LIST' as const,
      elementType: type,
    })),
  ],
};

function expectAccepted(entity: EntityDefinition, record: Record<string, unknown> | undefined): void {
  if (record === undefined) throw new Error('no record');
  const result = compileRecordValidator(entity).validate(record);
  expect(result.ok ? [] : result.errors).toEqual([]);
}

describe('exampleChunk', () => {
  it('sets every attribute of every type, and the validator accepts it as it is', () => {
    const chunk = exampleChunk(everyType, { date: '2026-01-31', records: [{}] });
    const [record] = chunk.data;
    expect(chunk.chunkName).toBe('example-everything');
    expect(chunk.data).toHaveLength(1);
    expect(Object.keys(record ?? {})).toEqual(everyType.attributes.map((attribute) => attribute.name));
    expect(record).toMatchObject({
      aDECIMAL: '1234.50',
      aDATE: '2026-01-31',
      aDATETIME: '2026-01-31T10:15:00Z',
      aUUID: '3f2b8c1e-7d4a-4f6b-9c2e-1a5d8e0f7b3c',
      listTEXT: [expect.any(String)],
      listLIST: [[expect.any(String)]],
    });
    expectAccepted(everyType, record);
  });
});

describe('examplePlanOf', () => {
  const pinned = { now: new Date('2026-11-21T12:00:00Z'), businessDatePinned: '2026-11-20' };
  const ledger = (configuration: Configuration) => {
    const entities = entitiesOf(configuration);
    const businessEvent = entities.find((entity) => entity.kind === 'businessEvent');
    const journal = entities.find((entity) => entity.kind === 'journal');
    if (businessEvent === undefined || journal === undefined) throw new Error('ledger entities missing');
    return { businessEvent, journal, accounting: prepareAccounting(configuration) };
  };

  it('makes examples the validator accepts for every entity of a realistic configuration', () => {
    const accounting = prepareAccounting(realistic);
    for (const entity of entitiesOf(realistic)) {
      for (const record of exampleChunk(entity, examplePlanOf(realistic, accounting, entity, pinned)).data) {
        expectAccepted(entity, record);
      }
    }
  });

  it('dates a business event at its node business date, with an event type that has posting components', () => {
    const { businessEvent, accounting } = ledger(realistic);
    const chunk = exampleChunk(businessEvent, examplePlanOf(realistic, accounting, businessEvent, pinned));
    expect(chunk.data).toEqual([
      {
        eventType: 'LOAN_DISBURSEMENT',
        effectiveDate: '2026-11-20',
        amount: '1234.50',
        currency: 'EUR',
        legalEntity: 'LF_NL',
        branch: 'AMS',
        productCode: 'example productCode',
      },
    ]);
    // Not pinned: Saturday 2026-11-21 in Amsterdam moves to the next working day.
    const [unpinned] = exampleChunk(
      businessEvent,
      examplePlanOf(realistic, accounting, businessEvent, { now: pinned.now }),
    ).data;
    expect(unpinned?.effectiveDate).toBe('2026-11-23');
  });

  it('skips event types without posting components and nodes where they do not post', () => {
    const configuration = structuredClone(realistic);
    configuration.businessEventTypes.unshift({ name: 'NOTHING_TO_POST', description: 'no components' });
    configuration.nodes.unshift({
      fields: { legalEntity: 'LF_XX', branch: 'NONE' },
      timeZone: 'Europe/Paris',
      nodeConfigs: [],
    });
    const { businessEvent, accounting } = ledger(configuration);
    const [event] = exampleChunk(
      businessEvent,
      examplePlanOf(configuration, accounting, businessEvent, pinned),
    ).data;
    expect(event).toMatchObject({ eventType: 'LOAN_DISBURSEMENT', legalEntity: 'LF_NL', branch: 'AMS' });
  });

  it('makes a balanced pair of journal lines on one node, basis, type, currency and date', () => {
    const { journal, accounting } = ledger(realistic);
    const chunk = exampleChunk(journal, examplePlanOf(realistic, accounting, journal, pinned));
    const shared = {
      coreDate: '2026-11-20',
      journalType: 'PERM',
      accountingConfig: 'IFRS',
      transactionCurrency: 'EUR',
      originJournalId: 'EXAMPLE-JOURNAL-1',
      legalEntity: 'LF_NL',
      branch: 'AMS',
    };
    expect(chunk.data).toEqual([
      {
        ...shared,
        account: '1300',
        transactionAmount: '1234.50',
        originJournalLineId: 'EXAMPLE-JOURNAL-1-LINE-1',
        productCode: 'example productCode',
      },
      {
        ...shared,
        account: '2100',
        transactionAmount: '-1234.50',
        originJournalLineId: 'EXAMPLE-JOURNAL-1-LINE-2',
        productCode: 'example productCode',
      },
    ]);
    expect(chunk.data[0]).not.toHaveProperty('journalId');
  });
});
