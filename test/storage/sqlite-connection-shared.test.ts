import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WalSync } from '../../src/storage/sqlite/wal-sync.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { TEST_DIALECT } from '../helpers/store.js';

/** A thread that takes the write turn of `buffer` and keeps it until it is sent a message. */
async function turnHolder(buffer: SharedArrayBuffer): Promise<Worker> {
  const source = `
    const { parentPort, workerData, threadId } = require('node:worker_threads');
    const state = new Int32Array(workerData.buffer);
    while (Atomics.compareExchange(state, 0, 0, threadId + 1) !== 0) Atomics.wait(state, 0, Atomics.load(state, 0), 10);
    parentPort.postMessage('held');
    parentPort.on('message', () => { Atomics.store(state, 0, 0); Atomics.notify(state, 0); parentPort.postMessage('given'); });
  `;
  const worker = new Worker(source, { eval: true, workerData: { buffer } });
  await new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return worker;
}

// SQLite's alone: its one connection per thread is what reads and writes share.
describe.runIf(TEST_DIALECT === 'sqlite')('the SQLite connection of the event loop', () => {
  let folder: string;
  let store: Store;

  beforeEach(async () => {
    folder = mkdtempSync(join(tmpdir(), 'ledgerflow-connection-'));
    store = openStore(`sqlite:${join(folder, 'db.sqlite')}`);
    await sql`create table t (n integer primary key)`.execute(store.db);
  });
  afterEach(async () => {
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  });

  /** The rows of `t`, read by a query the driver knows for a read. */
  async function count(): Promise<number> {
    const row = await store.db
      .selectNoFrom(sql<number>`(select count(*) from t)`.as('count'))
      .executeTakeFirstOrThrow();
    return row.count;
  }

  it('serves reads while a transaction and a single write wait for the turn held by another thread', async () => {
    const buffer = store.sqliteWriteTurn;
    if (buffer === undefined) throw new Error('a SQLite store has a write turn');
    const holder = await turnHolder(buffer);
    try {
      let written = 0;
      const transaction = store.db
        .transaction()
        .execute((trx) => sql`insert into t (n) values (1)`.execute(trx))
        .then(() => {
          written += 1;
        });
      const single = sql`insert into t (n) values (2)`.execute(store.db).then(() => {
        written += 1;
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
      // Both writes wait for the turn; the connection is free for reads meanwhile.
      expect(await count()).toBe(0);
      expect(written).toBe(0);
      holder.postMessage('give');
      await Promise.all([transaction, single]);
      expect(await count()).toBe(2);
    } finally {
      await holder.terminate();
    }
  });

  it('commits without a sync on the event loop and answers a write once its log is synced', async () => {
    expect(store.sqlite?.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
    const synced = vi.spyOn(WalSync.prototype, 'sync');
    try {
      await store.db.transaction().execute((trx) => sql`insert into t (n) values (1)`.execute(trx));
      await sql`insert into t (n) values (2)`.execute(store.db);
      // Reads sync nothing.
      await count();
      expect(synced).toHaveBeenCalledTimes(2);
    } finally {
      synced.mockRestore();
    }
  });

  it('keeps syncing in the commit on a connection of another thread', async () => {
    const buffer = store.sqliteWriteTurn;
    if (buffer === undefined) throw new Error('a SQLite store has a write turn');
    const processing = openStore(`sqlite:${join(folder, 'db.sqlite')}`, {
      sqliteWriteTurn: { buffer, priority: false },
    });
    try {
      expect(processing.sqlite?.pragma('synchronous', { simple: true })).toBe(2); // FULL
    } finally {
      await processing.close();
    }
  });
});

describe.runIf(TEST_DIALECT === 'sqlite')('syncs of the SQLite log', () => {
  let folder: string;

  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'ledgerflow-wal-sync-'));
  });
  afterEach(() => {
    rmSync(folder, { recursive: true, force: true });
  });

  it('share one sync among the callers that ask while one runs, and start another after it', async () => {
    const store = openStore(`sqlite:${join(folder, 'db.sqlite')}`);
    await sql`create table t (n integer primary key)`.execute(store.db);
    await store.close();
    const wal = new WalSync(join(folder, 'db.sqlite'));
    // The log of a closed database is gone; one of the same name stands in for it.
    writeFileSync(join(folder, 'db.sqlite-wal'), 'log');
    // Nothing committed, nothing to wait for.
    await wal.sync();
    wal.committed();
    const first = wal.sync();
    // Nothing committed since the running sync began: that one covers it.
    expect(wal.sync()).toBe(first);
    wal.committed();
    const waiting = [wal.sync(), wal.sync(), wal.sync()];
    expect(waiting[0]).toBe(waiting[1]);
    expect(waiting[1]).toBe(waiting[2]);
    expect(waiting[0]).not.toBe(first);
    await Promise.all([first, ...waiting]);
    await wal.close();
  });

  it('fails a sync as a store fault when the log cannot be opened', async () => {
    const wal = new WalSync(join(folder, 'missing.sqlite'));
    wal.committed();
    await expect(wal.sync()).rejects.toMatchObject({ name: 'StoreUnavailableError' });
    await wal.close();
  });
});
