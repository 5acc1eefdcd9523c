import { describe, expect, it } from 'vitest';
import { prepareAccounting } from '../../../src/modules/accounting/prepare.js';
import { emptyConfiguration } from '../../../src/modules/configuration/document.js';
import {
  isColumnRole,
  isMandatorySenderRole,
  JOURNAL_FIELD_ROLES,
  JOURNAL_ROLES,
} from '../../../src/modules/configuration/journal-roles.js';
import { type Configuration, JournalFieldSchema } from '../../../src/modules/configuration/model.js';
import { entitiesOf } from '../../../src/modules/entities/from-configuration.js';

/** A journal definition with one field of every role, named after it, and one field without. */
function everyRoleConfiguration(): Configuration {
  return {
    ...emptyConfiguration(),
    journalDefinition: {
      active: true,
      fields: [
        ...JOURNAL_FIELD_ROLES.map((role) => ({ name: role, role, type: 'text' as const })),
        { name: 'note', type: 'text' as const },
      ],
    },
  };
}

describe('the journal roles table', () => {
  it('says who supplies each role as the direct-journal rules do', () => {
    const system = JOURNAL_FIELD_ROLES.filter((role) => JOURNAL_ROLES[role].supplier === 'system');
    expect(system.sort()).toEqual(
      ['ingestionId', 'journalId', 'journalLineNo', 'lineId', 'reversedBy', 'reverses'].sort(),
    );
    expect(JOURNAL_FIELD_ROLES.filter((role) => isMandatorySenderRole(role)).sort()).toEqual(
      [
        'account',
        'accountingConfig',
        'coreDate',
        'journalType',
        'node',
        'originJournalId',
        'transactionAmount',
        'transactionCurrency',
      ].sort(),
    );
  });

  it('is the list of roles the configuration model admits', () => {
    const role = JournalFieldSchema.properties.role as unknown as { enum: string[] };
    expect(role.enum).toEqual([...JOURNAL_FIELD_ROLES]);
  });

  it('makes the ledger/journal entity: sender roles as its fields, mandatory as the table says', () => {
    const journal = entitiesOf(everyRoleConfiguration()).find((entity) => entity.name === 'journal');
    expect(
      journal?.attributes.map((attribute) => `${attribute.name}${attribute.mandatory ? '!' : '?'}`),
    ).toEqual([
      'coreDate!',
      'journalType!',
      'accountingConfig!',
      'account!',
      'transactionAmount!',
      'transactionCurrency!',
      'originJournalId!',
      'originJournalLineId?',
      'node!',
      'note?',
    ]);
  });

  it('keeps in a stored line record only the fields no column holds', () => {
    const { journalDefinition } = prepareAccounting(everyRoleConfiguration());
    const kept = journalDefinition.plan.extraFields.map((field) => field.name);
    expect(kept).toEqual(['originJournalLineId', 'note']);
    expect(JOURNAL_FIELD_ROLES.filter((role) => !isColumnRole(role))).toEqual(['originJournalLineId']);
  });
});
