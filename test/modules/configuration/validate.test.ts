import { describe, expect, it } from 'vitest';
import { validateConfiguration } from '../../../src/composition/configuration-checks.js';
import { CONFIGURATION_ERRORS_MAX_COUNT } from '../../../src/modules/configuration/configuration-errors.js';
import { CONFIGURATION_SECTIONS } from '../../../src/modules/configuration/document.js';
import {
  ENGINE,
  errorsAfter,
  errorsOf,
  expectOnly,
  FLOW,
  fixture,
  get,
  INPUT,
  PROCESSOR,
  remove,
  set,
} from './fixture-edits.js';

describe('validateConfiguration: accepted documents', () => {
  it('accepts the realistic fixture and returns it with every section', () => {
    const result = validateConfiguration(fixture());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(Object.keys(result.document.configuration)).toEqual([...CONFIGURATION_SECTIONS]);
    expect(result.document).toEqual(fixture());
  });

  it('treats omitted sections as empty', () => {
    const result = validateConfiguration({ version: 'v20230211', configuration: {} });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.document.configuration.postingComponents).toEqual([]);
    expect(result.document.configuration.featureFlags).toEqual({});
    expect(Object.keys(result.document.configuration)).toEqual([...CONFIGURATION_SECTIONS]);
  });

  it('accepts a string downloadTime and optional members left out', () => {
    const doc = fixture();
    set(doc, '/downloadTime', '2026-11-22T10:04:05.123Z');
    remove(doc, '/downloadedBy');
    remove(doc, '/configuration/accountingConfigurations/0/description');
    remove(doc, '/configuration/nodes/0/nodeConfigs/0/graceDays');
    remove(doc, '/configuration/postingComponents/0/postingPatterns/0/amountSignage');
    expect(validateConfiguration(doc).ok).toBe(true);
  });

  it('accepts a leap day and UTC', () => {
    const doc = fixture();
    set(doc, '/configuration/businessCalendars/0/effectiveFrom', '2024-02-29');
    set(doc, '/configuration/nodes/1/timeZone', 'UTC');
    expect(validateConfiguration(doc).ok).toBe(true);
  });
});

describe('validateConfiguration: unique names', () => {
  it.each([
    ['accountLookups', 'postingCode', 1],
    ['accountingConfigurations', 'name', 1],
    ['businessCalendars', 'name', 1],
    ['businessEventTypes', 'name', 1],
    ['dimensionSets', 'name', 1],
    ['fiscalCalendars', 'name', 1],
    ['journalTypes', 'code', 1],
    ['nodeValues', 'fieldName', 1],
    ['postingComponentIdentifications', 'businessEventTypeName', 1],
    ['postingComponents', 'code', 1],
  ])('reports a duplicate in %s', (section, member, index) => {
    const errors = errorsAfter((d) => {
      set(d, `/configuration/${section}/${index}/${member}`, get(d, `/configuration/${section}/0/${member}`));
    });
    const path = `/configuration/${section}/${index}/${member}`;
    const duplicate = errors.find((e) => e.path === path);
    expect(duplicate?.message).toMatch(/^duplicate .*must be unique/);
  });

  it('reports two nodes with the same field values', () => {
    expectOnly(
      errorsAfter((d) => set(d, '/configuration/nodes/1/fields', { branch: 'AMS', legalEntity: 'LF_NL' })),
      '/configuration/nodes/1/fields',
      /duplicate node.*\/configuration\/nodes\/0/,
    );
  });

  it('reports duplicate entities and attribute names', () => {
    const errors = errorsAfter((d) => {
      set(d, '/configuration/entities/0/attributes/1/name', 'transactionId');
      const entities = get(d, '/configuration/entities') as unknown[];
      entities.push({ ...(structuredClone(entities[0]) as object), attributes: [] });
    });
    expect(errors).toEqual([
      {
        path: '/configuration/entities/1/name',
        message: expect.stringMatching(/duplicate entity "loans\/loanTransaction"/),
      },
      {
        path: '/configuration/entities/0/attributes/1/name',
        message: expect.stringMatching(/duplicate attribute name/),
      },
    ]);
  });

  it('reports duplicate journal field names and repeated roles, but allows several node fields', () => {
    const errors = errorsAfter((d) => {
      set(d, '/configuration/journalDefinition/fields/1/name', 'journalId');
      set(d, '/configuration/journalDefinition/fields/2/role', 'account');
    });
    expect(errors.map((e) => e.path)).toEqual([
      '/configuration/journalDefinition/fields/1/name',
      '/configuration/journalDefinition/fields/6/role',
      // The renamed field was the primary key `lineId`.
      '/configuration/journalDefinition/primaryKeys/1',
    ]);
  });
});

