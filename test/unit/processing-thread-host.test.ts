import { describe, expect, it } from 'vitest';
import {
  PROCESSING_THREAD_RESTARTS_MAX,
  ProcessingThread,
  type ReportedError,
} from '../../src/processing-thread-host.js';
import { createSqliteWriteTurnBuffer, SqliteWriteTurn } from '../../src/storage/sqlite-write-turn.js';
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
      DYING_THREAD,
    );
    thread.start();
    await eventually(async () => (inProcessStarted > 0 ? true : undefined), 20_000);
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
});
