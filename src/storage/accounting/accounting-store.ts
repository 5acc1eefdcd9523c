/**
 * The accounting port over Kysely. The unit of work is one chunk: its unprocessed records are
 * claimed, processed by the pure engine, and their results written with the processed marks in
 * one transaction, by the claim protocol of the store's dialect (`claim-sqlite.ts`,
 * `claim-postgres.ts`, which say the lock order they rely on) and the one write path
 * (`write-path.ts`), which keeps the balances too (`balances.ts`, as does posting). The reads
 * of journals and balances (from the kept tables) are `journal-reads.ts`, those of processing
 * errors `processing-error-reads.ts`.
 */
import { sql } from 'kysely';
import type { AccountingStore, ChunkProcessing, ChunkRef } from '../../modules/accounting/store.js';
import { createBulkInsert } from '../bulk-insert.js';
import { isRetryableStoreError } from '../errors.js';
import { readPeriodStates } from '../period-store.js';
import { byDialect, type Store } from '../store.js';
import { postDueJournals } from './balances.js';
import type { ClaimHold } from './claim.js';
import { postgresClaims } from './claim-postgres.js';
import { sqliteClaims } from './claim-sqlite.js';
import { createJournalReads } from './journal-reads.js';
import { createProcessingErrorReads } from './processing-error-reads.js';
import { canonicalNodeJson } from './rows.js';
import { writeFailure } from './write-path.js';

/** What a chunk's processing did when it threw: nothing was written, the caller decides. */
function failed(chunk: ChunkRef, error: unknown): ChunkProcessing {
  return { kind: 'failed', chunk, error, transient: isRetryableStoreError(error) };
}

/** The accounting port over `store` (see the header). */
export function createAccountingStore(store: Store): AccountingStore {
  const { db, adapter } = store;
  const bulkInsert = createBulkInsert(store);
  const claims = byDialect(adapter.dialect, { postgres: postgresClaims, sqlite: sqliteClaims })(
    db,
    bulkInsert,
  );

  return {
    async processNextChunk(revision, at, work, periodsVersion) {
      const hold: ClaimHold = { chunk: undefined };
      try {
        return await claims.processNext(revision, at, work, hold, periodsVersion);
      } catch (error) {
        // Before a chunk was taken the fault is the store's, not a chunk's: the caller's round fails.
        if (hold.chunk === undefined) throw error;
        return failed(hold.chunk, error);
      }
    },

    periodStates: () => readPeriodStates(db),

    async failChunk(chunk, at, failure) {
      return db.transaction().execute(async (trx) => {
        const records = await claims.recordsToFail(trx, chunk);
        const first = records[0];
        const last = records.at(-1);
        if (first === undefined || last === undefined) return 0;
        // A chunk's records are all of one namespace and entity.
        const entityChunk = { ...chunk, namespace: first.namespace, entity: first.entity };
        return writeFailure(
          trx,
          adapter,
          entityChunk,
          { first: first.record_id, last: last.record_id },
          at,
          failure,
        );
      });
    },

    postDue(node, businessDate) {
      return postDueJournals(db, adapter, canonicalNodeJson(node), businessDate);
    },

    async unpostedNodes() {
      // A loose scan of the unposted journals' index (node, core date): one lookup per node,
      // however many journals wait for their date (a DISTINCT read all of them, 1.3 s at 320,000
      // on PostgreSQL, every posting interval).
      const { rows } = await sql<{ node: string | null }>`
        with recursive nodes(node) as (
          select (select min(node) from journals where posted = 0)
          union all
          select (select min(j.node) from journals j where j.posted = 0 and j.node > nodes.node)
          from nodes where nodes.node is not null
        )
        select node from nodes where node is not null`.execute(db);
      return rows.flatMap((r) => (r.node === null ? [] : [JSON.parse(r.node) as Record<string, string>]));
    },

    ...createJournalReads(store),
    ...createProcessingErrorReads(store),
  };
}