describe('validateConfiguration: cross-references', () => {
  it.each([
    ['/configuration/accountingConfigurations/0/businessCalendarName', 'businessCalendars'],
    ['/configuration/accountingConfigurations/1/dimensionSetName', 'dimensionSets'],
    ['/configuration/accountingConfigurations/1/fiscalCalendarName', 'fiscalCalendars'],
    ['/configuration/postingComponents/3/journalType', 'journalTypes'],
    ['/configuration/postingComponents/2/accountingConfigName', 'accountingConfigurations'],
    ['/configuration/postingComponents/4/postingPatterns/1/postingCode', 'accountLookups'],
    ['/configuration/postingComponentIdentifications/2/businessEventTypeName', 'businessEventTypes'],
    [
      '/configuration/postingComponentIdentifications/1/postingComponents/0/postingComponentCode',
      'postingComponents',
    ],
    ['/configuration/nodes/1/nodeConfigs/0/accountingConfigName', 'accountingConfigurations'],
  ])('reports an unresolved %s', (path, section) => {
    expectOnly(
      errorsAfter((d) => set(d, path, 'MISSING')),
      path,
      `must name an existing ${section} entry`,
    );
  });

  it.each(['amountField', 'currencyField', 'postingDateField'])(
    'reports a posting pattern %s that is not a business event attribute',
    (member) => {
      const path = `/configuration/postingComponents/1/postingPatterns/0/${member}`;
      expectOnly(
        errorsAfter((d) => set(d, path, 'missingAttribute')),
        path,
        /must name a businessEventDefinition attribute/,
      );
    },
  );

  it('reports a posting pattern field of the wrong type', () => {
    const path = '/configuration/postingComponents/0/postingPatterns/0/amountField';
    expectOnly(
      errorsAfter((d) => set(d, path, 'currency')),
      path,
      'attribute "currency" must be of type decimal, not text',
    );
  });

  it('reports node field names that are not nodeValues field names', () => {
    const errors = errorsAfter((d) => {
      set(d, '/configuration/businessEventDefinition/attributes/5/role', 'attribute');
      set(d, '/configuration/journalDefinition/fields/15/role', 'node');
      set(d, '/configuration/nodes/0/fields', { legalEntity: 'LF_NL', desk: 'AMS' });
      set(d, '/configuration/nodes/1/fields', { legalEntity: 'LF_US' });
    });
    expect(errors).toEqual([
      {
        path: '/configuration/nodes/0/fields/desk',
        message: expect.stringMatching(/must be a nodeValues fieldName/),
      },
      { path: '/configuration/nodes/0/fields/desk', message: expect.stringMatching(/role node/) },
    ]);
  });

  it('reports node field values that are not among nodeValues values', () => {
    expectOnly(
      errorsAfter((d) => set(d, '/configuration/nodes/1/fields/branch', 'LDN')),
      '/configuration/nodes/1/fields/branch',
      'value "LDN" is not among the nodeValues values of "branch"',
    );
  });

  it('reports a node lacking a node-role attribute of the business event definition', () => {
    expectOnly(
      errorsAfter((d) => set(d, '/configuration/nodes/1/fields', { legalEntity: 'LF_US' })),
      '/configuration/nodes/1/fields',
      'missing node field "branch" (a businessEventDefinition attribute with role node)',
    );
  });

  it('reports primary keys that name no field', () => {
    expectOnly(
      errorsAfter((d) => set(d, '/configuration/journalDefinition/primaryKeys/1', 'lineNumber')),
      '/configuration/journalDefinition/primaryKeys/1',
      /must name a journalDefinition field/,
    );
  });
});

