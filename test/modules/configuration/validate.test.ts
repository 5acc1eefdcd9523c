import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { validateConfiguration } from '../../../src/composition/configuration-checks.js';
import {
  CONFIGURATION_ERRORS_MAX_COUNT,
  type ConfigurationError,
} from '../../../src/modules/configuration/configuration-errors.js';
import { CONFIGURATION_SECTIONS } from '../../../src/modules/configuration/document.js';

const FIXTURE_URL = new URL('../../../docs/examples/configuration.json', import.meta.url);

/** Flow node ids of the fixture's four-step flow. */
const INPUT = '0b6c1b9e-2f4a-4d7e-9a51-3c1f8e2d4a01';
const SCRIPT = '5d2e7c4a-8b1f-4e3a-a6c9-7f0e1d2b3c02';
const ENGINE = '9a4f3e2d-1c0b-4a9e-8d7c-6b5a4f3e2d03';
const PROCESSOR = 'c3d2e1f0-a9b8-4c7d-9e6f-5a4b3c2d1e04';
const FLOW = '/configuration/flows/0/graph';

/** A fresh, mutable copy of the realistic fixture. */
function fixture(): Record<string, unknown> {
  return JSON.parse(readFileSync(FIXTURE_URL, 'utf8')) as Record<string, unknown>;
}

