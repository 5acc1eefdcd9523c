/**
 * The rules of extraction configurations (docs/reference.md, Extracts), kept by the changes
 * (`extract-changes.ts`) inside the change runner's transaction and by the reads of the service
 * (`service.ts`) alike: the members of a configuration that must agree, the entity a `records`
 * extract names, the transitions of its state, and the window a read or a trigger answers.
 */
import { closestNames, didYouMean } from '../../lib/closest-names.js';
import { AppError } from '../../lib/errors.js';
import { invariant } from '../../lib/invariant.js';
import { entityKey, type PreparedEntities } from '../entities/prepared-entity.js';
import { FIELDS_OF_SOURCE, FILTERS_OF_SOURCE } from './inputs.js';
import type {
  ExtractConfigurationChange,
  ExtractOffsets,
  NewExtractConfiguration,
  SourceWindow,
  StoredExtractConfiguration,
} from './store.js';

/** The entities of the configuration stored now, by `entityKey`. */
export type EntitiesNow = PreparedEntities['entities'];

function invalid(path: string, message: string): AppError {
  return new AppError('validation-failed', `${path.slice(path.lastIndexOf('/') + 1)} ${message}`, {
    errors: [{ path, message }],
  });
}

/** The refusal of a configuration that is not there. */
export function noConfiguration(id: number): AppError {
  return new AppError('not-found', `no extraction configuration ${id}`);
}

/** The rules that join members of a configuration, checked in this order; the first broken one is thrown. */
export function checkConfiguration(config: NewExtractConfiguration): void {
  for (const name of Object.keys(config.filters))
    if (!FILTERS_OF_SOURCE[config.source].includes(name))
      throw invalid(`/filters/${name}`, `is not a filter of source ${config.source}`);
  if (
    config.source === 'records' &&
    (config.filters.namespace === undefined || config.filters.entity === undefined)
  )
    throw invalid('/filters', 'must name namespace and entity for source records');
  if (config.source === 'balances' && config.incremental)
    throw invalid(
      '/incremental',
      'must be false for source balances: balances are a snapshot, changed in place',
    );
  const known = FIELDS_OF_SOURCE[config.source];
  if (known !== null && config.fields !== null)
    for (const [i, field] of config.fields.entries())
      if (!known.includes(field)) throw invalid(`/fields/${i}`, `is not a field of source ${config.source}`);
  if (config.format === 'csv' && config.source === 'records' && config.fields === null)
    throw invalid('/fields', 'must be given for a CSV extract of records: their fields vary');
}

/**
 * The refusal of a `records` extract whose namespace or entity the configuration `entities` does
 * not hold, worded as the entity records read words it (`entity-not-found`, with the closest
 * names), or `undefined` for any other extract. `members` names the filters at fault, for a
 * request that sent them (a creation or a change).
 */
export function unknownEntityOf(
  config: Pick<NewExtractConfiguration, 'source' | 'filters'>,
  entities: EntitiesNow,
  members: boolean,
): AppError | undefined {
  const { namespace, entity } = config.filters;
  if (config.source !== 'records' || namespace === undefined || entity === undefined) return undefined;
  if (entities.has(entityKey(namespace, entity))) return undefined;
  const refusal = (path: string, detail: string, suggestions: string[]) =>
    new AppError('entity-not-found', `the records extract names an unknown entity: ${detail}`, {
      suggestions,
      ...(members
        ? { errors: [{ path, message: 'must name an entity of the configuration stored now' }] }
        : {}),
    });
  const all = [...entities.values()].map((e) => e.definition);
  const inNamespace = all.filter((e) => e.namespace === namespace).map((e) => e.name);
  if (inNamespace.length === 0) {
    const near = closestNames(
      namespace,
      all.map((e) => e.namespace),
    );
    return refusal('/filters/namespace', `no namespace ${namespace}.${didYouMean(near)}`, near);
  }
  const near = closestNames(entity, inNamespace);
  return refusal(
    '/filters/entity',
    `no entity ${entity} in namespace ${namespace}.${didYouMean(near)}`,
    near,
  );
}

