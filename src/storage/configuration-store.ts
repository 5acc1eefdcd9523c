import type { ExpressionBuilder, Kysely, QueryCreator, Transaction } from 'kysely';
import {
  CONFIGURATION_FORMAT_VERSION,
  type Configuration,
  type ConfigurationStore,
  type ConfigurationTables,
  emptyConfiguration,
  type ProcessingDataCounts,
} from '../modules/configuration/store.js';
import {
  countRevisions,
  insertRevision,
  listRevisions,
  readRevisionDocument,
} from './configuration-revisions.js';
import type { Database } from './schema.js';
import { clearStatisticsCounters } from './statistics-counters.js';
import type { DialectAdapter, Store } from './store.js';
import { blockingInTransaction, checkStoredData } from './stored-data-checks.js';

/** The single row that holds the configuration document. */
const CONFIGURATION_ROW_ID = 1;

/**
 * The revision of the stored configuration, 0 before the first upload. Takes a transaction too,
 * so processing can check in its claim's transaction that it works with the current revision.
 */
export async function storedRevision(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('configuration')
    .select('revision')
    .where('id', '=', CONFIGURATION_ROW_ID)
    .executeTakeFirst();
  return row === undefined ? 0 : Number(row.revision);
}

/**
 * The stored revision inside `trx`, held on PostgreSQL until the transaction ends (`FOR SHARE`:
 * an upload waits for the transaction, or the transaction for the upload); 0 before the first
 * upload. On SQLite the transaction is the only writer, so reading is holding.
 */
export async function heldStoredRevision(trx: Kysely<Database>, adapter: DialectAdapter): Promise<number> {
  const row = await adapter
    .forShare(trx.selectFrom('configuration').select('revision').where('id', '=', CONFIGURATION_ROW_ID))
    .executeTakeFirst();
  return Number(row?.revision ?? 0);
}

/**
 * The stored revision as a subquery of the caller's statement (no row before the first upload):
 * read in the snapshot of that statement, for a write that must know the revision it commits
 * under without a statement more (a chunk's write, `chunk-commit.ts`, `chunk-write-postgres.ts`).
 */
export function storedRevisionQuery(qc: QueryCreator<Database>) {
  return qc.selectFrom('configuration').select('revision').where('id', '=', CONFIGURATION_ROW_ID);
}

/** `storedRevisionQuery` as the value `revision` of the caller's statement (null before the first upload). */
export function storedRevisionValue(eb: ExpressionBuilder<Database, 'chunks'>) {
  return eb
    .selectFrom('configuration')
    .select('revision')
    .where('id', '=', CONFIGURATION_ROW_ID)
    .as('revision');
}

/**
 * Counts the processing data in one statement, so that both dialects answer from one snapshot.
 * Chunks and rejected records are not counted: they go with their sessions.
 */
async function countProcessingData(db: Kysely<Database>): Promise<ProcessingDataCounts> {
  const row = await db
    .selectNoFrom((eb) => [
      eb.selectFrom('ingestions').select(eb.fn.countAll().as('n')).as('ingestions'),
      eb.selectFrom('records').select(eb.fn.countAll().as('n')).as('records'),
      eb.selectFrom('journals').select(eb.fn.countAll().as('n')).as('journals'),
      eb.selectFrom('journal_lines').select(eb.fn.countAll().as('n')).as('journalLines'),
      eb.selectFrom('processing_errors').select(eb.fn.countAll().as('n')).as('processingErrors'),
    ])
    .executeTakeFirstOrThrow();
  return {
    ingestions: Number(row.ingestions),
    records: Number(row.records),
    journals: Number(row.journals),
    journalLines: Number(row.journalLines),
    processingErrors: Number(row.processingErrors),
  };
}

/**
 * The configuration port over Kysely. The document is one row, replaced in the change runner's
 * transaction (`configurationTablesIn`) with the wipe of the processing data, the audit entry and
 * the event; on PostgreSQL the row is locked first, so concurrent uploads from several instances
 * apply one after the other and every revision number is used once.
 *
 * Lock order (PostgreSQL), which the chunk claims of processing rely on too
 * (`accounting/claim-postgres.ts`): an upload locks the configuration row, then the chunks
 * table, then the sessions table; a claim locks its chunk row, then its session's row, and
 * never the configuration row (it only reads the revision, after its claim). Chunks before
 * sessions on both sides, so neither deadlocks; and the chunks table lock waits for every
 * claimed chunk, so a claim's revision cannot change before it commits. Changing the order
 * here means changing it there. On SQLite every write transaction holds the one write lock
 * from its start, so there is no order to keep (`accounting/claim-sqlite.ts`).
 *
 * A change that keeps the processing data takes the same locks in the same order: they keep new
 * chunks out while the stored data is checked, and they make a claim in flight finish under the
 * old revision before the new one is stored (or find the new one and start again), so no record
 * is processed twice or lost (`stored-data-checks.ts` says what is read where).
 */