/** Splits an RFC 6901 pointer into unescaped segments. */
function segments(path: string): string[] {
  return path
    .split('/')
    .slice(1)
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** The container of the last segment of `path` and that segment, for editing. */
function parentOf(root: unknown, path: string): [Record<string, unknown> | unknown[], string] {
  const parts = segments(path);
  const last = parts.pop();
  let current: unknown = root;
  for (const part of parts) {
    if (Array.isArray(current)) current = current[Number(part)];
    else if (typeof current === 'object' && current !== null)
      current = (current as Record<string, unknown>)[part];
    else throw new Error(`no value at ${path}`);
  }
  if (last === undefined || typeof current !== 'object' || current === null)
    throw new Error(`bad path ${path}`);
  return [current as Record<string, unknown> | unknown[], last];
}

function get(root: unknown, path: string): unknown {
  const [parent, key] = parentOf(root, path);
  return Array.isArray(parent) ? parent[Number(key)] : parent[key];
}

function set(root: unknown, path: string, value: unknown): void {
  const [parent, key] = parentOf(root, path);
  if (Array.isArray(parent)) parent[Number(key)] = value;
  else parent[key] = value;
}

function remove(root: unknown, path: string): void {
  const [parent, key] = parentOf(root, path);
  if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else delete parent[key];
}

/** Validates and returns the errors, failing the test if the document passed. */
function errorsOf(doc: unknown): ConfigurationError[] {
  const result = validateConfiguration(doc);
  if (result.ok) throw new Error('expected the document to be rejected');
  return result.errors;
}

/** Applies the edit to a fresh fixture and returns the errors. */
function errorsAfter(edit: (doc: Record<string, unknown>) => void): ConfigurationError[] {
  const doc = fixture();
  edit(doc);
  return errorsOf(doc);
}

function expectOnly(errors: ConfigurationError[], path: string, message: string | RegExp): void {
  expect(errors).toHaveLength(1);
  expect(errors[0]?.path).toBe(path);
  expect(errors[0]?.message).toMatch(message);
}

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

  it('reports a duplicate flow name', () => {
    const errors = errorsAfter((d) => {
      const flows = get(d, '/configuration/flows') as unknown[];
      // A draft, so that only the name is at fault (two published flows may not read one entity).
      flows.push({ ...(structuredClone(flows[0]) as object), versionStatus: 'Draft' });
    });
    expectOnly(errors, '/configuration/flows/1/name', /duplicate name/);
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

  it('reports an Input step naming an unknown entity', () => {
    const path = `${FLOW}/nodes/${INPUT}/step/source`;
    const errors = errorsAfter((d) => set(d, `${path}/name`, 'loanTransactions'));
    expect(errors[0]).toEqual({
      path,
      message: expect.stringMatching(/unknown entity "loans\/loanTransactions"/),
    });
  });

  it('accepts an Input step on the built-in ledger entities in a draft flow', () => {
    const doc = fixture();
    set(doc, '/configuration/flows/0/versionStatus', 'Draft');
    set(doc, `${FLOW}/nodes/${INPUT}/step/source`, { namespace: 'ledger', name: 'businessEvent' });
    set(doc, `${FLOW}/nodes/${ENGINE}/step/mapping`, [
      { source: { group: 'INPUT', path: ['amount'] }, target: { path: ['amount'] } },
    ]);
    expect(validateConfiguration(doc)).toMatchObject({ ok: true });
  });

  it('refuses a published flow on a built-in ledger entity: the engine reads those directly', () => {
    const path = `${FLOW}/nodes/${INPUT}/step/source`;
    const errors = errorsAfter((d) => {
      set(d, path, { namespace: 'ledger', name: 'businessEvent' });
      set(d, `${FLOW}/nodes/${ENGINE}/step/mapping`, [
        { source: { group: 'INPUT', path: ['amount'] }, target: { path: ['amount'] } },
      ]);
    });
    expectOnly(errors, path, /a published flow cannot read "ledger\/businessEvent"/);
  });

  it('reports an INPUT mapping path that is not an attribute of the input entity', () => {
    const path = `${FLOW}/nodes/${ENGINE}/step/mapping/2/source/path/0`;
    expectOnly(
      errorsAfter((d) => set(d, path, 'principal')),
      path,
      /"principal" is not an attribute of the input entity "loans\/loanTransaction"/,
    );
  });

  it('reports a SCRIPT mapping path that no upstream Script publishes', () => {
    const path = `${FLOW}/nodes/${ENGINE}/step/mapping/0/source/path/0`;
    expectOnly(
      errorsAfter((d) => set(d, path, 'eventKind')),
      path,
      /outputDefinition of any Script step upstream/,
    );
  });

  it('reports a SCRIPT value published only downstream', () => {
    const errors = errorsAfter((d) => {
      set(d, `${FLOW}/edges`, { [INPUT]: [ENGINE], [ENGINE]: [SCRIPT], [SCRIPT]: [PROCESSOR] });
    });
    expectOnly(errors, `${FLOW}/nodes/${ENGINE}/step/mapping/0/source/path/0`, /upstream/);
  });

  it('reports a mapping target that is not a business event attribute', () => {
    const path = `${FLOW}/nodes/${ENGINE}/step/mapping/6/target/path/0`;
    expectOnly(
      errorsAfter((d) => set(d, path, 'product')),
      path,
      '"product" is not a businessEventDefinition attribute',
    );
  });

  it('refuses a second published flow on the same entity', () => {
    const errors = errorsAfter((d) => {
      const flows = get(d, '/configuration/flows') as unknown[];
      flows.push({ ...(structuredClone(flows[0]) as object), name: 'copy' });
    });
    expectOnly(
      errors,
      '/configuration/flows/1/versionStatus',
      /a second published flow reads "loans\/loanTransaction" \(the first is \/configuration\/flows\/0\)/,
    );
  });

  it('refuses a published flow with a step the Input step does not reach', () => {
    const errors = errorsAfter((d) => set(d, `${FLOW}/edges`, { [INPUT]: [ENGINE], [ENGINE]: [PROCESSOR] }));
    // The script is cut off; the mapping of its output is then also not upstream.
    expect(errors).toContainEqual({
      path: `${FLOW}/nodes/${SCRIPT}`,
      message: 'is not reachable from the Input step, so a published flow would never run it',
    });
  });

  it('refuses a published AccountingEngine step that no JournalProcessor follows', () => {
    const errors = errorsAfter((d) => set(d, `${FLOW}/edges`, { [INPUT]: [SCRIPT], [SCRIPT]: [ENGINE] }));
    expect(errors).toContainEqual({
      path: `${FLOW}/nodes/${ENGINE}/step`,
      message: 'is followed by no JournalProcessor step, so its journals would never be posted',
    });
  });

  it('refuses a published flow without an AccountingEngine step, but keeps such a draft', () => {
    const cut = (d: Record<string, unknown>) => {
      remove(d, `${FLOW}/nodes/${ENGINE}`);
      set(d, `${FLOW}/edges`, { [INPUT]: [SCRIPT], [SCRIPT]: [PROCESSOR] });
    };
    expectOnly(errorsAfter(cut), `${FLOW}/nodes`, /must have an AccountingEngine step/);
    const draft = fixture();
    cut(draft);
    set(draft, '/configuration/flows/0/versionStatus', 'Draft');
    expect(validateConfiguration(draft)).toMatchObject({ ok: true });
  });

  describe('finding 5: flow scripts that could never run are refused at upload', () => {
    const path = `${FLOW}/nodes/${SCRIPT}/step/script`;

    it('a syntax error, with its line and column', () => {
      expectOnly(
        errorsAfter((d) => set(d, path, "const a = 1;\npublish('eventType', a +);")),
        path,
        /^the script does not parse as ECMAScript 2022 at line 2, column 25: Unexpected token$/,
      );
    });

    it('require, process, fetch, timers and console: nothing of the host exists', () => {
      const errors = errorsAfter((d) =>
        set(
          d,
          path,
          "const fs = require('fs');\nprocess.exit(1); fetch('x'); setTimeout(() => 1); console.log(1);",
        ),
      );
      expect(errors.map((e) => e.path)).toEqual(Array(5).fill(path));
      expect(errors[0]?.message).toMatch(
        /^the script uses "require" at line 1, column 12, which does not exist/,
      );
      expect(errors.map((e) => /uses "(\w+)"/.exec(e.message)?.[1])).toEqual([
        'require',
        'process',
        'fetch',
        'setTimeout',
        'console',
      ]);
    });

    it('a misspelt name, while names the script declares itself pass', () => {
      const script =
        'function kind(t) { return t.toLowerCase(); }\nconst { amount } = input;\npublish(kind("x"), amout);';
      expectOnly(
        errorsAfter((d) => set(d, path, script)),
        path,
        /uses "amout" at line 3, column 20/,
      );
    });

    it('also in a draft flow: a configuration holds no script that cannot compile', () => {
      const errors = errorsAfter((d) => {
        set(d, '/configuration/flows/0/versionStatus', 'Draft');
        set(d, path, 'publish(');
      });
      expectOnly(errors, path, /does not parse/);
    });
  });

  it('reports edges that name unknown nodes', () => {
    const unknown = '11111111-2222-4333-8444-555555555555';
    const errors = errorsAfter((d) => {
      set(d, `${FLOW}/edges/${unknown}`, [INPUT]);
      set(d, `${FLOW}/edges/${SCRIPT}/1`, unknown);
    });
    expect(errors).toEqual([
      { path: `${FLOW}/edges/${SCRIPT}/1`, message: expect.stringMatching(/unknown node id/) },
      { path: `${FLOW}/edges/${unknown}`, message: expect.stringMatching(/unknown node id/) },
    ]);
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

  it('rejects a cyclic flow', () => {
    expectOnly(
      errorsAfter((d) => set(d, `${FLOW}/edges/${PROCESSOR}`, [SCRIPT])),
      `${FLOW}/edges`,
      `must be acyclic: cycle ${SCRIPT} -> ${ENGINE} -> ${PROCESSOR} -> ${SCRIPT}`,
    );
  });

  it('rejects a self loop', () => {
    expectOnly(
      errorsAfter((d) => set(d, `${FLOW}/edges/${INPUT}/1`, INPUT)),
      `${FLOW}/edges`,
      /must be acyclic/,
    );
  });

  it('rejects two Input steps', () => {
    const errors = errorsAfter((d) =>
      set(d, `${FLOW}/nodes/${SCRIPT}/step`, get(d, `${FLOW}/nodes/${INPUT}/step`)),
    );
    expect(errors).toEqual([
      {
        path: `${FLOW}/nodes/${SCRIPT}/step/type`,
        message: 'must contain exactly one Input step, found 2: this is an extra one',
      },
      // The replaced Script step published the event type.
      {
        path: `${FLOW}/nodes/${ENGINE}/step/mapping/0/source/path/0`,
        message: expect.stringMatching(/upstream/),
      },
    ]);
  });

  it('rejects a flow without an Input step', () => {
    expectOnly(
      errorsAfter((d) => set(d, `${FLOW}/nodes/${INPUT}/step`, { type: 'JournalProcessor', name: 'x' })),
      `${FLOW}/nodes`,
      'must contain exactly one Input step, found none',
    );
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
