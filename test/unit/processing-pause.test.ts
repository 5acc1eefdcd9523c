import Fastify from 'fastify';
import { describe, expect, it, vi } from 'vitest';
import { registerRequestsInProgress } from '../../src/http/arrival.js';
import { systemClock } from '../../src/lib/clock.js';
import type { PreparedAccountingRevision } from '../../src/modules/accounting/prepare.js';
import { AccountingProcessor } from '../../src/modules/accounting/processor.js';
import type { AccountingStore, ChunkProcessing } from '../../src/modules/accounting/store.js';
import type { ConfigurationSnapshots } from '../../src/modules/configuration/snapshot.js';
import {
  createRequestsInProgressBuffer,
  PAUSE_CHUNKS_MAX,
  processingPauseMs,
  REQUESTS_MANY,
  requestBegins,
  requestsInProgress,
} from '../../src/processing/requests-in-progress.js';

/** A store whose queue holds `chunks` chunks, each taking `chunkMs`; when each claim started. */
function queueOf(chunks: number, chunkMs: number) {
  const claimedAtMs: number[] = [];
  const store = {
    periodStates: async () => ({ version: 0 }),
    processNextChunk: async (): Promise<ChunkProcessing> => {
      claimedAtMs.push(performance.now());
      if (claimedAtMs.length > chunks) return { kind: 'idle' };
      await new Promise((resolve) => setTimeout(resolve, chunkMs));
      return { kind: 'processed', chunk: { ingestionId: 'in_a', chunkSeq: claimedAtMs.length }, records: 1 };
    },
  } as unknown as AccountingStore;
  return { store, claimedAtMs };
}

const snapshots = {
  current: async () => ({ prepared: { revision: 1 } }),
} as unknown as ConfigurationSnapshots<PreparedAccountingRevision>;

describe('processing that leaves the store to the writes of requests', () => {
  it('pauses after each chunk for as long as it is told, the chunk’s time given', async () => {
    const { store, claimedAtMs } = queueOf(2, 20);
    const told: number[] = [];
    const processor = new AccountingProcessor(store, snapshots, systemClock, {
      businessDatePinned: undefined,
      pauseAfterChunkMs: (chunkMs) => {
        told.push(chunkMs);
        return 60;
      },
    });
    expect(await processor.drain()).toBe(2);
    expect(told).toHaveLength(2);
    for (const chunkMs of told) expect(chunkMs).toBeGreaterThanOrEqual(19);
    expect((claimedAtMs[1] ?? 0) - (claimedAtMs[0] ?? 0)).toBeGreaterThanOrEqual(20 + 60 - 5);
  });

  it('pauses every round of the processor, not only the one whose chunk ended', async () => {
    const { store, claimedAtMs } = queueOf(3, 20);
    const processor = new AccountingProcessor(store, snapshots, systemClock, {
      businessDatePinned: undefined,
      pauseAfterChunkMs: () => 400,
    });
    // Two rounds side by side: each takes a chunk at once, then neither claims before the pause
    // ends. The bounds are far apart, so a loaded machine's delays do not blur them.
    const processed = await Promise.all([processor.drain(), processor.drain()]);
    expect(processed[0] + processed[1]).toBe(3);
    const [first = 0, second = 0, third = 0] = claimedAtMs;
    expect(second - first).toBeLessThan(200);
    expect(third - first).toBeGreaterThanOrEqual(20 + 400 - 5);
  });

  it('does not pause unless told', async () => {
    const { store, claimedAtMs } = queueOf(2, 5);
    const processor = new AccountingProcessor(store, snapshots, systemClock, {
      businessDatePinned: undefined,
    });
    expect(await processor.drain()).toBe(2);
    // The chunk's 5 ms and the machine's delays; far from the shortest pause of the tests above.
    expect((claimedAtMs[1] ?? 0) - (claimedAtMs[0] ?? 0)).toBeLessThan(250);
  });

  it('pauses the longer the more requests are in progress, from many on, counted once each', async () => {
    const buffer = createRequestsInProgressBuffer();
    const ends = Array.from({ length: REQUESTS_MANY - 1 }, () => requestBegins(buffer));
    expect(requestsInProgress(buffer)).toBe(REQUESTS_MANY - 1);
    expect(processingPauseMs(buffer, 30)).toBe(0);
    ends.push(requestBegins(buffer));
    expect(processingPauseMs(buffer, 30)).toBe(30);
    // The more requests, the longer: a chunk's time for every REQUESTS_MANY of them, up to a cap.
    for (let i = 0; i < REQUESTS_MANY * 2; i += 1) ends.push(requestBegins(buffer));
    expect(processingPauseMs(buffer, 30)).toBe(90);
    for (let i = 0; i < REQUESTS_MANY * PAUSE_CHUNKS_MAX; i += 1) ends.push(requestBegins(buffer));
    expect(processingPauseMs(buffer, 30)).toBe(30 * PAUSE_CHUNKS_MAX);
    for (const end of ends) end();
    // Calling an end again changes nothing.
    ends[0]?.();
    expect(requestsInProgress(buffer)).toBe(0);
    expect(processingPauseMs(buffer, 30)).toBe(0);
  });
});

describe('the requests in progress, as the service counts them', () => {
  it('counts a request from its arrival until its answer is sent, or its client is gone', async () => {
    const buffer = createRequestsInProgressBuffer();
    const app = Fastify({ forceCloseConnections: true });
    registerRequestsInProgress(app, buffer);
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let arrived!: () => void;
    const inside = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    app.get('/held', async () => {
      arrived();
      await held;
      return { ok: true };
    });
    app.get('/quick', async () => ({ ok: true }));
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      expect((await fetch(`${address}/quick`)).status).toBe(200);
      expect(requestsInProgress(buffer)).toBe(0);
      // A client that gives up while its request is worked on no longer counts once it is gone.
      const gone = new AbortController();
      const abandoned = fetch(`${address}/held`, { signal: gone.signal }).catch(() => 'aborted');
      await inside;
      expect(requestsInProgress(buffer)).toBe(1);
      gone.abort();
      expect(await abandoned).toBe('aborted');
      await vi.waitFor(() => expect(requestsInProgress(buffer)).toBe(0));
      release();
    } finally {
      await app.close();
    }
    expect(requestsInProgress(buffer)).toBe(0);
  });
});
