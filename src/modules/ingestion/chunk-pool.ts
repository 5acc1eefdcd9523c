import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { AppError } from '../../lib/errors.js';
import type { PreparedEntity } from '../entities/prepared-entity.js';
import type { ChunkJob, ChunkJobResult } from './chunk-worker.js';
import type { ValidatedChunk } from './validated-chunk.js';
import { validateChunkBody } from './validated-chunk.js';

/** Chunks smaller than this are worked inline: a thread hop would cost more than it saves. */
export const CHUNK_WORKER_THRESHOLD_BYTES = 64 * 1024;
/** Chunks waiting for a worker at most; beyond it they are worked inline (back-pressure). */
const CHUNK_QUEUE_LENGTH_MAX = 16;

/** Where the CPU work of a chunk happens. */
export interface ChunkWorker {
  validate(raw: Buffer, entity: PreparedEntity & { revision: number }): Promise<ValidatedChunk>;
  close(): Promise<void>;
}

/** Works every chunk on the calling thread (tests, the CLI, single-core machines). */
export const inlineChunkWorker: ChunkWorker = {
  validate: async (raw, entity) => validateChunkBody(raw, entity.validator),
  close: async () => {},
};

/**
 * Parses and validates large chunks on worker threads (piscina), so the event loop keeps
 * serving requests and writing while another core does the CPU work of the next chunk.
 * Off unless INGEST_WORKER_THREADS is set: on a
 * two-core machine that also runs the load, it gained nothing measurable and cost about
 * 110 MiB of memory (ADR 0010). Needs the built `chunk-worker.js` beside this file,
 * which `npm install` makes; when it is missing (running from TypeScript sources) the pool is
 * not used.
 */
export function threadChunkWorker(threads: number): ChunkWorker {
  const filename = fileURLToPath(new URL('./chunk-worker.js', import.meta.url));
  if (import.meta.url.endsWith('.ts')) return inlineChunkWorker;
  const pool = new Piscina({
    filename,
    minThreads: 1,
    maxThreads: threads,
    maxQueue: CHUNK_QUEUE_LENGTH_MAX,
    idleTimeout: 60_000,
  });
  return {
    async validate(raw, entity) {
      if (raw.byteLength < CHUNK_WORKER_THRESHOLD_BYTES || pool.queueSize >= CHUNK_QUEUE_LENGTH_MAX) {
        return validateChunkBody(raw, entity.validator);
      }
      const job: ChunkJob = {
        raw,
        entity: entity.definition,
        validatorKey: `${entity.revision}/${entity.definition.namespace}/${entity.definition.name}`,
      };
      const result = (await pool.run(job)) as ChunkJobResult;
      if (!result.ok) throw new AppError(result.code, result.detail, result.extensions);
      return result.chunk;
    },
    close: () => pool.destroy(),
  };
}
