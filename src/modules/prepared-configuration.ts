import { type PreparedAccounting, prepareAccounting } from './accounting/prepare.js';
import type { StoredConfiguration } from './configuration/store.js';
import type { EntityDefinition } from './entities/entity.js';
import { entitiesOf } from './entities/from-configuration.js';
import { compileRecordValidator, type RecordValidator } from './entities/record-validator.js';

/** An ingestion target with its compiled validator. */
export interface PreparedEntity {
  definition: EntityDefinition;
  validator: RecordValidator;
  /**
   * True when accepted records of this entity wait for the accounting engine; records of
   * entities nothing consumes count as processed on arrival (docs/reference.md, Sessions).
   */
  awaitsProcessing: boolean;
}

/** Everything derived from one configuration revision, made once per upload (issue 3). */
export interface PreparedConfiguration {
  revision: number;
  entities: ReadonlyMap<string, PreparedEntity>;
  accounting: PreparedAccounting;
}

/** The key of an entity in `PreparedConfiguration.entities`. */
export function entityKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/**
 * Compiles the validators of every entity and the accounting lookup tables of a stored
 * configuration. Throws when the configuration cannot be prepared (the upload then fails).
 */
export function prepareConfiguration(stored: StoredConfiguration): PreparedConfiguration {
  const entities = new Map<string, PreparedEntity>();
  for (const definition of entitiesOf(stored.configuration)) {
    entities.set(entityKey(definition.namespace, definition.name), {
      definition,
      validator: compileRecordValidator(definition),
      awaitsProcessing: definition.kind !== 'user',
    });
  }
  return { revision: stored.revision, entities, accounting: prepareAccounting(stored.configuration) };
}
