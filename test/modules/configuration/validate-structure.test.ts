import { describe, expect, it } from 'vitest';
import {
  ENGINE,
  errorsAfter,
  errorsOf,
  expectOnly,
  FLOW,
  get,
  INPUT,
  PROCESSOR,
  remove,
  SCRIPT,
  set,
} from './fixture-edits.js';

describe('validateConfiguration: version', () => {
  it('reports a missing version with the supported versions', () => {
    expectOnly(
      errorsAfter((d) => remove(d, '/version')),
      '/version',
      /is required.*v20230211/,
    );
  });

  it('reports an unknown version with the supported versions', () => {
    expectOnly(
      errorsAfter((d) => set(d, '/version', 'v1')),
      '/version',
      /unsupported version.*v20230211/,
    );
  });

  it('reports a non-string version once', () => {
    expectOnly(
      errorsAfter((d) => set(d, '/version', 20230211)),
      '/version',
      /supported versions: v20230211/,
    );
  });
});

describe('validateConfiguration: structure', () => {
  it('rejects a body that is not an object', () => {
    expectOnly(errorsOf([]), '', 'must be an object');
  });

  it('reports an unknown section', () => {
    expectOnly(
      errorsAfter((d) => set(d, '/configuration/ledgers', [])),
      '/configuration/ledgers',
      /unknown member: not a configuration section/,
    );
  });

  it('reports unknown members at every level', () => {
    const errors = errorsAfter((d) => {
      set(d, '/extra', 1);
      set(d, '/configuration/journalTypes/0/colour', 'red');
      set(d, `${FLOW}/nodes/${SCRIPT}/step/language`, 'js');
    });
    expect(errors).toEqual([
      { path: '/extra', message: 'unknown member' },
      { path: `${FLOW}/nodes/${SCRIPT}/step/language`, message: 'unknown member' },
      { path: '/configuration/journalTypes/0/colour', message: 'unknown member' },
    ]);
  });

  it('reports a missing required member at its own path', () => {
    expectOnly(
      errorsAfter((d) => remove(d, '/configuration/postingComponents/3/journalType')),
      '/configuration/postingComponents/3/journalType',
      'is required',
    );
  });

  it.each([
    ['/configuration/businessDateSettings/businessDateShift', '1', 'must be an integer'],
    ['/configuration/nodes', 'all', 'must be an array'],
    ['/configuration/featureFlags/flow', 'yes', 'must be a boolean'],
    [`${FLOW}/nodes/${INPUT}/x`, '80', 'must be a number'],
    ['/configuration/fiscalCalendars/0/startYear', 2024.5, 'must be an integer'],
    ['/configuration/nodes/0/fields/branch', 7, 'must be a string'],
    ['/configuration/businessEventDefinition', [], 'must be an object'],
    ['/configuration/dimensionSets/0/attributes/0', '', 'must not be empty'],
    ['/configuration/nodes/0/nodeConfigs/0/graceDays', -1, 'must be >= 0'],
    [`${FLOW}/nodes/${ENGINE}/step/mapping/0/source/path`, [], 'must have at least 1 item(s)'],
  ])('reports a wrong type at %s', (path, value, message) => {
    expectOnly(
      errorsAfter((d) => set(d, path, value)),
      path,
      message,
    );
  });

  it('rejects a date that is not a real calendar day', () => {
    expectOnly(
      errorsAfter((d) => set(d, '/configuration/businessCalendars/0/effectiveFrom', '2026-02-30')),
      '/configuration/businessCalendars/0/effectiveFrom',
      'must be a real calendar day in the form YYYY-MM-DD',
    );
    expectOnly(
      errorsAfter((d) => set(d, '/configuration/fiscalCalendars/1/endOfFirstYear', '31-12-2024')),
      '/configuration/fiscalCalendars/1/endOfFirstYear',
      /real calendar day/,
    );
  });

  it('rejects a bad downloadTime', () => {
    expectOnly(
      errorsAfter((d) => set(d, '/downloadTime', 'yesterday')),
      '/downloadTime',
      /seconds, nanos/,
    );
  });

  it('rejects flow node ids that are not UUIDs', () => {
    const errors = errorsAfter((d) => {
      set(d, `${FLOW}/nodes/step-1`, get(d, `${FLOW}/nodes/${PROCESSOR}`));
      remove(d, `${FLOW}/nodes/${PROCESSOR}`);
      set(d, `${FLOW}/edges/${ENGINE}/0`, 'step-1');
    });
    expect(errors).toEqual([
      { path: `${FLOW}/edges/${ENGINE}/0`, message: 'must be a UUID' },
      { path: `${FLOW}/nodes/step-1`, message: 'member name must be a UUID' },
    ]);
  });

  it('escapes ~ and / in paths (RFC 6901)', () => {
    expectOnly(
      errorsAfter((d) => set(d, '/configuration/featureFlags/a~1b~0c', 'on')),
      '/configuration/featureFlags/a~1b~0c',
      'must be a boolean',
    );
  });
});

