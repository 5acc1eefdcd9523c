import { AppError } from '../../lib/errors.js';
import type { ConfigurationSnapshots } from '../configuration/snapshot.js';
import { entityKey, type PreparedConfiguration, type PreparedEntity } from '../prepared-configuration.js';
import type { EntityDefinition } from './entity.js';
import { type ExampleChunk, exampleChunk } from './example.js';
import { exampleSamplesOf } from './from-configuration.js';

/**
 * The entity metadata of contract 3.1, read from the prepared configuration of the current
 * revision: namespaces, entities, one entity's ordered attributes, and an example chunk.
 */
export class EntityCatalog {
  readonly #snapshots: ConfigurationSnapshots<PreparedConfiguration>;

  constructor(snapshots: ConfigurationSnapshots<PreparedConfiguration>) {
    this.#snapshots = snapshots;
  }

  async #all(): Promise<PreparedEntity[]> {
    return [...(await this.#snapshots.current()).prepared.entities.values()];
  }

  /** Namespace names in first-seen order. */
  async namespaces(): Promise<string[]> {
    return [...new Set((await this.#all()).map((entity) => entity.definition.namespace))];
  }

  /** Entities of a namespace. Errors: `not-found` for a namespace with no entity. */
  async entities(namespace: string): Promise<EntityDefinition[]> {
    const found = (await this.#all()).filter((entity) => entity.definition.namespace === namespace);
    if (found.length === 0) throw new AppError('not-found', `no namespace ${namespace}`);
    return found.map((entity) => entity.definition);
  }

  /** One entity with its validator. Errors: `entity-not-found`. */
  async entity(namespace: string, name: string): Promise<PreparedEntity & { revision: number }> {
    const { prepared } = await this.#snapshots.current();
    const entity = prepared.entities.get(entityKey(namespace, name));
    if (entity === undefined)
      throw new AppError('entity-not-found', `no entity ${name} in namespace ${namespace}`);
    return { ...entity, revision: prepared.revision };
  }

  /** A chunk body with one valid record of the entity, which the chunk endpoint accepts. */
  async example(namespace: string, name: string): Promise<ExampleChunk> {
    const { stored, prepared } = await this.#snapshots.current();
    const entity = prepared.entities.get(entityKey(namespace, name));
    if (entity === undefined)
      throw new AppError('entity-not-found', `no entity ${name} in namespace ${namespace}`);
    return exampleChunk(entity.definition, exampleSamplesOf(stored.configuration, entity.definition));
  }
}
