import { describe, expect, it } from 'vitest';
import {
  CONFIGURATION_DIFF_CHANGES_MAX,
  diffConfigurations,
  pointerToken,
} from '../../../src/modules/configuration/diff.js';
import { emptyConfiguration } from '../../../src/modules/configuration/document.js';
import type { Configuration } from '../../../src/modules/configuration/model.js';

function withFlags(flags: Record<string, boolean>): Configuration {
  return { ...emptyConfiguration(), featureFlags: flags };
}

const text = { typeName: 'TEXT' } as const;

function entity(name: string, attributes: string[]): Configuration['entities'][number] {
  return {
    name,
    namespace: 'ns',
    temporalityType: 'Transaction',
    type: 'DefinedEntity',
    attributes: attributes.map((a) => ({ name: a, type: text })),
  };
}

describe('the diff of two configurations', () => {
  it('escapes pointer tokens as RFC 6901 says', () => {
    expect(pointerToken('a/b~c')).toBe('a~1b~0c');
    const diff = diffConfigurations(withFlags({}), withFlags({ 'x/y~z': true }));
    expect(diff.changes).toEqual([{ path: '/featureFlags/x~1y~0z', kind: 'added', new: true }]);
  });

  it('matches named elements by name: a reorder is no change, a rename is a removal and an addition', () => {
    const from = { ...emptyConfiguration(), entities: [entity('a', ['x', 'y']), entity('b', ['z'])] };
    const reordered = { ...emptyConfiguration(), entities: [entity('b', ['z']), entity('a', ['y', 'x'])] };
    expect(diffConfigurations(from, reordered).changes).toEqual([]);
    const renamed = { ...emptyConfiguration(), entities: [entity('b', ['z']), entity('c', ['x', 'y'])] };
    expect(diffConfigurations(from, renamed).changes).toEqual([
      { path: '/entities/0', kind: 'removed', old: entity('a', ['x', 'y']) },
      { path: '/entities/1', kind: 'added', new: entity('c', ['x', 'y']) },
    ]);
    const changed = {
      ...emptyConfiguration(),
      entities: [entity('b', ['z']), { ...entity('a', ['x', 'y']), description: 'now described' }],
    };
    expect(diffConfigurations(from, changed).changes).toEqual([
      { path: '/entities/1/description', kind: 'added', new: 'now described' },
    ]);
  });

  it('compares unnamed lists position by position', () => {
    const node = (tz: string) => ({ fields: { legalEntity: 'L' }, timeZone: tz, nodeConfigs: [] });
    const from = { ...emptyConfiguration(), nodes: [node('UTC')] };
    const to = { ...emptyConfiguration(), nodes: [node('Europe/Amsterdam'), node('UTC')] };
    expect(diffConfigurations(from, to).changes).toEqual([
      { path: '/nodes/0/timeZone', kind: 'changed', old: 'UTC', new: 'Europe/Amsterdam' },
      { path: '/nodes/1', kind: 'added', new: node('UTC') },
    ]);
  });

  it('stops at the most changes it lists and says so', () => {
    const many = Object.fromEntries(
      Array.from({ length: CONFIGURATION_DIFF_CHANGES_MAX + 5 }, (_, i) => [`f${i}`, true]),
    );
    const diff = diffConfigurations(withFlags({}), withFlags(many));
    expect(diff.changes).toHaveLength(CONFIGURATION_DIFF_CHANGES_MAX);
    expect(diff.truncated).toBe(true);
  });
});