describe('validateConfiguration: enumerated fields', () => {
  const step = `${FLOW}/nodes`;
  it.each([
    ['/configuration/journalTypes/0/behavior', 'PERMANENT, REVERSING'],
    ['/configuration/journalTypes/1/reversingDate', 'NEXT_DAY'],
    ['/configuration/postingComponents/0/postingPatterns/1/debitCredit', 'DR, CR'],
    ['/configuration/postingComponents/0/postingPatterns/1/amountSignage', 'AUTO, POS, NEG'],
    [
      '/configuration/businessEventDefinition/attributes/6/role',
      'event_type, effective_date, attribute, node',
    ],
    ['/configuration/businessEventDefinition/attributes/6/type', 'text, date, decimal'],
    ['/configuration/journalDefinition/fields/3/role', 'coreDate, journalType, accountingConfig'],
    ['/configuration/journalDefinition/fields/3/type', 'date, text, amount, uuid, integer'],
    ['/configuration/flows/0/versionStatus', 'Draft, Published'],
    ['/configuration/entities/0/attributes/0/type/typeName', 'PrimitiveType, ListType, TEXT, text, DATE'],
    ['/configuration/entities/0/attributes/11/type/elementType', 'TEXT, text, DATE'],
    ['/configuration/fiscalCalendars/0/type', 'gregorian'],
    ['/configuration/nodes/0/nodeConfigs/0/overridePostingDate', 'none, firstOpenPeriod'],
    ['/configuration/businessCalendars/0/status', 'ACTIVE, INACTIVE'],
    [`${step}/${ENGINE}/step/mapping/0/source/group`, 'INPUT, SCRIPT'],
    [`${step}/${SCRIPT}/step/outputDefinition/0/type/primitive`, 'TEXT, DATE'],
  ])('rejects an unknown value at %s', (path, allowed) => {
    const errors = errorsAfter((d) => set(d, path, 'BOGUS'));
    expect(errors).toHaveLength(1);
    expect(errors[0]?.path).toBe(path);
    expect(errors[0]?.message).toContain(`must be one of ${allowed}`);
  });

  it('rejects an unknown step type at the step type only', () => {
    expectOnly(
      errorsAfter((d) => set(d, `${step}/${PROCESSOR}/step/type`, 'Printer')),
      `${step}/${PROCESSOR}/step/type`,
      'must be one of Input, Script, AccountingEngine, JournalProcessor',
    );
  });

  it('reports only the errors of the branch the step type selects', () => {
    expectOnly(
      errorsAfter((d) => remove(d, `${step}/${SCRIPT}/step/script`)),
      `${step}/${SCRIPT}/step/script`,
      'is required',
    );
  });

  it('rejects a wrong literal inside a step', () => {
    expectOnly(
      errorsAfter((d) => set(d, `${step}/${SCRIPT}/step/outputDefinition/0/type/type`, 'List')),
      `${step}/${SCRIPT}/step/outputDefinition/0/type/type`,
      'must be Primitive',
    );
  });
});
