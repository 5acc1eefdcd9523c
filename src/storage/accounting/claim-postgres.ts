/**
 * The PostgreSQL claim protocol: one transaction per chunk. The chunk row is locked with
 * `FOR UPDATE SKIP LOCKED` and stays locked while the chunk is worked on: several instances
 * work on different chunks at once and never on the same one, and ingestion, which never locks
 * chunk rows of earlier chunks, goes on.
 *
 * Lock order, which this protocol and the configuration upload (`configuration-store.ts`,
 * `replace`) rely on together:
 * 1. A claim locks its chunk row, then (journal lines) the direct-journal advisory lock and its
 *    session's row. Its writes take the rows of the kept balances it adds to (`balances.ts`:
 *    `balance_moves` then `balances`, each sorted by key, as posting does too), then its
 *    session's row (the session's counters go up, after the journals are copied, so that chunks
 *    written to the session meanwhile do not wait for the copy), then the statistics counters.
 *    It never locks the configuration row: it only reads the revision, after the claim. It then
 *    holds the period states counter `FOR SHARE` (`period-store.ts`), which a change of a period's
 *    state, taking no other lock first, waits for. A chunk
 *    of rollback records also locks the journals it withdraws, in id order, before the session
 *    row (`rollback-write.ts`); posting marks journals in no set order, so the two may deadlock
 *    when they meet on the same unposted journals: PostgreSQL ends one, and the processor tries
 *    that chunk again as any transient fault.
 * 2. An upload locks the configuration row, then the chunks table, then the sessions table
 *    (`LOCK TABLE … IN EXCLUSIVE MODE`, in that order), and deletes the kept balances only
 *    after the journals. The chunks table lock waits for every
 *    claimed chunk row and holds off new claims until the upload commits.
 * So the two take chunks before sessions, and a claim holds no lock an upload takes first: no
 * deadlock. And the revision a claim reads after its claim cannot change before it commits:
 * an upload that would change it waits for the claim's chunk row. A claim that read an older
 * revision than its caller prepared answers `stale-configuration` and writes nothing; the
 * caller tries again at most PROCESSING_RETRIES_IN_A_ROW_MAX times in a row
 * (`modules/accounting/processor.ts`).
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import { type ChunkRef, type ClaimedChunk, JOURNAL_ENTITY_NAME } from '../../modules/accounting/store.js';
import type { BulkInsert } from '../bulk-insert.js';
import { storedRevision } from '../configuration-store.js';
import { heldPeriodsVersion } from '../period-store.js';
import { postgresAdapter } from '../postgres/adapter.js';
import type { Database } from '../schema.js';
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

/** The key of the PostgreSQL advisory lock that lets one transaction at a time process direct journals. */
const DIRECT_JOURNAL_LOCK_NAME = 'ledgerflow: direct journals';

/**
 * Takes the turn of processing direct journals for the rest of the transaction; false when
 * another transaction holds it.
 */
async function takeDirectJournalTurn(trx: Kysely<Database>): Promise<boolean> {
  const { rows } = await sql<{ taken: boolean }>`
    select pg_try_advisory_xact_lock(hashtext(${DIRECT_JOURNAL_LOCK_NAME})) as taken
  `.execute(trx);
  return rows[0]?.taken === true;
}

/** Locks the chunk row inside `trx`, unless another transaction holds it: then false. */
async function lockChunk(trx: Kysely<Database>, chunk: ChunkRef): Promise<boolean> {
  const locked = await trx
    .selectFrom('chunks')
    .select('chunk_seq')
    .where('ingestion_id', '=', chunk.ingestionId)
    .where('chunk_seq', '=', chunk.chunkSeq)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
  return locked !== undefined;
}

/**
 * Claims the next waiting chunk inside `trx` and locks it. `hold` names the chunk from the
 * moment it is taken, so that a failure while reading it is its own.
 */
async function claim(trx: Kysely<Database>, hold: ClaimHold): Promise<ClaimedChunk | undefined> {
  for await (const candidate of waitingChunks(trx)) {
    hold.chunk = undefined;
    const chunk: ChunkRef = { ingestionId: candidate.ingestion_id, chunkSeq: Number(candidate.chunk_seq) };
    if (!(await lockChunk(trx, chunk))) continue;
    hold.chunk = chunk;
    const records = await claimedRecords(trx, chunk, undefined);
    if (records[0]?.entity === JOURNAL_ENTITY_NAME) {
      // Direct journals are processed one chunk at a time across every instance: the journals
      // already booked are read next, and a chunk processed meanwhile elsewhere could book the
      // same origin journal id after that read. Another round takes other work instead of
      // waiting; the unique index of migration 0007 backs the rule up.
      if (!(await takeDirectJournalTurn(trx))) {
        hold.chunk = undefined;
        continue;
      }
      // Journal lines of one session are processed one chunk at a time, so each chunk sees the
      // origin journal ids of the chunks before it: a direct journal may not be split across
      // chunks (docs/domain/accounting.md, Direct journals).
      await trx
        .selectFrom('ingestions')
        .select('ingestion_id')
        .where('ingestion_id', '=', candidate.ingestion_id)
        .forUpdate()
        .execute();
    }
    const claimed = await claimedChunk(trx, postgresAdapter, chunk, records);
    if (claimed !== undefined) return claimed;
  }
  hold.chunk = undefined;
  return undefined;
}

/** The PostgreSQL claim protocol over `db` (see the header). */
export function postgresClaims(db: Kysely<Database>, bulkInsert: BulkInsert): ClaimProtocol {
  return {
    processNext(
      revision: number,
      at: string,
      work: ClaimedChunkHandler,
      hold: ClaimHold,
      periodsVersion: number | undefined,
    ) {
      return db.transaction().execute(async (trx) => {
        const chunk = await claim(trx, hold);
        if (chunk === undefined) return IDLE;
        // The chunk belongs to the configuration stored now (an upload wipes older sessions);
        // if the caller prepared another revision, it must not process this chunk with it.
        if ((await storedRevision(trx)) !== revision) return STALE;
        // Held until the commit: a change of a period's state waits for this chunk (period-store.ts).
        if (
          periodsVersion !== undefined &&
          (await heldPeriodsVersion(trx, postgresAdapter)) !== periodsVersion
        )
          return STALE_PERIODS;
        const rows = outcomeRows(chunk, await work(chunk), at, revision);
        if (!(await writeOutcome(trx, bulkInsert, postgresAdapter, chunk, rows)))
          throw new Error('a locked chunk changed');
        return { kind: 'processed', chunk: refOf(chunk), records: chunk.records.length };
      });
    },

    async recordsToFail(trx: Transaction<Database>, chunk: ChunkRef): Promise<WaitingRecord[]> {
      if (!(await lockChunk(trx, chunk))) return [];
      return claimedRecords(trx, chunk, undefined);
    },
  };
}
