import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/storage/store.js';
import { TEST_DIALECT } from '../helpers/store.js';

// SQLite's alone: PostgreSQL has no WAL of the service's to checkpoint.
describe.runIf(TEST_DIALECT === 'sqlite')('checkpoints of the SQLite WAL', () => {
  let folder: string;
  let stores: Store[];

  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'ledgerflow-checkpoints-'));
    stores = [];
  });
  afterEach(async () => {
    for (const store of stores) await store.close();
    rmSync(folder, { recursive: true, force: true });
  });

  function open(priority: boolean, buffer?: SharedArrayBuffer): Store {
    const store = openStore(`sqlite:${join(folder, 'db.sqlite')}`, {
      ...(buffer === undefined ? {} : { sqliteWriteTurn: { buffer, priority } }),
    });
    stores.push(store);
    return store;
  }

  /** Bytes of the database file itself: what checkpoints have copied out of the WAL. */
  function fileBytes(): number {
    return statSync(join(folder, 'db.sqlite')).size;
  }

  /** A transaction of about 400 KB, many pages. */
  function writeMany(store: Store): Promise<void> {
    return store.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 200; i += 1)
        await sql`insert into t (text) values (${'x'.repeat(2000)})`.execute(trx);
    });
  }

  it('are made by the writer without priority after each commit, with the turn given back; the event loop keeps automatic ones', async () => {
    const eventLoop = open(true);
    const buffer = eventLoop.sqliteWriteTurn;
    if (buffer === undefined) throw new Error('a SQLite store has a write turn');
    const processing = open(false, buffer);
    expect(eventLoop.sqlite?.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    expect(processing.sqlite?.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    await sql`create table t (n integer primary key, text text)`.execute(eventLoop.db);

    // The event loop's 100 pages stay in the WAL: SQLite checkpoints from 1,000.
    const before = fileBytes();
    await writeMany(eventLoop);
    expect(fileBytes()).toBe(before);

    // The processing thread's commit is followed by a checkpoint: both transactions' pages are
    // in the database file when it returns.
    await writeMany(processing);
    expect(fileBytes()).toBeGreaterThan(before + 2 * 200 * 2000);

    // A lone write of that connection checkpoints too.
    const grown = fileBytes();
    await eventLoop.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 50; i += 1)
        await sql`insert into t (text) values (${'z'.repeat(4000)})`.execute(trx);
    });
    expect(fileBytes()).toBe(grown);
    await sql`insert into t (text) values ('y')`.execute(processing.db);
    expect(fileBytes()).toBeGreaterThan(grown + 50 * 4000);
  });
});
