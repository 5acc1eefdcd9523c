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
 * The ingestion targets of a configuration, keyed by {@link entityKey}. An entity's validator is
 * compiled when first read and kept with the revision, so that a new revision is ready without
 * compiling thousands of validators in one go on the event loop; an upload compiles them all first,
 * on its worker thread, so a validator that cannot be compiled refuses the upload.
 */
export function prepareEntities(configuration: Configuration): Map<string, PreparedEntity> {
  const entities = new Map<string, PreparedEntity>();
  const flowInputs = new Set(
    runnableFlows(configuration).map((f) => entityKey(f.input.source.namespace, f.input.source.name)),
  );
  for (const definition of entitiesOf(configuration)) {
    const key = entityKey(definition.namespace, definition.name);
    let validator: RecordValidator | undefined;
    entities.set(key, {
      definition,
      get validator() {
        validator ??= compileRecordValidator(definition);
        return validator;
      },
      awaitsProcessing: definition.kind !== 'user' || flowInputs.has(key),
    });
  }
  return entities;
}
