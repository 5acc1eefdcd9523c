import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { validateConfiguration } from '../../../src/composition/configuration-checks.js';
import {
  CONFIGURATION_SECTIONS,
  canonicalConfiguration,
  canonicalConfigurationText,
  emptyConfiguration,
  sectionCounts,
} from '../../../src/modules/configuration/document.js';
import { type Configuration, ConfigurationSchema } from '../../../src/modules/configuration/model.js';

const FIXTURE_URL = new URL('../../../docs/examples/configuration.json', import.meta.url);

function fixtureConfiguration(): Configuration {
  const result = validateConfiguration(JSON.parse(readFileSync(FIXTURE_URL, 'utf8')));
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.document.configuration;
}

/** Reverses the key order of every object, recursively, keeping array order. */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, reversedKeys(v)]),
  );
}

describe('CONFIGURATION_SECTIONS', () => {
  it('lists the sections of the schema in download order', () => {
    expect([...CONFIGURATION_SECTIONS]).toEqual(Object.keys(ConfigurationSchema.properties));
    expect(CONFIGURATION_SECTIONS).toHaveLength(17);
  });
});

describe('emptyConfiguration', () => {
  it('has every section empty and is itself a valid upload', () => {
    const empty = emptyConfiguration();
    expect(Object.keys(empty)).toEqual([...CONFIGURATION_SECTIONS]);
    expect(Object.values(sectionCounts(empty)).every((n) => n === 0)).toBe(true);
    expect(validateConfiguration({ version: 'v20230211', configuration: empty }).ok).toBe(true);
  });

  it('returns a fresh object on every call', () => {
    const a = emptyConfiguration();
    a.nodes.push({ fields: {}, timeZone: 'UTC', nodeConfigs: [] });
    expect(emptyConfiguration().nodes).toEqual([]);
  });
});

describe('sectionCounts', () => {
  it('counts elements, flags and definition objects of the fixture', () => {
    expect(sectionCounts(fixtureConfiguration())).toEqual({
      accountLookups: 5,
      accountingConfigurations: 2,
      businessCalendars: 2,
      businessDateSettings: 1,
      businessEventDefinition: 1,
      businessEventTypes: 3,
      dimensionSets: 2,
      entities: 1,
      featureFlags: 4,
      fiscalCalendars: 2,
      flows: 1,
      journalDefinition: 1,
      journalTypes: 2,
      nodeValues: 2,
      nodes: 2,
      postingComponentIdentifications: 3,
      postingComponents: 6,
    });
  });
});

describe('canonicalConfiguration', () => {
  it('orders sections and members as the schema declares them', () => {
    const canonical = canonicalConfiguration(reversedKeys(fixtureConfiguration()) as Configuration);
    expect(Object.keys(canonical)).toEqual([...CONFIGURATION_SECTIONS]);
    expect(Object.keys(canonical.accountingConfigurations[0] ?? {})).toEqual([
      'name',
      'description',
      'businessCalendarName',
      'dimensionSetName',
      'fiscalCalendarName',
    ]);
    expect(Object.keys(canonical.featureFlags)).toEqual([
      'extracts-in-bulk',
      'flow',
      'flow-assistant',
      'posting-date-override',
    ]);
    expect(Object.keys(canonical.nodes[0]?.fields ?? {})).toEqual(['branch', 'legalEntity']);
    const steps = Object.values(canonical.flows[0]?.graph.nodes ?? {}).map((n) => Object.keys(n.step));
    expect(steps).toContainEqual(['type', 'name', 'script', 'outputDefinition']);
  });

  it('is stable: any key order gives the same serialisation', () => {
    const original = fixtureConfiguration();
    const a = JSON.stringify(canonicalConfiguration(original));
    const b = JSON.stringify(canonicalConfiguration(reversedKeys(original) as Configuration));
    expect(b).toBe(a);
    expect(JSON.stringify(canonicalConfiguration(JSON.parse(a) as Configuration))).toBe(a);
  });

  it('round-trips: the canonical form has the same content and validates again', () => {
    const original = fixtureConfiguration();
    const canonical = canonicalConfiguration(original);
    expect(canonical).toEqual(original);
    const again = validateConfiguration({
      version: 'v20230211',
      configuration: JSON.parse(JSON.stringify(canonical)),
    });
    expect(again.ok).toBe(true);
    if (again.ok) expect(again.document.configuration).toEqual(original);
  });
});

describe('canonicalConfigurationText', () => {
  const joined = (c: Configuration) => [...canonicalConfigurationText(c)].join('');

  it('is JSON.stringify of the canonical form, in any key order, empty sections included', () => {
    const original = fixtureConfiguration();
    expect(joined(original)).toBe(JSON.stringify(canonicalConfiguration(original)));
    expect(joined(reversedKeys(original) as Configuration)).toBe(
      JSON.stringify(canonicalConfiguration(original)),
    );
    expect(joined(emptyConfiguration())).toBe(JSON.stringify(canonicalConfiguration(emptyConfiguration())));
  });

  it('keeps members the schema does not know after the known ones, and leaves out members without a value', () => {
    const odd = { zeta: [1, { b: 2, a: 1 }], ...fixtureConfiguration(), alpha: 'x', nodes: undefined };
    const configuration = odd as unknown as Configuration;
    expect(joined(configuration)).toBe(JSON.stringify(canonicalConfiguration(configuration)));
    expect(joined({} as Configuration)).toBe('{}');
  });

  it('gives at most one section element a piece', () => {
    const original = fixtureConfiguration();
    const pieces = [...canonicalConfigurationText(original)];
    const longest = Math.max(...pieces.map((piece) => piece.length));
    const elements = Object.values(original).flatMap((section) =>
      Array.isArray(section) ? section.map((element) => JSON.stringify(element).length + 2) : [],
    );
    expect(longest).toBeLessThanOrEqual(
      Math.max(...elements, JSON.stringify(original.journalDefinition).length),
    );
  });
});
