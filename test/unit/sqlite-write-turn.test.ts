import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/storage/errors.js';
import { createSqliteWriteTurnBuffer, SqliteWriteTurn } from '../../src/storage/sqlite/write-turn.js';

const TIMEOUT_MS = 2_000;

/** A worker thread that takes the turn of `buffer`, reports it, and keeps it until told or forever. */
function holderThread(buffer: SharedArrayBuffer, giveBack: boolean): Promise<{ worker: Worker }> {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const state = new Int32Array(workerData.buffer);
    const self = require('node:worker_threads').threadId + 1;
    while (Atomics.compareExchange(state, 0, 0, self) !== 0) Atomics.wait(state, 0, Atomics.load(state, 0), 10);
    parentPort.postMessage('held');
    parentPort.on('message', () => {
      if (workerData.giveBack) { Atomics.store(state, 0, 0); Atomics.notify(state, 0); }
      parentPort.postMessage('given');
    });
  `;
  const worker = new Worker(source, { eval: true, workerData: { buffer, giveBack } });
  return new Promise((resolve, reject) => {
    worker.once('message', () => resolve({ worker }));
    worker.once('error', reject);
  });
}

describe('the SQLite write turn of a process', () => {
  it('lets one writer at a time in, and the next one the moment it is given back', async () => {
    const buffer = createSqliteWriteTurnBuffer();
    const a = new SqliteWriteTurn(buffer, { priority: true, timeoutMs: TIMEOUT_MS });
    const b = new SqliteWriteTurn(buffer, { priority: true, timeoutMs: TIMEOUT_MS });
    await a.take();
    let bHasIt = false;
    const bTakes = b.take().then(() => {
      bHasIt = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(bHasIt).toBe(false);
    a.give();
    await bTakes;
    expect(bHasIt).toBe(true);
    b.give();
  });

  it('waits without blocking the event loop while another thread writes', async () => {
    const buffer = createSqliteWriteTurnBuffer();
    const { worker } = await holderThread(buffer, true);
    try {
      const turn = new SqliteWriteTurn(buffer, { priority: true, timeoutMs: TIMEOUT_MS });
      let taken = false;
      const taking = turn.take().then(() => {
        taken = true;
      });
      // Timers still run while the turn is awaited.
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(taken).toBe(false);
      worker.postMessage('give');
      await taking;
      expect(taken).toBe(true);
      turn.give();
    } finally {
      await worker.terminate();
    }
  });

  it('lets a writer with priority go before a waiting writer without it', async () => {
    const buffer = createSqliteWriteTurnBuffer();
    const holder = new SqliteWriteTurn(buffer, { priority: true, timeoutMs: TIMEOUT_MS });
    const background = new SqliteWriteTurn(buffer, { priority: false, timeoutMs: TIMEOUT_MS });
    const foreground = new SqliteWriteTurn(buffer, { priority: true, timeoutMs: TIMEOUT_MS });
    const order: string[] = [];
    await holder.take();
    const backgroundTakes = background.take().then(() => {
      order.push('background');
      background.give();
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    const foregroundTakes = foreground.take().then(() => {
      order.push('foreground');
      foreground.give();
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    holder.give();
    await Promise.all([backgroundTakes, foregroundTakes]);
    expect(order).toEqual(['foreground', 'background']);
  });

  it('makes a writer without priority that kept one with priority waiting leave the turn as long as it held it', async () => {
    const buffer = createSqliteWriteTurnBuffer();
    const background = new SqliteWriteTurn(buffer, { priority: false, timeoutMs: TIMEOUT_MS });
    const foreground = new SqliteWriteTurn(buffer, { priority: true, timeoutMs: TIMEOUT_MS });
    const HOLD_MS = 60;
    // Uncontended: taken again at once.
    await background.take();
    background.give();
    let started = performance.now();
    await background.take();
    expect(performance.now() - started).toBeLessThan(HOLD_MS / 2);
    // Held for HOLD_MS while a writer with priority waited: the next take waits about as long.
    const foregroundTakes = foreground.take().then(() => foreground.give());
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
    background.give();
    await foregroundTakes;
    started = performance.now();
    await background.take();
    expect(performance.now() - started).toBeGreaterThanOrEqual(HOLD_MS - 5);
    background.give();
  });

  it('makes it leave the turn twice as long when 8 writers with priority wait, those queued behind one counted', async () => {
    const buffer = createSqliteWriteTurnBuffer();
    const background = new SqliteWriteTurn(buffer, { priority: false, timeoutMs: TIMEOUT_MS });
    const foreground = new SqliteWriteTurn(buffer, { priority: true, timeoutMs: TIMEOUT_MS });
    const HOLD_MS = 60;
    // One writer waits for the turn and seven writes wait behind it (a group commit's queue).
    SqliteWriteTurn.queueWrites(buffer, 7);
    expect(SqliteWriteTurn.priorityWriters(buffer)).toBe(7);
    await background.take();
    const foregroundTakes = foreground.take().then(() => foreground.give());
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
    expect(SqliteWriteTurn.priorityWriters(buffer)).toBe(8);
    background.give();
    await foregroundTakes;
    SqliteWriteTurn.queueWrites(buffer, -7);
    expect(SqliteWriteTurn.priorityWriters(buffer)).toBe(0);
    const started = performance.now();
    await background.take();
    expect(performance.now() - started).toBeGreaterThanOrEqual(2 * HOLD_MS - 5);
    background.give();
  });

  it('fails as unavailable when another writer keeps the turn past the timeout', async () => {
    const buffer = createSqliteWriteTurnBuffer();
    const holder = new SqliteWriteTurn(buffer, { priority: true, timeoutMs: TIMEOUT_MS });
    const waiter = new SqliteWriteTurn(buffer, { priority: true, timeoutMs: 50 });
    await holder.take();
    await expect(waiter.take()).rejects.toBeInstanceOf(StoreUnavailableError);
    holder.give();
    await waiter.take();
    waiter.give();
  });

  it('serves the writers of one thread in the order they asked, a late one behind them', async () => {
    const turn = new SqliteWriteTurn(createSqliteWriteTurnBuffer(), {
      priority: true,
      timeoutMs: TIMEOUT_MS,
    });
    const order: string[] = [];
    const write = async (name: string) => {
      await turn.take();
      order.push(name);
      await new Promise((resolve) => setTimeout(resolve, 5));
      turn.give();
    };
    await turn.take();
    const waiting = ['b', 'c', 'd'].map(write);
    turn.give();
    // Asks the moment the turn is given back: it goes after those already in line.
    const late = write('late');
    await Promise.all([...waiting, late]);
    expect(order).toEqual(['b', 'c', 'd', 'late']);
  });

  it("fails a writer whose wait in its thread's line passes the timeout, and serves the next", async () => {
    const turn = new SqliteWriteTurn(createSqliteWriteTurnBuffer(), { priority: true, timeoutMs: 50 });
    await turn.take();
    const first = turn.take();
    await expect(first).rejects.toBeInstanceOf(StoreUnavailableError);
    const second = turn.take();
    turn.give();
    await second;
    turn.give();
    await turn.take();
    turn.give();
  });

  it('frees the turn of a thread that ended while holding it', async () => {
    const buffer = createSqliteWriteTurnBuffer();
    const { worker } = await holderThread(buffer, false);
    const thread = worker.threadId;
    await worker.terminate();
    const turn = new SqliteWriteTurn(buffer, { priority: true, timeoutMs: 100 });
    await expect(turn.take()).rejects.toBeInstanceOf(StoreUnavailableError);
    SqliteWriteTurn.freeHeldBy(buffer, thread);
    await turn.take();
    turn.give();
  });
});
