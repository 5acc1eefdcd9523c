import type { Configuration } from '../configuration/model.js';
import { runnableFlows } from '../configuration/runnable-flows.js';
import type { EntityDefinition } from './entity.js';
import { entitiesOf } from './from-configuration.js';
import { compileRecordValidator, type RecordValidator } from './record-validator.js';

/** An ingestion target with its compiled validator. */
export interface PreparedEntity {
  definition: EntityDefinition;
  validator: RecordValidator;
  /**
   * True when accepted records of this entity wait for processing: business events and journals
   * for the accounting engine, records of an entity a published flow reads for that flow.
   * Records of entities nothing consumes count as processed on arrival (docs/reference.md,
   * Sessions).
   */
  awaitsProcessing: boolean;
}

/** What the entities module reads of a prepared configuration revision. */
export interface PreparedEntities {
  revision: number;
  /** Keyed by {@link entityKey}. */
  entities: ReadonlyMap<string, PreparedEntity>;
}

/** The key of an entity in `PreparedEntities.entities`. */
export function entityKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/**
 * Compiles the validator of every ingestion target of a configuration, keyed by
 * {@link entityKey}. Throws when a validator cannot be compiled (the upload then fails).
 */
export function prepareEntities(configuration: Configuration): Map<string, PreparedEntity> {
  const entities = new Map<string, PreparedEntity>();
  const flowInputs = new Set(
    runnableFlows(configuration).map((f) => entityKey(f.input.source.namespace, f.input.source.name)),
  );
  for (const definition of entitiesOf(configuration)) {
    const key = entityKey(definition.namespace, definition.name);
    entities.set(key, {
      definition,
      validator: compileRecordValidator(definition),
      awaitsProcessing: definition.kind !== 'user' || flowInputs.has(key),
    });
  }
  return entities;
}
