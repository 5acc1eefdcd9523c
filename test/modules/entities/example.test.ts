import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Configuration } from '../../../src/modules/configuration/model.js';
import { type EntityDefinition, FIELD_TYPES } from '../../../src/modules/entities/entity.js';
import { exampleChunk } from '../../../src/modules/entities/example.js';
import { entitiesOf, exampleSamplesOf } from '../../../src/modules/entities/from-configuration.js';
import { compileRecordValidator } from '../../../src/modules/entities/record-validator.js';

const realistic = (
  JSON.parse(
    readFileSync(new URL('../../fixtures/configuration.realistic.json', import.meta.url), 'utf8'),
  ) as {
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

function expectAccepted(entity: EntityDefinition, record: Record<string, unknown>): void {
  const result = compileRecordValidator(entity).validate(record);
  expect(result.ok ? [] : result.errors).toEqual([]);
}

describe('exampleChunk', () => {
  it('sets every attribute of every type, and the validator accepts it as it is', () => {
    const chunk = exampleChunk(everyType);
    const [record] = chunk.data;
    expect(chunk.chunkName).toBe('example-everything');
    expect(Object.keys(record)).toEqual(everyType.attributes.map((attribute) => attribute.name));
    expect(record).toMatchObject({
      aDECIMAL: '1234.50',
      aDATE: '2026-01-31',
      aUUID: '3f2b8c1e-7d4a-4f6b-9c2e-1a5d8e0f7b3c',
      listTEXT: [expect.any(String)],
      listLIST: [[expect.any(String)]],
    });
    expectAccepted(everyType, record);
  });

  it('is accepted for every entity of a realistic configuration', () => {
    for (const entity of entitiesOf(realistic)) {
      expectAccepted(entity, exampleChunk(entity).data[0]);
      expectAccepted(entity, exampleChunk(entity, exampleSamplesOf(realistic, entity)).data[0]);
    }
  });

  it('gives plausible values to the ledger entities', () => {
    const entities = entitiesOf(realistic);
    const businessEvent = entities.find((entity) => entity.kind === 'businessEvent');
    const journal = entities.find((entity) => entity.kind === 'journal');
    if (businessEvent === undefined || journal === undefined) throw new Error('ledger entities missing');
    const [event] = exampleChunk(businessEvent, exampleSamplesOf(realistic, businessEvent)).data;
    expect(event).toMatchObject({
      eventType: realistic.businessEventTypes[0]?.name,
      effectiveDate: '2026-01-31',
      amount: '1234.50',
      currency: 'EUR',
      legalEntity: realistic.nodes[0]?.fields.legalEntity,
      branch: realistic.nodes[0]?.fields.branch,
    });
    const [line] = exampleChunk(journal, exampleSamplesOf(realistic, journal)).data;
    expect(line).toMatchObject({
      journalType: realistic.journalTypes[0]?.code,
      accountingConfig: realistic.accountingConfigurations[0]?.name,
      transactionAmount: '1234.50',
      transactionCurrency: 'EUR',
    });
    expect(line).not.toHaveProperty('journalId');
  });
});