describe('validateConfiguration: rules within a section', () => {
  it('requires reversingDate exactly for REVERSING journal types', () => {
    expectOnly(
      errorsAfter((d) => remove(d, '/configuration/journalTypes/1/reversingDate')),
      '/configuration/journalTypes/1/reversingDate',
      'is required when behavior is REVERSING',
    );
    expectOnly(
      errorsAfter((d) => set(d, '/configuration/journalTypes/0/reversingDate', 'NEXT_DAY')),
      '/configuration/journalTypes/0/reversingDate',
      'is only allowed when behavior is REVERSING',
    );
  });

  it('requires exactly one event_type attribute', () => {
    expectOnly(
      errorsAfter((d) => set(d, '/configuration/businessEventDefinition/attributes/0/role', 'attribute')),
      '/configuration/businessEventDefinition/attributes',
      'must contain exactly one attribute with role event_type',
    );
    expectOnly(
      errorsAfter((d) => set(d, '/configuration/businessEventDefinition/attributes/6/role', 'event_type')),
      '/configuration/businessEventDefinition/attributes/6/role',
      /exactly one attribute with role event_type/,
    );
  });

  it.each(['Mars/Olympus', 'europe/amsterdam', '+01:00', 'CET+1'])('rejects the time zone %s', (zone) => {
    expectOnly(
      errorsAfter((d) => set(d, '/configuration/nodes/1/timeZone', zone)),
      '/configuration/nodes/1/timeZone',
      /is not an IANA time-zone name/,
    );
  });

  it('reserves the ledger namespace and ties elementType to ListType', () => {
    const errors = errorsAfter((d) => {
      set(d, '/configuration/entities/0/namespace', 'ledger');
      set(d, '/configuration/entities/0/attributes/0/type/elementType', 'TEXT');
    });
    expect(errors.map((e) => e.path)).toEqual([
      '/configuration/entities/0/namespace',
      '/configuration/entities/0/attributes/0/type/elementType',
      `${FLOW}/nodes/${INPUT}/step/source`,
    ]);
  });
});

