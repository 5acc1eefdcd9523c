import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ClaimedChunk } from '../../src/modules/accounting/store.js';
import { createAccountingStore } from '../../src/storage/accounting/accounting-store.js';
import { postgresClaims } from '../../src/storage/accounting/claim-postgres.js';
import { type BulkInsert, createBulkInsert } from '../../src/storage/bulk-insert.js';
import { createIngestionStore } from '../../src/storage/ingestion-store.js';
import type { Store } from '../../src/storage/store.js';
import { chunkWriteOf, createTestStore, insertOpenSession, TEST_DIALECT } from '../helpers/store.js';

const AT = '2026-11-25T12:00:00.000Z';
/** No configuration is stored in these tests: its revision is 0. */
const REVISION = 0;

/** Stores a chunk of `records` business events waiting for processing; its sequence number. */
async function storeChunk(store: Store, ingestionId: string, records: number): Promise<number> {
  const stored = await createIngestionStore(store).commitChunk({
    ...chunkWriteOf(ingestionId, records, AT),
    revision: REVISION,
  });
  if (stored.kind !== 'stored') throw new Error(`chunk not stored: ${stored.kind}`);
  return stored.outcome.chunkSeq;
}

/**
 * How a processing round finds its work: the chunks with records waiting, oldest first, by a
 * scan of the index of waiting records whatever the backlog (docs/adr/0014-storage-fast-paths.md).
 */
describe('chunk claims', () => {
  let store: Store;
  let dispose: () => Promise<void>;
  beforeEach(async () => {
    ({ store, dispose } = await createTestStore());
    for (const session of ['in_a', 'in_b'])
      await insertOpenSession(store, session, 'ledger', 'businessEvent');
  });
  afterEach(async () => dispose());

  /** Processes one chunk, writing nothing but the processed marks; which chunk it was, and how many records. */
  async function processNext(): Promise<{ chunk: string; records: number } | undefined> {
    let claimed: ClaimedChunk | undefined;
    const processed = await createAccountingStore(store).processNextChunk(REVISION, AT, (chunk) => {
      claimed = chunk;
      return { journals: [], errors: [] };
    });
    if (processed.kind !== 'processed' || claimed === undefined) return undefined;
    return { chunk: `${claimed.ingestionId}/${claimed.chunkSeq}`, records: processed.records };
  }

  it('takes the chunks of every session in the order they arrived, each once', async () => {
    await storeChunk(store, 'in_a', 3);
    await storeChunk(store, 'in_b', 2);
    await storeChunk(store, 'in_a', 4);
    const order: string[] = [];
    for (let round = 0; round < 4; round += 1) {
      const next = await processNext();
      if (next !== undefined) order.push(next.chunk);
    }
    expect(order).toEqual(['in_a/1', 'in_b/1', 'in_a/2']);
    const waiting = await store.db
      .selectFrom('records')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('processing', '=', 1)
      .executeTakeFirstOrThrow();
    expect(Number(waiting.n)).toBe(0);
  });

  it('passes over chunks whose records were processed meanwhile', async () => {
    await storeChunk(store, 'in_a', 3);
    await storeChunk(store, 'in_b', 2);
    await store.db.updateTable('records').set({ processing: 0 }).where('ingestion_id', '=', 'in_a').execute();
    expect(await processNext()).toEqual({ chunk: 'in_b/1', records: 2 });
    expect(await processNext()).toBeUndefined();
  });

  it.runIf(TEST_DIALECT === 'postgres')(
    'skips a chunk another transaction holds and takes the next one',
    async () => {
      await storeChunk(store, 'in_a', 3);
      await storeChunk(store, 'in_b', 2);
      let next: { chunk: string; records: number } | undefined;
      await store.db.transaction().execute(async (trx) => {
        // What another processing round does while it works on in_a's chunk.
        await sql`select chunk_seq from chunks where ingestion_id = 'in_a' for update`.execute(trx);
        next = await processNext();
      });
      expect(next).toEqual({ chunk: 'in_b/1', records: 2 });
      expect(await processNext()).toEqual({ chunk: 'in_a/1', records: 3 });
    },
  );

  it.runIf(TEST_DIALECT === 'postgres')(
    'writes a chunk to the session being processed while processing copies its journals',
    async () => {
      await storeChunk(store, 'in_a', 3);
      let written: string | undefined;
      const copy = createBulkInsert(store);
      // The processing transaction's journal copy waits for another chunk of its session to be
      // written: that chunk must not need the session row locked until processing commits.
      const copyAfterAChunk: BulkInsert = async (trx, table, columns, rows) => {
        if (table === 'journals') {
          const stored = storeChunk(store, 'in_a', 2).then((seq) => `stored ${seq}`);
          const late = new Promise<string>((resolve) => setTimeout(() => resolve('waiting'), 3_000));
          written = await Promise.race([stored, late]);
          if (written === 'waiting') throw new Error('the chunk waits for the processing transaction');
        }
        await copy(trx, table, columns, rows);
      };
      const processed = await postgresClaims(store.db, copyAfterAChunk).processNext(
        REVISION,
        AT,
        () => ({ journals: [], errors: [] }),
        { chunk: undefined },
        undefined,
      );
      expect(processed).toEqual({
        kind: 'processed',
        chunk: { ingestionId: 'in_a', chunkSeq: 1 },
        records: 3,
      });
      expect(written).toBe('stored 2');
      const session = await store.db
        .selectFrom('ingestions')
        .select(['processed_rows', 'success_rows'])
        .where('ingestion_id', '=', 'in_a')
        .executeTakeFirstOrThrow();
      expect({ processed: Number(session.processed_rows), stored: Number(session.success_rows) }).toEqual({
        processed: 3,
        stored: 5,
      });
    },
  );
});
