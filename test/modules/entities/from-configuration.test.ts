import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { emptyConfiguration } from '../../../src/modules/configuration/document.js';
import { type Configuration, PRIMITIVE_TYPE_NAMES } from '../../../src/modules/configuration/model.js';
import type { EntityDefinition } from '../../../src/modules/entities/entity.js';
import { entitiesOf } from '../../../src/modules/entities/from-configuration.js';

const realistic = (
  JSON.parse(readFileSync(new URL('../../../docs/examples/configuration.json', import.meta.url), 'utf8')) as {
    configuration: Configuration;
  }
).configuration;

function find(entities: EntityDefinition[], namespace: string, name: string): EntityDefinition {
  const entity = entities.find((candidate) => candidate.namespace === namespace && candidate.name === name);
  if (entity === undefined) throw new Error(`no entity ${namespace}/${name}`);
  return entity;
}

function summary(entity: EntityDefinition): string[] {
  return entity.attributes.map(
    (attribute) =>
      `${attribute.name}:${attribute.type}${attribute.elementType ? `<${attribute.elementType}>` : ''}${attribute.mandatory ? '!' : '?'}`,
  );
}

describe('entitiesOf', () => {
  it('has no entity for an empty configuration', () => {
    expect(entitiesOf(emptyConfiguration())).toEqual([]);
  });

  it('lists user entities first, then the ledger entities', () => {
    expect(
      entitiesOf(realistic).map((entity) => `${entity.namespace}/${entity.name}:${entity.kind}`),
    ).toEqual([
      'loans/loanTransaction:user',
      'ledger/businessEvent:businessEvent',
      'ledger/businessEventRollback:businessEventRollback',
      'ledger/journal:journal',
    ]);
  });

  it('gives ledger/businessEventRollback the attributes and mandatory flags of ledger/businessEvent', () => {
    const entities = entitiesOf(realistic);
    expect(summary(find(entities, 'ledger', 'businessEventRollback'))).toEqual(
      summary(find(entities, 'ledger', 'businessEvent')),
    );
  });

  it('maps user entity attributes in configured order, with typeName normalized', () => {
    const entity = find(entitiesOf(realistic), 'loans', 'loanTransaction');
    expect(entity).toMatchObject({
      description: 'Transactions of the loan servicing system',
      temporalityType: 'Transaction',
      type: 'DefinedEntity',
    });
    expect(summary(entity)).toEqual([
      'transactionId:UUID!',
      'transactionType:TEXT!',
      'valueDate:DATE!',
      'bookedAt:DATETIME?',
      'amount:DECIMAL!',
      'currency:TEXT!',
      'legalEntity:TEXT!',
      'branch:TEXT!',
      'productCode:TEXT!',
      'installmentNumber:INTEGER?',
      'restructured:BOOLEAN?',
      'tags:LIST<TEXT>?',
    ]);
    expect(entity.attributes[0]?.label).toBe('Transaction id');
  });

  it('defaults a missing mandatory flag to optional, a missing label to the name and elementType to TEXT', () => {
    const configuration: Configuration = {
      ...emptyConfiguration(),
      entities: [
        {
          name: 'e',
          namespace: 'ns',
          temporalityType: 'Transaction',
          type: 'DefinedEntity',
          attributes: [
            { name: 'list', type: { typeName: 'ListType' } },
            { name: 'amounts', mandatory: true, type: { typeName: 'ListType', elementType: 'amount' } },
          ],
        },
      ],
    };
    expect(find(entitiesOf(configuration), 'ns', 'e').attributes).toEqual([
      { name: 'list', label: 'list', mandatory: false, type: 'LIST', elementType: 'TEXT' },
      { name: 'amounts', label: 'amounts', mandatory: true, type: 'LIST', elementType: 'DECIMAL' },
    ]);
  });

  it('maps a type the same whether written in the canonical form or as shorthand', () => {
    const attributes = PRIMITIVE_TYPE_NAMES.flatMap((primitive) => [
      { name: `${primitive}-canonical`, type: { typeName: 'PrimitiveType' as const, primitive } },
      { name: `${primitive}-shorthand`, type: { typeName: primitive } },
      {
        name: `${primitive}-list`,
        type: {
          typeName: 'ListType' as const,
          elementType: { typeName: 'PrimitiveType' as const, primitive },
        },
      },
      {
        name: `${primitive}-list-shorthand`,
        type: { typeName: 'ListType' as const, elementType: primitive },
      },
    ]);
    const configuration: Configuration = {
      ...emptyConfiguration(),
      entities: [
        { name: 'e', namespace: 'ns', temporalityType: 'Transaction', type: 'DefinedEntity', attributes },
      ],
    };
    const mapped = find(entitiesOf(configuration), 'ns', 'e').attributes;
    for (const primitive of PRIMITIVE_TYPE_NAMES) {
      const of = (name: string) => mapped.find((a) => a.name === `${primitive}-${name}`);
      expect(of('canonical')?.type).toBe(of('shorthand')?.type);
      expect(of('list')).toMatchObject({ type: 'LIST', elementType: of('shorthand')?.type });
      expect(of('list-shorthand')?.elementType).toBe(of('shorthand')?.type);
    }
    expect(mapped.find((a) => a.name === 'AMOUNT-canonical')?.type).toBe('DECIMAL');
  });

  it('makes event_type, effective_date and node attributes of ledger/businessEvent mandatory', () => {
    expect(summary(find(entitiesOf(realistic), 'ledger', 'businessEvent'))).toEqual([
      'eventType:TEXT!',
      'effectiveDate:DATE!',
      'amount:DECIMAL?',
      'currency:TEXT?',
      'legalEntity:TEXT!',
      'branch:TEXT!',
      'productCode:TEXT?',
    ]);
  });

  it('leaves system-filled journal roles out of ledger/journal and marks the sender roles', () => {
    expect(summary(find(entitiesOf(realistic), 'ledger', 'journal'))).toEqual([
      'coreDate:DATE!',
      'journalType:TEXT!',
      'accountingConfig:TEXT!',
      'account:TEXT!',
      'transactionAmount:DECIMAL!',
      'transactionCurrency:TEXT!',
      'originJournalId:TEXT!',
      'originJournalLineId:TEXT?',
      'legalEntity:TEXT!',
      'branch:TEXT!',
      'productCode:TEXT?',
    ]);
  });

  it('leaves out a ledger entity whose definition is inactive', () => {
    const configuration: Configuration = {
      ...realistic,
      businessEventDefinition: { ...realistic.businessEventDefinition, active: false },
    };
    expect(entitiesOf(configuration).map((entity) => entity.name)).toEqual(['loanTransaction', 'journal']);
  });
});
