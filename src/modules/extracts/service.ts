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
import { AppError } from '../../lib/errors.js';
import { lineRecord } from '../accounting/line-record.js';
import type { PreparedAccountingRevision } from '../accounting/prepare.js';
import type { ChangeOptions, ChangeRunner, Outcome } from '../changes/runner.js';
import type { ConfigurationSnapshots } from '../configuration/snapshot.js';
import type { PreparedEntities } from '../entities/prepared-entity.js';
import { headerOf, lineOf, projected } from './encode.js';
import {
  configurationChanges,
  type ExtractChangeTables,
  type ExtractConfigurationView,
  type IncrementOutcome,
  viewOf,
} from './extract-changes.js';
import { FIELDS_OF_SOURCE } from './inputs.js';
import { activeOf, type EntitiesNow, windowOf } from './rules.js';
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

export {
  type ExtractConfigurationView,
  type IncrementOutcome,
  viewOf,
} from './extract-changes.js';

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

/**
 * The extraction configurations and their reads. Every change (a configuration made, changed or
 * deleted, an increment) runs through the change runner (`extract-changes.ts`), with its audit
 * entry, its `Idempotency-Key` and its dry run.
 */
export class ExtractService {
  readonly #store: ExtractStore;
  readonly #runner: ChangeRunner<ExtractChangeTables>;
  readonly #snapshots: ConfigurationSnapshots<PreparedAccountingRevision & PreparedEntities>;
  readonly #clock: Clock;

  constructor(
    store: ExtractStore,
    runner: ChangeRunner<ExtractChangeTables>,
    snapshots: ConfigurationSnapshots<PreparedAccountingRevision & PreparedEntities>,
    clock: Clock,
  ) {
    this.#store = store;
    this.#runner = runner;
    this.#snapshots = snapshots;
    this.#clock = clock;
  }

  #now(): string {
    return this.#clock.now().toISOString();
  }

  /** The entities of the configuration stored now, which a `records` extract must name. */
  async entitiesNow(): Promise<EntitiesNow> {
    return (await this.#snapshots.current()).prepared.entities;
  }

  /**
   * Stores a new configuration in Draft. Errors, in this order: `validation-failed`, naming the
   * member; `entity-not-found` for a `records` extract of an entity the configuration does not
   * hold, naming `/filters/namespace` or `/filters/entity`.
   */
  async create(
    config: NewExtractConfiguration,
    options: ChangeOptions,
  ): Promise<Outcome<ExtractConfigurationView>> {
    const entities = config.source === 'records' ? await this.entitiesNow() : undefined;
    return this.#runner.run(configurationChanges.createConfiguration, { config, entities }, options);
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
    options: ChangeOptions,
  ): Promise<Outcome<ExtractConfigurationView>> {
    const names = change.source !== undefined || change.filters !== undefined;
    const entities = names ? await this.entitiesNow() : undefined;
    return this.#runner.run(configurationChanges.updateConfiguration, { id, change, entities }, options);
  }

  /** Deletes a configuration, its offsets and its executions. Errors: `not-found`. */
  delete(id: number, options: ChangeOptions): Promise<Outcome<{ id: number }>> {
    return this.#runner.run(configurationChanges.deleteConfiguration, { id }, options);
  }

  /**
   * The Active configuration `id`, as every read takes it. Errors, in this order: `not-found`;
   * `conflict` when it is not Active; `entity-not-found` for a `records` extract whose entity the
   * configuration stored now does not hold (removed since it was made), as a read of that
   * entity's records answers.
   */
  async active(id: number): Promise<StoredExtractConfiguration> {
    const config = await this.#store.find(id);
    const records = config?.state === 'Active' && config.source === 'records';
    return activeOf(id, config, records ? await this.entitiesNow() : undefined);
  }

  /**
   * The window a read of `config` answers: the pending one of an incremental configuration
   * (fixed now when none is), or everything final now for another. `cursorTo`, the window end a
   * page cursor carries, must be the pending one. Errors: `validation-failed` naming `after` for
   * the cursor of an acknowledged or other window.
   */
  window(config: StoredExtractConfiguration, cursorTo?: string): Promise<SourceWindow> {
    return windowOf(this.#store, config, this.#now(), cursorTo);
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
   * end of that read (audited; an acknowledgement that moves nothing is not). Errors:
   * `not-found`; `extract-not-incremental` for another configuration.
   */
  increment(id: number, options: ChangeOptions): Promise<Outcome<IncrementOutcome>> {
    return this.#runner.run(configurationChanges.increment, { id }, options);
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
