/**
 * The extracts adapter (`modules/extracts/store.ts`): extraction configurations with their
 * incremental offsets, and the rows of the sources (`source-reads.ts`). Offsets move only by
 * conditional single-statement updates, so several instances sharing one PostgreSQL agree on
 * them without locks held across requests. The statements run on the store (`ExtractStore`, the
 * reads) or in the change runner's transaction (`ExtractTables`, `extract-tables.ts`) alike.
 */
import { type Kysely, type Selectable, sql } from 'kysely';
import type {
  ExtractConfigurationChange,
  ExtractFilters,
  ExtractState,
  ExtractStore,
  ExtractTables,
  NewExtractConfiguration,
  StoredExtractConfiguration,
} from '../../modules/extracts/store.js';
import type { Database } from '../schema.js';
import type { DialectAdapter, Store } from '../store.js';
import type { ExtractionConfigurationsTable } from '../tables/extracts.js';
import { boundExpression, boundOf, readSourceRows, startPositionOf } from './source-reads.js';

function configurationOf(row: Selectable<ExtractionConfigurationsTable>): StoredExtractConfiguration {
  return {
    id: Number(row.id),
    name: row.name,
    description: row.description,
    source: row.source as StoredExtractConfiguration['source'],
    filters: JSON.parse(row.filters) as ExtractFilters,
    fields: row.fields === null ? null : (JSON.parse(row.fields) as string[]),
    format: row.format,
    incremental: Number(row.incremental) === 1,
    state: row.state,
    ackedPosition: row.acked_position,
    pendingPosition: row.pending_position,
    pendingSince: row.pending_since,
    ackedAt: row.acked_at,
    createdAt: row.created_at,
    createdBy: row.created_by,
    updatedAt: row.updated_at,
    updatedBy: row.updated_by,
  };
}

/** The extracts adapter over one store. */
export function createExtractStore(store: Store): ExtractStore {
  const { db, adapter } = store;
  const { find, list } = extractConfigurationsIn(db, adapter);
  const { startPosition, boundNow, fixPending, readRows } = extractOffsetsIn(db, adapter);
  return { find, list, startPosition, boundNow, fixPending, readRows };
}

/** The extraction configurations: made, read, changed and deleted, one statement each, on `db`. */
export function extractConfigurationsIn(
  db: Kysely<Database>,
  adapter: DialectAdapter,
): Pick<ExtractTables, 'create' | 'find' | 'update' | 'delete'> & Pick<ExtractStore, 'list'> {
  return {
    async create(config: NewExtractConfiguration, actor: string, at: string) {
      const row = await db
        .insertInto('extraction_configurations')
        .values({
          name: config.name,
          description: config.description,
          source: config.source,
          filters: JSON.stringify(config.filters),
          fields: config.fields === null ? null : JSON.stringify(config.fields),
          format: config.format,
          incremental: config.incremental ? 1 : 0,
          state: 'Draft',
          acked_position: startPositionOf(adapter),
          pending_position: null,
          pending_since: null,
          acked_at: null,
          created_at: at,
          created_by: actor,
          updated_at: at,
          updated_by: actor,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return configurationOf(row);
    },

    async find(id: number) {
      const row = await db
        .selectFrom('extraction_configurations')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst();
      return row === undefined ? undefined : configurationOf(row);
    },

    async list(state: ExtractState, after: number, limit: number) {
      const rows = await db
        .selectFrom('extraction_configurations')
        .selectAll()
        .where('state', '=', state)
        .where('id', '>', after)
        .orderBy('id')
        .limit(limit + 1)
        .execute();
      return rows.map(configurationOf);
    },

    async update(id: number, change: ExtractConfigurationChange, actor: string, at: string) {
      const row = await db
        .updateTable('extraction_configurations')
        .set({ ...changedColumns(change), updated_at: at, updated_by: actor })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      return row === undefined ? undefined : configurationOf(row);
    },

    async delete(id: number) {
      const result = await db.deleteFrom('extraction_configurations').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}

/** The columns `change` sets: those of the members it has. */
function changedColumns(change: ExtractConfigurationChange) {
  return {
    ...(change.name === undefined ? {} : { name: change.name }),
    ...(change.description === undefined ? {} : { description: change.description }),
    ...(change.source === undefined ? {} : { source: change.source }),
    ...(change.filters === undefined ? {} : { filters: JSON.stringify(change.filters) }),
    ...(change.fields === undefined
      ? {}
      : { fields: change.fields === null ? null : JSON.stringify(change.fields) }),
    ...(change.format === undefined ? {} : { format: change.format }),
    ...(change.incremental === undefined ? {} : { incremental: change.incremental ? 1 : 0 }),
    ...(change.state === undefined ? {} : { state: change.state }),
  };
}

/** The incremental offsets of the configurations (see the header) and the rows of the sources, on `db`. */
export function extractOffsetsIn(
  db: Kysely<Database>,
  adapter: DialectAdapter,
): Pick<ExtractTables, 'startPosition' | 'boundNow' | 'fixPending' | 'acknowledge'> &
  Pick<ExtractStore, 'readRows'> {
  return {
    startPosition: startPositionOf(adapter),

    boundNow: (source) => boundOf(db, adapter, source),

    async fixPending(id, source, at) {
      // One statement: the end is taken in it unless one is pending, so of two readers at once
      // one fixes it and both read it, in one round trip.
      const row = await db
        .updateTable('extraction_configurations')
        .set({
          pending_position: sql<string>`coalesce(pending_position, ${boundExpression(adapter, source)})`,
          pending_since: sql<string>`coalesce(pending_since, ${at})`,
        })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      return row === undefined ? undefined : configurationOf(row);
    },

    async acknowledge(id: number, at: string) {
      // One statement: the offset takes the pending end that the same row holds, so two
      // acknowledgements at once move it once (the second finds nothing pending).
      const result = await db
        .updateTable('extraction_configurations')
        .set((eb) => ({
          acked_position: eb.ref('pending_position').$castTo<string>(),
          pending_position: null,
          pending_since: null,
          acked_at: at,
        }))
        .where('id', '=', id)
        .where('pending_position', 'is not', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    readRows: (source, filters, window, after, limit) =>
      readSourceRows(db, adapter, source, filters, window, after, limit),
  };
}
