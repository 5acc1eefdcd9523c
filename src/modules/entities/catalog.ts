import type { Clock } from '../../lib/clock.js';
import { closestNames, didYouMean } from '../../lib/closest-names.js';
import { AppError } from '../../lib/errors.js';
import type { PreparedAccountingRevision } from '../accounting/prepare.js';
import type { ConfigurationSnapshots } from '../configuration/snapshot.js';
import type { EntityDefinition } from './entity.js';
import { type ExampleChunk, exampleChunk, examplePlanOf } from './example.js';
import { entityKey, type PreparedEntities, type PreparedEntity } from './prepared-entity.js';

/**
 * The entity metadata, read from the prepared configuration of the current revision:
 * namespaces, entities, one entity's ordered attributes, and an example chunk. An unknown
 * namespace or entity is a 404 that offers the closest configured names.
 */
export class EntityCatalog {
  readonly #snapshots: ConfigurationSnapshots<PreparedEntities & PreparedAccountingRevision>;
  readonly #clock: Clock;
  readonly #businessDatePinned: string | undefined;

  /**
   * `clock` and `businessDatePinned` (`BUSINESS_DATE`) date the examples at the business date,
   * as processing computes it.
   */
  constructor(
    snapshots: ConfigurationSnapshots<PreparedEntities & PreparedAccountingRevision>,
    clock: Clock,
    businessDatePinned: string | undefined,
  ) {
    this.#snapshots = snapshots;
    this.#clock = clock;
    this.#businessDatePinned = businessDatePinned;
  }

  async #all(): Promise<PreparedEntity[]> {
    return [...(await this.#snapshots.current()).prepared.entities.values()];
  }

  /** Namespace names in first-seen order. */
  async namespaces(): Promise<string[]> {
    return namespacesOf(await this.#all());
  }

  /** Entities of a namespace. Errors: `not-found` for a namespace with no entity. */
  async entities(namespace: string): Promise<EntityDefinition[]> {
    const all = await this.#all();
    const found = all.filter((entity) => entity.definition.namespace === namespace);
    if (found.length === 0) throw unknownNamespace('not-found', namespace, all);
    return found.map((entity) => entity.definition);
  }

  /**
   * One entity with its validator, of the current revision, or of the revision prepared last
   * with `latest` (`ConfigurationSnapshots.latest`: for a write that checks the revision itself).
   * Errors: `entity-not-found`, offering the closest names.
   */
  async entity(
    namespace: string,
    name: string,
    snapshot: 'current' | 'latest' = 'current',
  ): Promise<PreparedEntity & { revision: number }> {
    const { prepared } =
      snapshot === 'latest' ? await this.#snapshots.latest() : await this.#snapshots.current();
    return { ...findEntity(prepared, namespace, name), revision: prepared.revision };
  }

  /**
   * An example chunk body of the entity, which the chunk endpoint accepts as it is and which,
   * for the ledger entities, processing turns into journals (see `examplePlanOf`). Errors:
   * `entity-not-found`.
   */
  async example(namespace: string, name: string): Promise<ExampleChunk> {
    const { stored, prepared } = await this.#snapshots.current();
    const { definition } = findEntity(prepared, namespace, name);
    const clock = {
      now: this.#clock.now(),
      ...(this.#businessDatePinned === undefined ? {} : { businessDatePinned: this.#businessDatePinned }),
    };
    return exampleChunk(
      definition,
      examplePlanOf(stored.configuration, prepared.accounting, definition, clock),
    );
  }
}

function namespacesOf(entities: readonly PreparedEntity[]): string[] {
  return [...new Set(entities.map((entity) => entity.definition.namespace))];
}

function unknownNamespace(
  code: 'not-found' | 'entity-not-found',
  namespace: string,
  all: readonly PreparedEntity[],
): AppError {
  const suggestions = closestNames(namespace, namespacesOf(all));
  return new AppError(code, `no namespace ${namespace}.${didYouMean(suggestions)}`, { suggestions });
}

function findEntity(prepared: PreparedEntities, namespace: string, name: string): PreparedEntity {
  const entity = prepared.entities.get(entityKey(namespace, name));
  if (entity !== undefined) return entity;
  const all = [...prepared.entities.values()];
  const inNamespace = all.filter((candidate) => candidate.definition.namespace === namespace);
  if (inNamespace.length === 0) throw unknownNamespace('entity-not-found', namespace, all);
  const suggestions = closestNames(
    name,
    inNamespace.map((candidate) => candidate.definition.name),
  );
  throw new AppError(
    'entity-not-found',
    `no entity ${name} in namespace ${namespace}.${didYouMean(suggestions)}`,
    { suggestions },
  );
}
