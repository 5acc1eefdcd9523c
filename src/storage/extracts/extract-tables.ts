/**
 * The extract tables a change writes (`ExtractTables`), over the change runner's transaction
 * (`storage/changes/change-store.ts`): configurations made, changed and deleted, offsets fixed and
 * moved by the same conditional single statements a read takes (`extract-store.ts`), and the
 * executions a trigger queues. Rows only; the runner writes the audit entry and keeps the answer.
 */
import type { Kysely } from 'kysely';
import type { ExtractTables } from '../../modules/extracts/store.js';
import type { Database } from '../schema.js';
import type { DialectAdapter } from '../store.js';
import { insertExecution } from './execution-store.js';
import { extractConfigurationsIn, extractOffsetsIn } from './extract-store.js';

/** The extract tables in the transaction `trx`. */
export function extractTablesIn(trx: Kysely<Database>, adapter: DialectAdapter): ExtractTables {
  const { create, find, update, delete: remove } = extractConfigurationsIn(trx, adapter);
  const { startPosition, boundNow, fixPending, acknowledge } = extractOffsetsIn(trx, adapter);
  return {
    startPosition,
    create,
    find,
    update,
    delete: remove,
    boundNow,
    fixPending,
    acknowledge,
    insertExecution: (execution) => insertExecution(trx, execution),
  };
}