export function createConfigurationStore(store: Store): ConfigurationStore {
  const { db, adapter } = store;
  return {
    async read() {
      const row = await db
        .selectFrom('configuration')
        .selectAll()
        .where('id', '=', CONFIGURATION_ROW_ID)
        .executeTakeFirst();
      if (row === undefined) {
        return {
          revision: 0,
          version: CONFIGURATION_FORMAT_VERSION,
          configuration: emptyConfiguration(),
          updatedAt: null,
          updatedBy: null,
        };
      }
      return {
        revision: Number(row.revision),
        version: row.version,
        configuration: JSON.parse(row.document) as Configuration,
        updatedAt: row.updated_at,
        updatedBy: row.updated_by,
      };
    },

    readRevision() {
      return storedRevision(db);
    },

    countProcessingData() {
      return countProcessingData(db);
    },

    checkStoredData(risks) {
      return checkStoredData(db, adapter, risks);
    },

    listRevisions(start, limit) {
      return listRevisions(db, start, limit);
    },

    countRevisions() {
      return countRevisions(db);
    },

    readRevisionDocument(revision) {
      return readRevisionDocument(db, revision);
    },
  };
}

/**
 * The tables a change of the configuration writes, in the change runner's transaction `trx`:
 * its first step takes the locks in the order of `createConfigurationStore`, which the others
 * keep: the configuration row (`lockedRevision`), then the chunks and sessions tables.
 */
export function configurationTablesIn(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
): ConfigurationTables {
  return {
    async lockForChange(at) {
      const revision = await lockedRevision(trx, adapter, at);
      // Every write of processing data (a session, a chunk, a journal) takes a lock on the
      // sessions table or a session row; these locks wait for those in flight and hold off
      // new ones until commit (reads go on), so the counts are exactly what is deleted.
      // Chunks first: a processing transaction locks its chunk row, then a session row (the
      // journals it inserts refer to the session), and a chunk's write also touches the
      // chunks table before the session's row. Taking the sessions table first deadlocked
      // with a processor holding a chunk (finding of test/e2e/configuration-crash.test.ts).
      await adapter.lockTables(trx, ['chunks', 'ingestions']);
      return revision;
    },

    blockingChanges: (risks, checkedUpTo) => blockingInTransaction(trx, adapter, risks, checkedUpTo),

    countProcessingData: () => countProcessingData(trx),

    wipeProcessingData: () => wipeProcessingData(trx),

    async storeRevision(write) {
      await trx
        .updateTable('configuration')
        .set({
          revision: write.revision,
          version: write.version,
          document: JSON.stringify(write.configuration),
          updated_at: write.at,
          updated_by: write.actor,
        })
        .where('id', '=', CONFIGURATION_ROW_ID)
        .execute();
      await insertRevision(trx, {
        revision: write.revision,
        at: write.at,
        actor: write.actor,
        action: write.action,
        version: write.version,
        sha256: write.document.sha256,
        sections: write.sections,
        documentText: write.document.text,
      });
    },
  };
}

/**
 * The stored revision inside `trx`, its row made first when missing and then locked (on
 * PostgreSQL), so the revision read is this transaction's alone.
 */
async function lockedRevision(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
  at: string,
): Promise<number> {
  // Make sure the row exists, then lock it: the revision read below is ours alone.
  await trx
    .insertInto('configuration')
    .values({
      id: CONFIGURATION_ROW_ID,
      revision: 0,
      version: CONFIGURATION_FORMAT_VERSION,
      document: JSON.stringify(emptyConfiguration()),
      updated_at: at,
      updated_by: null,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  // SQLite runs one write transaction at a time, so only PostgreSQL needs the row lock.
  const current = trx.selectFrom('configuration').select('revision').where('id', '=', CONFIGURATION_ROW_ID);
  const { revision } = await adapter.forUpdate(current).executeTakeFirstOrThrow();
  return Number(revision);
}

/** Deletes the processing data inside `trx`, under the locks `lockForChange` took. */
async function wipeProcessingData(trx: Transaction<Database>): Promise<void> {
  // The rows written in bulk first: on PostgreSQL they have no foreign key to cascade
  // from (migration 0030). Deleting the sessions cascades to their chunks and errors;
  // the balances kept from the journals go with them (`accounting/balances.ts`), and so
  // do the statistics counters (`statistics-counters.ts`).
  await trx.deleteFrom('journal_lines').execute();
  await trx.deleteFrom('journals').execute();
  await trx.deleteFrom('records').execute();
  await trx.deleteFrom('ingestions').execute();
  // The reversal requests go with the journals they reversed (the audit log keeps them).
  await trx.deleteFrom('reversals').execute();
  await trx.deleteFrom('balance_moves').execute();
  await trx.deleteFrom('balances').execute();
  await clearStatisticsCounters(trx);
}
