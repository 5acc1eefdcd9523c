import { describe, expect, it } from 'vitest';
import type { ReportedError } from '../../src/processing/messages.js';
import {
  PROCESSING_THREAD_RESTART_REFILL_INTERVAL_MS,
  PROCESSING_THREAD_RESTARTS_MAX,
  ProcessingThread,
  type ProcessingThreadLog,
} from '../../src/processing/thread.js';
import { createSqliteWriteTurnBuffer, SqliteWriteTurn } from '../../src/storage/sqlite/write-turn.js';
import { eventually } from '../helpers/server.js';

const DYING_THREAD = new URL('../fixtures/dying-processing-thread.mjs', import.meta.url);

/**
 * A processing thread that keeps dying (docs/adr/0013-processing-thread.md): started again at most
 * PROCESSING_THREAD_RESTARTS_MAX times, then processing moves to the main thread; each time, the
 * SQLite write turn it died holding is freed, so the main thread's writes do not wait for ever.
 */
describe('the processing thread host', () => {
  it('restarts a thread that dies, then falls back to the main thread, freeing the write turn it held', async () => {
    const buffer = createSqliteWriteTurnBuffer();
    const deaths: { restarting: boolean; error: ReportedError | undefined }[] = [];
    let inProcessStarted = 0;
    const thread = new ProcessingThread(
      {
        databaseUrl: 'sqlite:unused.db',
        databaseConnectTimeoutMs: 1_000,
        databaseStatementTimeoutMs: 1_000,
        sqliteWriteTurn: buffer,
        settings: { businessDate: undefined },
      },
      {
        start: () => {
          inProcessStarted += 1;
        },
        wake: () => {},
        stop: async () => {},
      },
      {
        started: () => {},
        processingError: () => {},
        idleConnectionLost: () => {},
        threadDied: ({ restarting, error }) => deaths.push({ restarting, error }),
      },
      { entry: DYING_THREAD },
    );
    thread.start();
    await eventually(async () => (inProcessStarted > 0 ? true : undefined), 20_000);
    expect(thread.status()).toMatchObject({
      runsOn: 'main-thread',
      degraded: true,
      threadRestarts: PROCESSING_THREAD_RESTARTS_MAX,
    });
    expect(deaths.map((death) => death.restarting)).toEqual([
      ...Array.from({ length: PROCESSING_THREAD_RESTARTS_MAX }, () => true),
      false,
    ]);
    expect(deaths[0]?.error?.message).toBe('the processing thread died while writing');
    // The main thread's next write gets the turn at once.
    const turn = new SqliteWriteTurn(buffer, { priority: true, timeoutMs: 100 });
    await turn.take();
    turn.give();
    await thread.stop();
  });

  /** A host of the dying thread on a clock of the test's; `died` hears of each death. */
  const dyingHost = (
    clock: { now: number },
    died: ProcessingThreadLog['threadDied'],
    inProcess: { started: number },
  ) =>
    new ProcessingThread(
      {
        databaseUrl: 'sqlite:unused.db',
        databaseConnectTimeoutMs: 1_000,
        databaseStatementTimeoutMs: 1_000,
        sqliteWriteTurn: createSqliteWriteTurnBuffer(),
        settings: { businessDate: undefined },
      },
      {
        start: () => {
          inProcess.started += 1;
        },
        wake: () => {},
        stop: async () => {},
      },
      { started: () => {}, processingError: () => {}, idleConnectionLost: () => {}, threadDied: died },
      { entry: DYING_THREAD, now: () => clock.now, restartDelayMs: 1 },
    );

  it('gives back one restart per interval, so a thread that dies now and then is always restarted', async () => {
    const clock = { now: 0 };
    const inProcess = { started: 0 };
    const restarting: boolean[] = [];
    const deathsMax = PROCESSING_THREAD_RESTARTS_MAX * 3;
    const thread = dyingHost(
      clock,
      (death) => {
        restarting.push(death.restarting);
        // The next death comes one interval later.
        clock.now += PROCESSING_THREAD_RESTART_REFILL_INTERVAL_MS;
      },
      inProcess,
    );
    thread.start();
    await eventually(async () => (restarting.length >= deathsMax ? true : undefined), 30_000);
    await thread.stop();
    expect(restarting.slice(0, deathsMax)).toEqual(Array.from({ length: deathsMax }, () => true));
    expect(inProcess.started).toBe(0);
    expect(thread.status().threadRestarts).toBeGreaterThanOrEqual(deathsMax);
  });

  it('does not save restarts up beyond the budget: a burst after a long calm still falls back', async () => {
    const clock = { now: 0 };
    const inProcess = { started: 0 };
    const restarting: boolean[] = [];
    const thread = dyingHost(clock, (death) => restarting.push(death.restarting), inProcess);
    // A long calm, then a burst of deaths.
    clock.now = 100 * PROCESSING_THREAD_RESTART_REFILL_INTERVAL_MS;
    thread.start();
    await eventually(async () => (inProcess.started > 0 ? true : undefined), 30_000);
    await thread.stop();
    expect(restarting).toEqual([
      ...Array.from({ length: PROCESSING_THREAD_RESTARTS_MAX }, () => true),
      false,
    ]);
  });
});
