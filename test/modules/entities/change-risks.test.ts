import { describe, expect, it } from 'vitest';
import type { Configuration } from '../../../src/modules/configuration/model.js';
import { storedDataRisksOf } from '../../../src/modules/entities/change-risks.js';
import { realisticConfiguration } from '../../helpers/fixtures.js';

function realistic(): Configuration {
  return realisticConfiguration().configuration as unknown as Configuration;
}

function loans(c: Configuration) {
  const entity = c.entities[0];
  if (entity === undefined) throw new Error('the fixture has a loan entity');
  return entity;
}

/** Which changes could break stored data, and which test of the store tells (the store's answers are tested per dialect). */
describe('the risks of a change for the stored data', () => {
  it('finds none in an unchanged configuration, nor in rule changes, new entities and optional attributes', () => {
    expect(storedDataRisksOf(realistic(), realistic())).toEqual([]);
    const safe = realistic();
    safe.accountLookups = [];
    safe.flows = [];
    loans(safe).attributes.push({ name: 'note', type: { typeName: 'TEXT' } });
    for (const attribute of loans(safe).attributes) attribute.mandatory = false;
    safe.entities.push({ ...loans(safe), name: 'other' });
    expect(storedDataRisksOf(realistic(), safe)).toEqual([]);
  });

  it('asks about records for each entity change that tightens', () => {
    const changed = realistic();
    const attributes = loans(changed).attributes;
    attributes.push({ name: 'required', mandatory: true, type: { typeName: 'TEXT' } });
    const risks = storedDataRisksOf(realistic(), changed);
    expect(risks).toEqual([
      {
        path: `/entities/0/attributes/${attributes.length - 1}`,
        reason: expect.stringContaining('new and mandatory'),
        test: { kind: 'records', namespace: 'loans', entity: 'loanTransaction' },
      },
    ]);
  });

  it('treats the two spellings of one type as one type', () => {
    const shorthand = realistic();
    for (const attribute of loans(shorthand).attributes) {
      if (attribute.type.typeName === 'PrimitiveType' && attribute.type.primitive !== undefined)
        attribute.type = { typeName: attribute.type.primitive };
    }
    expect(storedDataRisksOf(realistic(), shorthand)).toEqual([]);
  });

  it('asks about ledger entities switched off, and about journals for a column field changed', () => {
    const changed = realistic();
    changed.businessEventDefinition = { ...changed.businessEventDefinition, active: false };
    const fields = changed.journalDefinition.fields ?? [];
    const account = fields.findIndex((f) => f.name === 'account');
    const field = fields[account];
    if (field === undefined) throw new Error('the fixture has an account field');
    field.type = 'integer';
    const risks = storedDataRisksOf(realistic(), changed);
    expect(risks).toContainEqual({
      path: '/businessEventDefinition',
      reason: expect.stringContaining('ledger/businessEvent'),
      test: { kind: 'records', namespace: 'ledger', entity: 'businessEvent' },
    });
    expect(risks).toContainEqual({
      path: `/journalDefinition/fields/${account}/type`,
      reason: expect.stringContaining('stored journals'),
      test: { kind: 'journals' },
    });
  });
});
