/**
 * Extracts (docs/reference.md, Extracts): extraction configurations, their reads by page or as
 * one streamed file, and the incremental protocol. An incremental configuration answers the rows
 * of its window `[offset, pending)`: the first read after an acknowledgement fixes `pending` at
 * the position under which every row is final (docs/adr/0022-gap-free-extract-offsets.md), every
 * later read answers the same window, and `increment` moves the offset to `pending`. So a
 * consumer that fails before acknowledging reads the same rows again, and no row is answered in
 * two acknowledged windows or in none. A `records` extract names an entity of the configuration
 * stored now: one naming another is refused as a read of that entity's records is (404
 * `entity-not-found`), when it is made or changed and when it is read.
 */
import type { Clock } from '../../lib/clock.js';
import { closestNames, didYouMean } from '../../lib/closest-names.js';
import { AppError } from '../../lib/errors.js';
import { lineRecord } from '../accounting/line-record.js';
import type { PreparedAccountingRevision } from '../accounting/prepare.js';
import type { ConfigurationSnapshots } from '../configuration/snapshot.js';
import { entityKey, type PreparedEntities } from '../entities/prepared-entity.js';
import { headerOf, lineOf, projected } from './encode.js';
import { FIELDS_OF_SOURCE, FILTERS_OF_SOURCE } from './inputs.js';
import type {
  ExtractConfigurationChange,
  ExtractFormat,
  ExtractSource,
  ExtractState,
  ExtractStore,
  NewExtractConfiguration,
  RowKey,
  SourceRow,
  SourceWindow,
  StoredExtractConfiguration,
} from './store.js';

/** Rows per page a caller may ask for. */
export const EXTRACT_PAGE_ROWS_MAX = 1000;
/**
 * Rows per query of a streamed download: large enough that the statements cost little per row,
 * small enough that one SQLite statement holds the event loop for a few milliseconds only.
 */
export const EXTRACT_STREAM_PAGE_ROWS = 2000;

/** Where a page starts: the window's end it belongs to and the key of the last row answered. */
export interface ExtractCursor {
  to: string;
  key: RowKey;
}

/** One page of an extract. */
export interface ExtractPage {
  rows: Record<string, unknown>[];
  next: ExtractCursor | undefined;
}

/** What `increment` did. */
export type IncrementOutcome = 'latest offsets incremented' | 'no extract performed since the last increment';

/** A configuration as the API gives it. */
export type ExtractConfigurationView = Omit<
  StoredExtractConfiguration,
  'ackedPosition' | 'pendingPosition'
> & {
  /** True while a read is waiting for its acknowledgement. */
  pending: boolean;
};

export function viewOf(config: StoredExtractConfiguration): ExtractConfigurationView {
  const { ackedPosition: _acked, pendingPosition, ...rest } = config;
  return { ...rest, pending: pendingPosition !== null };
}

function invalid(path: string, message: string): AppError {
  return new AppError('validation-failed', `${path.slice(path.lastIndexOf('/') + 1)} ${message}`, {
    errors: [{ path, message }],
  });
}

