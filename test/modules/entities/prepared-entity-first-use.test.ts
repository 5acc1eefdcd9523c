import { describe, expect, it } from 'vitest';
import { validateConfiguration } from '../../../src/composition/configuration-checks.js';
import { prepareEntities } from '../../../src/modules/entities/prepared-entity.js';
import { largeConfiguration } from '../../helpers/large-configuration.js';

describe('prepareEntities', () => {
  it('compiles an entity validator when it is first read, once for the revision', () => {
    const checked = validateConfiguration(largeConfiguration(2));
    if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
    const entities = [...prepareEntities(checked.document.configuration).values()];
    expect(entities.length).toBeGreaterThan(2);
    for (const entity of entities) {
      // Compiled by a getter, not when the revision is prepared.
      expect(typeof Object.getOwnPropertyDescriptor(entity, 'validator')?.get).toBe('function');
      const first = entity.validator;
      expect(first.entity).toBe(entity.definition);
      expect(entity.validator).toBe(first);
    }
  });
});
