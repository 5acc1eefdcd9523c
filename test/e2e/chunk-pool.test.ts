import { afterAll, describe, expect, it } from 'vitest';
import type { Configuration } from '../../src/modules/configuration/model.js';
import { entitiesOf } from '../../src/modules/entities/from-configuration.js';
import { compileRecordValidator } from '../../src/modules/entities/record-validator.js';
import type { ChunkWorker } from '../../src/modules/ingestion/chunk-pool.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { loanRecord, loanRecords } from '../helpers/records.js';

/**
 * The worker-thread pool as the service runs it: loaded from the build (`npm test` builds
 * first), so the worker file is the real `dist/modules/ingestion/chunk-worker.js`.
 */
describe('chunk work on worker threads', async () => {
  const built = (await import(
    new URL('../../dist/modules/ingestion/chunk-pool.js', import.meta.url).href
  )) as typeof import('../../src/modules/ingestion/chunk-pool.js');
  const errors = (await import(
    new URL('../../dist/lib/errors.js', import.meta.url).href
  )) as typeof import('../../src/lib/errors.js');
  const pool: ChunkWorker = built.threadChunkWorker(1);
  afterAll(async () => pool.close());
  const definition = entitiesOf(realisticConfiguration().configuration as unknown as Configuration).find(
    (e) => e.name === 'loanTransaction',
  );
  if (definition === undefined) throw new Error('fixture entity missing');
  const entity = {
    definition,
    validator: compileRecordValidator(definition),
    awaitsProcessing: false,
    revision: 7,
  };

  it('gives the same answer as inline work for a large chunk, failures included', async () => {
    const data = [...loanRecords(600), loanRecord(1, { amount: '1,5', color: 'red' })];
    const raw = Buffer.from(JSON.stringify({ chunkName: 'big', data }));
    expect(raw.byteLength).toBeGreaterThan(built.CHUNK_WORKER_THRESHOLD_BYTES);
    const threaded = await pool.validate(raw, entity);
    const inline = await built.inlineChunkWorker.validate(raw, entity);
    expect(threaded).toEqual(inline);
    expect(threaded).toMatchObject({ chunkName: 'big', totalRows: 601 });
    expect(threaded.accepted.indexes).toHaveLength(600);
    expect(threaded.failed[0]?.errors.map((e) => e.code)).toEqual(['invalid-decimal', 'unknown-field']);
  });

  it('reports a malformed large body as the same problem as inline work', async () => {
    const raw = Buffer.from(`{"data": [${'1,'.repeat(40_000)}`);
    await expect(pool.validate(raw, entity)).rejects.toBeInstanceOf(errors.AppError);
    await expect(pool.validate(raw, entity)).rejects.toMatchObject({ code: 'malformed-json' });
  });
});