/**
 * The configuration `config` becomes with `change`, once its state allows it: state moves
 * Draft → Active, Active → Inactive and Inactive → Active, and source, filters and `incremental`
 * change only in Draft (`conflict` otherwise); then the members must agree (`validation-failed`).
 */
export function changedConfiguration(
  config: StoredExtractConfiguration,
  change: ExtractConfigurationChange,
): NewExtractConfiguration {
  if (change.state !== undefined && change.state !== config.state) {
    const allowed = change.state === 'Active' || (change.state === 'Inactive' && config.state === 'Active');
    if (!allowed)
      throw new AppError(
        'conflict',
        `a configuration in state ${config.state} cannot become ${change.state}`,
        {
          errors: [{ path: '/state', message: `cannot go from ${config.state} to ${change.state}` }],
        },
      );
  }
  if (config.state !== 'Draft')
    for (const member of ['source', 'filters', 'incremental'] as const)
      if (change[member] !== undefined)
        throw new AppError('conflict', `${member} changes only in Draft: make a new configuration`, {
          errors: [{ path: `/${member}`, message: 'changes only while the configuration is in Draft' }],
        });
  const changed: NewExtractConfiguration = {
    name: change.name ?? config.name,
    description: change.description === undefined ? config.description : change.description,
    source: change.source ?? config.source,
    filters: change.filters ?? config.filters,
    fields: change.fields === undefined ? config.fields : change.fields,
    format: change.format ?? config.format,
    incremental: change.incremental ?? config.incremental,
  };
  checkConfiguration(changed);
  return changed;
}

/**
 * The Active configuration `config` (undefined: there is none of id `id`), as every read and
 * trigger takes it. Errors, in this order: `not-found`; `conflict` when it is not Active;
 * `entity-not-found` for a `records` extract whose entity the configuration stored now
 * (`entities`, which a `records` extract needs) does not hold (removed since it was made), as a
 * read of that entity's records answers.
 */
export function activeOf(
  id: number,
  config: StoredExtractConfiguration | undefined,
  entities: EntitiesNow | undefined,
): StoredExtractConfiguration {
  if (config === undefined) throw noConfiguration(id);
  if (config.state !== 'Active')
    throw new AppError(
      'conflict',
      `extraction configuration ${id} is ${config.state}: only an Active one is read`,
    );
  if (config.source === 'records') {
    invariant(entities !== undefined, 'a records extract is checked against the entities stored now', () =>
      String(id),
    );
    const refusal = unknownEntityOf(config, entities, false);
    if (refusal !== undefined) throw refusal;
  }
  return config;
}

/**
 * The window a read or a trigger of `config` answers, over `offsets` (the store's for a read, the
 * change's transaction's for a trigger): the pending one of an incremental configuration (fixed
 * now, at `at`, when none is), or everything final now for another. `cursorTo`, the window end a
 * page cursor carries, must be the pending one. Errors: `validation-failed` naming `after` for
 * the cursor of an acknowledged or other window; `not-found` when the configuration is gone.
 */
export async function windowOf(
  offsets: ExtractOffsets,
  config: StoredExtractConfiguration,
  at: string,
  cursorTo?: string,
): Promise<SourceWindow> {
  if (!config.incremental) {
    const from = offsets.startPosition;
    if (config.source === 'balances') return { from, to: from };
    return { from, to: cursorTo ?? (await offsets.boundNow(config.source)) };
  }
  let pending = config.pendingPosition;
  if (pending === null) {
    if (cursorTo !== undefined) throw staleCursor();
    pending = (await offsets.fixPending(config.id, config.source, at))?.pendingPosition ?? null;
    if (pending === null) throw noConfiguration(config.id);
  } else if (cursorTo !== undefined && cursorTo !== pending) throw staleCursor();
  return { from: config.ackedPosition, to: pending };
}

function staleCursor(): AppError {
  return new AppError(
    'validation-failed',
    'after is the cursor of a read acknowledged since, or of another window',
    {
      errors: [
        { path: '/querystring/after', message: 'must be the next cursor of a page of the pending read' },
      ],
    },
  );
}