describe('validateConfiguration: many faults at once', () => {
  it('reports every fault of a document together, structure first', () => {
    const errors = errorsAfter((d) => {
      remove(d, '/version');
      set(d, '/configuration/journalTypes/0/behavior', 'SOMETIMES');
      set(d, '/configuration/businessCalendars/1/effectiveTo', '2026-02-30');
      set(d, '/configuration/postingComponents/3/accountingConfigName', 'US_GAAP');
      set(d, '/configuration/nodes/0/timeZone', 'Europe/Amsterdamm');
      set(d, `${FLOW}/edges/${PROCESSOR}`, [INPUT]);
    });
    expect(errors).toEqual([
      { path: '/version', message: expect.stringContaining('v20230211') },
      {
        path: '/configuration/businessCalendars/1/effectiveTo',
        message: expect.stringMatching(/calendar day/),
      },
      { path: '/configuration/journalTypes/0/behavior', message: 'must be one of PERMANENT, REVERSING' },
      { path: `${FLOW}/edges`, message: expect.stringMatching(/must be acyclic/) },
      { path: '/configuration/nodes/0/timeZone', message: expect.stringMatching(/IANA/) },
      {
        path: '/configuration/postingComponents/3/accountingConfigName',
        message: expect.stringMatching(/US_GAAP/),
      },
    ]);
  });

  it('checks the references of an element whose other members are faulty', () => {
    const errors = errorsAfter((d) => {
      set(d, '/configuration/journalTypes/0', { code: 'PERM', behavior: 'PERMANENT', extra: true });
      set(d, '/configuration/postingComponents/0/journalType', 'NOPE');
    });
    expect(errors.map((e) => e.path)).toEqual([
      '/configuration/journalTypes/0/extra',
      '/configuration/postingComponents/0/journalType',
    ]);
  });

  it('reports the structural and the reference faults of every element and section in one answer', () => {
    const errors = errorsAfter((d) => {
      // Structural faults, in four sections.
      set(d, '/configuration/journalTypes/1/behavior', 'SOMETIMES');
      set(d, '/configuration/postingComponents/1/description', 5);
      set(d, '/configuration/postingComponents/2/postingPatterns/0/debitCredit', 'LEFT');
      set(d, '/configuration/nodes/0/nodeConfigs/0/graceDays', -1);
      set(d, '/configuration/entities/0/attributes/1/type/primitive', 'TXT');
      // Reference faults: some in the elements above, some in other elements and sections.
      set(d, '/configuration/postingComponents/1/journalType', 'NOPE');
      set(d, '/configuration/postingComponents/2/postingPatterns/1/postingCode', 'MISSING');
      set(d, '/configuration/postingComponents/3/accountingConfigName', 'US_GAAP');
      set(d, '/configuration/nodes/0/nodeConfigs/1/accountingConfigName', 'NOWHERE');
      set(
        d,
        '/configuration/postingComponentIdentifications/0/postingComponents/0/postingComponentCode',
        'NONE',
      );
      set(d, '/configuration/accountingConfigurations/1/fiscalCalendarName', 'LUNAR');
      set(d, `${FLOW}/nodes/${ENGINE}/step/mapping/0/target/path/0`, 'eventKind');
    });
    expect(errors).toEqual([
      {
        path: '/configuration/entities/0/attributes/1/type/primitive',
        message: 'must be one of TEXT, DATE, DATETIME, INTEGER, DECIMAL, AMOUNT, BOOLEAN, UUID',
      },
      { path: '/configuration/journalTypes/1/behavior', message: 'must be one of PERMANENT, REVERSING' },
      { path: '/configuration/nodes/0/nodeConfigs/0/graceDays', message: 'must be >= 0' },
      { path: '/configuration/postingComponents/1/description', message: 'must be a string' },
      {
        path: '/configuration/postingComponents/2/postingPatterns/0/debitCredit',
        message: 'must be one of DR, CR',
      },
      {
        path: '/configuration/accountingConfigurations/1/fiscalCalendarName',
        message: expect.stringMatching(/LUNAR/),
      },
      {
        path: `${FLOW}/nodes/${ENGINE}/step/mapping/0/target/path/0`,
        message: expect.stringMatching(/eventKind/),
      },
      {
        path: '/configuration/nodes/0/nodeConfigs/1/accountingConfigName',
        message: expect.stringMatching(/NOWHERE/),
      },
      {
        path: '/configuration/postingComponentIdentifications/0/postingComponents/0/postingComponentCode',
        message: expect.stringMatching(/NONE/),
      },
      { path: '/configuration/postingComponents/1/journalType', message: expect.stringMatching(/NOPE/) },
      {
        path: '/configuration/postingComponents/3/accountingConfigName',
        message: expect.stringMatching(/US_GAAP/),
      },
      {
        path: '/configuration/postingComponents/2/postingPatterns/1/postingCode',
        message: expect.stringMatching(/MISSING/),
      },
    ]);
  });

  it('reports a reference to a name that is itself faulty, since no faulty name can match', () => {
    const errors = errorsAfter((d) => set(d, '/configuration/journalTypes/0/code', ''));
    expect(errors[0]).toEqual({ path: '/configuration/journalTypes/0/code', message: 'must not be empty' });
    expect(errors.slice(1).map((e) => e.message)).not.toHaveLength(0);
    for (const e of errors.slice(1)) {
      expect(e.path).toMatch(/^\/configuration\/postingComponents\/\d+\/journalType$/);
      expect(e.message).toBe('must name an existing journalTypes entry: no code "PERM"');
    }
  });

  it('says nothing about what a faulty member leaves unknown, and never twice about one path', () => {
    // The Input step's type is unreadable: no "found none", no mapping check on its entity.
    expectOnly(
      errorsAfter((d) => set(d, `${FLOW}/nodes/${INPUT}/step/type`, 'Inptu')),
      `${FLOW}/nodes/${INPUT}/step/type`,
      'must be one of Input, Script, AccountingEngine, JournalProcessor',
    );
    // The event_type role is unreadable: no "must contain exactly one attribute with role event_type".
    expectOnly(
      errorsAfter((d) => set(d, '/configuration/businessEventDefinition/attributes/0/role', 'event-type')),
      '/configuration/businessEventDefinition/attributes/0/role',
      /must be one of/,
    );
    // A REVERSING type with a faulty reversingDate: the enumeration error only.
    expectOnly(
      errorsAfter((d) => set(d, '/configuration/journalTypes/1/reversingDate', 'LATER')),
      '/configuration/journalTypes/1/reversingDate',
      'must be one of NEXT_DAY',
    );
    // A list of the wrong type: nothing is checked against its names.
    expectOnly(
      errorsAfter((d) => set(d, '/configuration/businessEventDefinition/attributes', 'all')),
      '/configuration/businessEventDefinition/attributes',
      'must be an array',
    );
    expectOnly(
      errorsAfter((d) => set(d, '/configuration/journalDefinition/fields', {})),
      '/configuration/journalDefinition/fields',
      'must be an array',
    );
    // A whole section of the wrong type: its references are not guessed at.
    expectOnly(
      errorsAfter((d) => set(d, '/configuration/businessEventDefinition', [])),
      '/configuration/businessEventDefinition',
      'must be an object',
    );
  });

  it('caps the list of errors', () => {
    const lookups = Array.from({ length: CONFIGURATION_ERRORS_MAX_COUNT + 5 }, () => ({
      postingCode: '',
      accountLookupPatterns: [],
    }));
    const errors = errorsOf({ version: 'v20230211', configuration: { accountLookups: lookups } });
    expect(errors).toHaveLength(CONFIGURATION_ERRORS_MAX_COUNT + 1);
    expect(errors.at(-1)).toEqual({ path: '', message: expect.stringMatching(/^5 further error/) });
  });
});

