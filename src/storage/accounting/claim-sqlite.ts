/**
 * The SQLite claim protocol. SQLite has one writer at a time (the file's lock, and the process's
 * turn to write, `sqlite/write-turn.ts`): a transaction held open while a chunk is worked on
 * (flow scripts included) would stall every other write. So a claim reads the chunk, works on
 * it and builds its rows outside any transaction; the write transaction then checks the
 * revision and that the records still wait, and holds the lock only for the inserts.
 *
 * Lock order: none to keep. A transaction on SQLite takes the one write lock when it begins
 * (`BEGIN IMMEDIATE`, `sqlite/immediate-dialect.ts`), so the configuration upload
 * (`configuration-store.ts`) and this write run one after the other, never interleaved. What
 * changed between the read and the write is found in the write: another revision (an upload
 * wiped the chunk) answers `stale-configuration`, records no longer waiting answer
 * `chunk-taken`; the caller tries again, at most PROCESSING_RETRIES_IN_A_ROW_MAX times in a row
 * (`modules/accounting/processor.ts`).
 */
import type { Kysely, Transaction } from 'kysely';
import type { ChunkProcessing, ChunkRef } from '../../modules/accounting/store.js';
import type { BulkInsert } from '../bulk-insert.js';
import { storedRevision } from '../configuration-store.js';
import { heldPeriodsVersion } from '../period-store.js';
import type { Database } from '../schema.js';
import { sqliteAdapter } from '../sqlite/adapter.js';
import {
  type ClaimedChunkHandler,
  type ClaimHold,
  type ClaimProtocol,
  claimedChunk,
  claimedRecords,
  IDLE,
  refOf,
  STALE,
  STALE_PERIODS,
  type WaitingRecord,
  waitingChunks,
} from './claim.js';
import { outcomeRows } from './rows.js';
import { writeOutcome } from './write-path.js';

/**
 * Records of a chunk worked on and written in one go at most. With the processing thread the
 * service has two SQLite connections and one writer at a time: while the thread writes,
 * ingestion's chunk writes wait for the lock, and better-sqlite3 waits on the event loop. A
 * 2,000-event write held the lock for hundreds of milliseconds; 500 records bound the wait
 * (docs/adr/0013-processing-thread.md). Journal lines are never split (`claimedRecords`).
 */
const SQLITE_PROCESSING_RECORDS_PER_WRITE_MAX = 500;

/** Rolls a write back when the chunk's records were processed by someone else meanwhile. */
class ChunkTaken extends Error {
  constructor() {
    super('the chunk was processed while it was being worked on');
  }
}

const CHUNK_TAKEN: ChunkProcessing = { kind: 'retry', reason: 'chunk-taken' };

/** The SQLite claim protocol over `db` (see the header). */
export function sqliteClaims(db: Kysely<Database>, bulkInsert: BulkInsert): ClaimProtocol {
  /** Reads the next waiting chunk; `hold` names it from the moment it is taken. */
  async function claim(hold: ClaimHold) {
    for await (const candidate of waitingChunks(db)) {
      hold.chunk = undefined;
      const found = await db
        .selectFrom('chunks')
        .select('chunk_seq')
        .where('ingestion_id', '=', candidate.ingestion_id)
        .where('chunk_seq', '=', candidate.chunk_seq)
        .executeTakeFirst();
      if (found === undefined) continue;
      const chunk: ChunkRef = { ingestionId: candidate.ingestion_id, chunkSeq: Number(candidate.chunk_seq) };
      hold.chunk = chunk;
      const records = await claimedRecords(db, chunk, SQLITE_PROCESSING_RECORDS_PER_WRITE_MAX);
      const claimed = await claimedChunk(db, sqliteAdapter, chunk, records);
      if (claimed !== undefined) return claimed;
    }
    hold.chunk = undefined;
    return undefined;
  }

  return {
    async processNext(
      revision: number,
      at: string,
      work: ClaimedChunkHandler,
      hold: ClaimHold,
      periodsVersion: number | undefined,
    ) {
      const chunk = await claim(hold);
      if (chunk === undefined) return IDLE;
      if ((await storedRevision(db)) !== revision) return STALE;
      const rows = outcomeRows(chunk, await work(chunk), at, revision);
      try {
        return await db.transaction().execute(async (trx): Promise<ChunkProcessing> => {
          if ((await storedRevision(trx)) !== revision) return STALE;
          if (
            periodsVersion !== undefined &&
            (await heldPeriodsVersion(trx, sqliteAdapter)) !== periodsVersion
          )
            return STALE_PERIODS;
          if (!(await writeOutcome(trx, bulkInsert, sqliteAdapter, chunk, rows))) throw new ChunkTaken();
          return { kind: 'processed', chunk: refOf(chunk), records: chunk.records.length };
        });
      } catch (error) {
        if (error instanceof ChunkTaken) return CHUNK_TAKEN;
        throw error;
      }
    },

    recordsToFail(trx: Transaction<Database>, chunk: ChunkRef): Promise<WaitingRecord[]> {
      return claimedRecords(trx, chunk, SQLITE_PROCESSING_RECORDS_PER_WRITE_MAX);
    },
  };
}
