import { type PreparedAccountingRevision, prepareAccounting } from '../modules/accounting/prepare.js';
import type { StoredConfiguration } from '../modules/configuration/store.js';
import { type PreparedEntities, prepareEntities } from '../modules/entities/prepared-entity.js';
import { type PreparedFlows, prepareFlows } from '../modules/flows/plan.js';

/**
 * Everything derived from one configuration revision, made once per upload and shared through
 * `ConfigurationSnapshots`: the entity validators and the accounting lookup tables. Each module
 * declares the part it reads (`PreparedEntities`, `PreparedAccountingRevision`); only this
 * composition knows them all, so no module imports another module's preparation.
 */
export interface PreparedConfiguration extends PreparedEntities, PreparedAccountingRevision, PreparedFlows {}

/**
 * Compiles the validators of every entity and the accounting lookup tables of a stored
 * configuration. Throws when the configuration cannot be prepared (the upload then fails).
 */
export function prepareConfiguration(stored: StoredConfiguration): PreparedConfiguration {
  return {
    revision: stored.revision,
    entities: prepareEntities(stored.configuration),
    accounting: prepareAccounting(stored.configuration),
    flows: prepareFlows(stored.configuration),
  };
}

/**
 * Prepares a configuration completely, every entity validator compiled, as an upload must before
 * it is stored; throws what the preparation throws. Runs where the upload is read (a worker thread
 * for a large one), so the event loop later prepares the stored revision with the validators
 * compiled on first use.
 */
export function checkPreparation(stored: StoredConfiguration): void {
  const prepared = prepareConfiguration(stored);
  for (const entity of prepared.entities.values()) {
    // Reading the validator compiles it (`prepareEntities`).
    if (entity.validator.entity !== entity.definition)
      throw new Error(`no validator for ${entity.definition.name}`);
  }
}