describe('validateConfiguration: entity attribute types', () => {
  const attribute = (j: number) => `/configuration/entities/0/attributes/${j}/type`;

  it('accepts the canonical form, the shorthand and both forms of a list element type, mixed', () => {
    const doc = fixture();
    set(doc, attribute(0), { typeName: 'UUID' });
    set(doc, attribute(1), { typeName: 'PrimitiveType', primitive: 'TEXT' });
    set(doc, attribute(4), { typeName: 'PrimitiveType', primitive: 'AMOUNT' });
    set(doc, attribute(9), { typeName: 'integer' });
    set(doc, attribute(11), { typeName: 'ListType', elementType: 'DATE' });
    const result = validateConfiguration(doc);
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.document).toEqual(doc);
    set(doc, attribute(11), {
      typeName: 'ListType',
      elementType: { typeName: 'PrimitiveType', primitive: 'UUID' },
    });
    expect(validateConfiguration(doc).ok).toBe(true);
    set(doc, attribute(11), { typeName: 'ListType' });
    expect(validateConfiguration(doc).ok).toBe(true);
  });

  it('names the path and the allowed values of a wrong primitive', () => {
    expectOnly(
      errorsAfter((d) => set(d, `${attribute(2)}/primitive`, 'TIMESTAMP')),
      `${attribute(2)}/primitive`,
      'must be one of TEXT, DATE, DATETIME, INTEGER, DECIMAL, AMOUNT, BOOLEAN, UUID',
    );
    expectOnly(
      errorsAfter((d) => set(d, `${attribute(11)}/elementType/primitive`, 'text')),
      `${attribute(11)}/elementType/primitive`,
      'must be one of TEXT, DATE, DATETIME, INTEGER, DECIMAL, AMOUNT, BOOLEAN, UUID',
    );
  });

  it('requires primitive exactly with PrimitiveType', () => {
    expectOnly(
      errorsAfter((d) => set(d, attribute(2), { typeName: 'PrimitiveType' })),
      `${attribute(2)}/primitive`,
      'is required when typeName is PrimitiveType; one of TEXT, DATE, DATETIME, INTEGER, DECIMAL, AMOUNT, BOOLEAN, UUID',
    );
    expectOnly(
      errorsAfter((d) => set(d, attribute(2), { typeName: 'DATE', primitive: 'DATE' })),
      `${attribute(2)}/primitive`,
      'is only allowed when typeName is PrimitiveType',
    );
  });

  it('explains an element type that is neither a name nor the canonical object', () => {
    expectOnly(
      errorsAfter((d) => set(d, `${attribute(11)}/elementType`, 7)),
      `${attribute(11)}/elementType`,
      /^must be a type name \(TEXT, text, .*\) or an object \{ "typeName": "PrimitiveType", "primitive" \}$/,
    );
    expectOnly(
      errorsAfter((d) => set(d, `${attribute(11)}/elementType`, { typeName: 'ListType', primitive: 'TEXT' })),
      `${attribute(11)}/elementType/typeName`,
      'must be PrimitiveType',
    );
    expectOnly(
      errorsAfter((d) => set(d, `${attribute(11)}/elementType`, { typeName: 'PrimitiveType' })),
      `${attribute(11)}/elementType/primitive`,
      'is required',
    );
  });
});

describe('validateConfiguration: robustness', () => {
  /** Every JSON Pointer into a value, the value's own ('') excluded. */
  function paths(value: unknown, prefix = ''): string[] {
    if (typeof value !== 'object' || value === null) return [];
    const entries = Array.isArray(value)
      ? value.map((v, i) => [String(i), v] as const)
      : Object.entries(value);
    return entries.flatMap(([key, child]) => {
      const path = `${prefix}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      return [path, ...paths(child, path)];
    });
  }

  it('never throws, whatever member of the document is replaced by whatever value', () => {
    const all = paths(fixture());
    expect(all.length).toBeGreaterThan(300);
    for (const path of all) {
      for (const value of [null, 7, 'x', [], {}, [{}], { typeName: 'PrimitiveType' }]) {
        const doc = fixture();
        set(doc, path, value);
        expect(() => validateConfiguration(doc), `${path} = ${JSON.stringify(value)}`).not.toThrow();
      }
    }
  }, 60_000);
});
