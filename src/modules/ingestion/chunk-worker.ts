/**
 * Worker-thread entry of the chunk pool (ADR 0010): parses and validates one chunk. Validators
 * are compiled here from the entity definition once per configuration revision and kept for
 * the next chunks of the same entity.
 */

import { AppError } from '../../lib/errors.js';
import type { EntityDefinition } from '../entities/entity.js';
import { compileRecordValidator, type RecordValidator } from '../entities/record-validator.js';
import { type ValidatedChunk, validateChunkBody } from './validated-chunk.js';

/** Compiled validators kept per worker (entities of recent revisions). */
const VALIDATORS_CACHED_MAX = 64;
const validators = new Map<string, RecordValidator>();

/** One job: the raw body, and the entity with a key naming its revision. */
export interface ChunkJob {
  raw: Uint8Array;
  entity: EntityDefinition;
  validatorKey: string;
}

/** A job's answer: the work, or the problem that stopped it (errors do not cross threads as classes). */
export type ChunkJobResult =
  | { ok: true; chunk: ValidatedChunk }
  | { ok: false; code: AppError['code']; detail: string; extensions: Record<string, unknown> };

export default function runChunkJob(job: ChunkJob): ChunkJobResult {
  let validator = validators.get(job.validatorKey);
  if (validator === undefined) {
    if (validators.size >= VALIDATORS_CACHED_MAX) validators.clear();
    validator = compileRecordValidator(job.entity);
    validators.set(job.validatorKey, validator);
  }
  try {
    return { ok: true, chunk: validateChunkBody(job.raw, validator) };
  } catch (error) {
    if (error instanceof AppError)
      return { ok: false, code: error.code, detail: error.message, extensions: error.extensions };
    throw error;
  }
}