/** The rules that join members of a configuration, checked in this order; the first broken one is thrown. */
function checkConfiguration(config: NewExtractConfiguration): void {
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
function unknownEntityOf(
  config: Pick<NewExtractConfiguration, 'source' | 'filters'>,
  entities: PreparedEntities['entities'],
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

/** The extraction configurations and their reads. */
export class ExtractService {
  readonly #store: ExtractStore;
  readonly #snapshots: ConfigurationSnapshots<PreparedAccountingRevision & PreparedEntities>;
  readonly #clock: Clock;

  constructor(
    store: ExtractStore,
    snapshots: ConfigurationSnapshots<PreparedAccountingRevision & PreparedEntities>,
    clock: Clock,
  ) {
    this.#store = store;
    this.#snapshots = snapshots;
    this.#clock = clock;
  }

  #now(): string {
    return this.#clock.now().toISOString();
  }

  /**
   * Refuses a `records` extract whose entity the configuration stored now does not hold
   * (`entity-not-found`); `members` names the filter at fault for a request that sent it.
   */
  async #checkEntity(
    config: Pick<NewExtractConfiguration, 'source' | 'filters'>,
    members: boolean,
  ): Promise<void> {
    if (config.source !== 'records') return;
    const { prepared } = await this.#snapshots.current();
    const refusal = unknownEntityOf(config, prepared.entities, members);
    if (refusal !== undefined) throw refusal;
  }

  /**
   * Stores a new configuration in Draft. Errors, in this order: `validation-failed`, naming the
   * member; `entity-not-found` for a `records` extract of an entity the configuration does not
   * hold, naming `/filters/namespace` or `/filters/entity`.
   */
  async create(config: NewExtractConfiguration, actor: string): Promise<ExtractConfigurationView> {
    checkConfiguration(config);
    await this.#checkEntity(config, true);
    return viewOf(await this.#store.create(config, actor, this.#now()));
  }

  /** One configuration. Errors: `not-found`. */
  async get(id: number): Promise<StoredExtractConfiguration> {
    const config = await this.#store.find(id);
    if (config === undefined) throw new AppError('not-found', `no extraction configuration ${id}`);
    return config;
  }

  /** The configurations in `state` by id, after id `after`. */
  async list(
    state: ExtractState,
    after: number,
    limit: number,
  ): Promise<{ rows: ExtractConfigurationView[]; next: number | undefined }> {
    const rows = await this.#store.list(state, after, limit);
    const kept = rows.slice(0, limit);
    return { rows: kept.map(viewOf), next: rows.length > limit ? kept.at(-1)?.id : undefined };
  }

  /**
   * Changes a configuration. State moves Draft → Active, Active → Inactive and Inactive → Active
   * (its offset kept); nothing returns to Draft. Source, filters and `incremental` change only in
   * Draft: they decide which rows the offset counts. Errors: `not-found`; `conflict` for a
   * transition or a change its state refuses; `validation-failed` and `entity-not-found` as
   * `create`, the second when the change names the source or the filters.
   */
  async update(
    id: number,
    change: ExtractConfigurationChange,
    actor: string,
  ): Promise<ExtractConfigurationView> {
    const config = await this.get(id);
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
    // A change of name or state leaves the entity to the reads, which refuse it if it is gone.
    if (change.source !== undefined || change.filters !== undefined) await this.#checkEntity(changed, true);
    const updated = await this.#store.update(id, change, actor, this.#now());
    if (updated === undefined) throw new AppError('not-found', `no extraction configuration ${id}`);
    return viewOf(updated);
  }

  /** Deletes a configuration, its offsets and its executions. Errors: `not-found`. */
  async delete(id: number): Promise<void> {
    if (!(await this.#store.delete(id))) throw new AppError('not-found', `no extraction configuration ${id}`);
  }

  /**
   * The Active configuration `id`, as every read takes it. Errors, in this order: `not-found`;
   * `conflict` when it is not Active; `entity-not-found` for a `records` extract whose entity the
   * configuration stored now does not hold (removed since it was made), as a read of that
   * entity's records answers.
   */
  async active(id: number): Promise<StoredExtractConfiguration> {
    const config = await this.get(id);
    if (config.state !== 'Active')
      throw new AppError(
        'conflict',
        `extraction configuration ${id} is ${config.state}: only an Active one is read`,
      );
    await this.#checkEntity(config, false);
    return config;
  }

  /**
   * The window a read of `config` answers: the pending one of an incremental configuration
   * (fixed now when none is), or everything final now for another. `cursorTo`, the window end a
   * page cursor carries, must be the pending one. Errors: `validation-failed` naming `after` for
   * the cursor of an acknowledged or other window.
   */
  async window(config: StoredExtractConfiguration, cursorTo?: string): Promise<SourceWindow> {
    if (!config.incremental) {
      const from = this.#store.startPosition;
      if (config.source === 'balances') return { from, to: from };
      return { from, to: cursorTo ?? (await this.#store.boundNow(config.source)) };
    }
    let pending = config.pendingPosition;
    if (pending === null) {
      if (cursorTo !== undefined) throw staleCursor();
      pending =
        (await this.#store.fixPending(config.id, config.source, this.#now()))?.pendingPosition ?? null;
      if (pending === null) throw new AppError('not-found', `no extraction configuration ${config.id}`);
    } else if (cursorTo !== undefined && cursorTo !== pending) throw staleCursor();
    return { from: config.ackedPosition, to: pending };
  }

  /**
   * A page of the extract of the Active configuration `id`, after `after` (the first page when
   * undefined), as records of its fields. Errors: as `active` and `window`.
   */
  async page(id: number, after: ExtractCursor | undefined, limit: number): Promise<ExtractPage> {
    const config = await this.active(id);
    const window = await this.window(config, after?.to);
    const shaper = await this.#shaper(config.source);
    const { rows, keys } = await this.#store.readRows(
      config.source,
      config.filters,
      window,
      after?.key,
      limit,
    );
    const kept = rows.slice(0, limit).map((row) => projected(shaper(row), config.fields));
    const last = keys[kept.length - 1];
    return {
      rows: kept,
      next: rows.length > limit && last !== undefined ? { to: window.to, key: last } : undefined,
    };
  }

  /**
   * The first `limit` rows a read of configuration `id` would answer now, in any state, without
   * fixing a pending read: for the administration interface's preview. Errors: `not-found`.
   */
  async preview(id: number, limit: number): Promise<Record<string, unknown>[]> {
    const config = await this.get(id);
    const from = config.incremental ? config.ackedPosition : this.#store.startPosition;
    const to =
      config.source === 'balances'
        ? from
        : (config.pendingPosition ?? (await this.#store.boundNow(config.source)));
    const shaper = await this.#shaper(config.source);
    const { rows } = await this.#store.readRows(
      config.source,
      config.filters,
      { from, to },
      undefined,
      limit,
    );
    return rows.slice(0, limit).map((row) => projected(shaper(row), config.fields));
  }

  /** The fields a CSV extract of `config` has, in order. */
  async fieldsOf(config: StoredExtractConfiguration): Promise<readonly string[]> {
    if (config.fields !== null) return config.fields;
    const known = FIELDS_OF_SOURCE[config.source];
    if (known !== null) return known;
    // Only journal lines reach here: records without fields are refused for CSV.
    const definition = (await this.#snapshots.current()).prepared.accounting.journalDefinition;
    return [...definition.fields.map((field) => field.name), 'drCr'];
  }

  /**
   * The extract of `config` in `window` as text, header first, from `after` on: one query of
   * `EXTRACT_STREAM_PAGE_ROWS` rows at a time, each yielded as one chunk with the key of its last
   * row, so memory stays flat at any size and a caller can resume after it.
   */
  async *lines(
    config: StoredExtractConfiguration,
    window: SourceWindow,
    format: ExtractFormat,
    after?: RowKey,
  ): AsyncGenerator<{ text: string; rows: number; last: RowKey | undefined }> {
    const fields = await this.fieldsOf(config);
    if (after === undefined && format === 'csv')
      yield { text: headerOf(format, fields), rows: 0, last: undefined };
    const shaper = await this.#shaper(config.source);
    let key = after;
    for (;;) {
      const { rows, keys } = await this.#store.readRows(
        config.source,
        config.filters,
        window,
        key,
        EXTRACT_STREAM_PAGE_ROWS,
      );
      const kept = rows.slice(0, EXTRACT_STREAM_PAGE_ROWS);
      if (kept.length === 0) return;
      let text = '';
      for (const row of kept) text += lineOf(format, projected(shaper(row), config.fields), fields);
      key = keys[kept.length - 1];
      yield { text, rows: kept.length, last: key };
      if (rows.length <= EXTRACT_STREAM_PAGE_ROWS) return;
    }
  }

  /**
   * Acknowledges the pending read of the incremental configuration `id`: its offset moves to the
   * end of that read. Errors: `not-found`; `extract-not-incremental` for another configuration.
   */
  async increment(id: number): Promise<IncrementOutcome> {
    const config = await this.get(id);
    if (!config.incremental)
      throw new AppError('extract-not-incremental', `extraction configuration ${id} is not incremental`);
    return (await this.#store.acknowledge(id, this.#now()))
      ? 'latest offsets incremented'
      : 'no extract performed since the last increment';
  }

  /** How a stored row of `source` becomes a record: journal lines are rebuilt with the current journal definition. */
  async #shaper(source: ExtractSource): Promise<(row: SourceRow) => Record<string, unknown>> {
    const definition =
      source === 'journal-lines'
        ? (await this.#snapshots.current()).prepared.accounting.journalDefinition
        : undefined;
    return (row) => {
      switch (row.kind) {
        case 'journal':
          return { ...row.journal };
        case 'line': {
          if (definition === undefined) throw new Error('a journal line read without a journal definition');
          // A new object per line, given `drCr` in place rather than copied: a million-line
          // download makes a million of them.
          const record = lineRecord(definition, row.journal, row.line);
          // Debit lines are positive, credit lines negative (docs/domain/accounting.md).
          record.drCr = row.line.amount.startsWith('-') ? 'CR' : 'DR';
          return record;
        }
        case 'values':
          return row.values;
      }
    };
  }
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
