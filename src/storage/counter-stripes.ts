/**
 * Counter rows that every writer adds to (records per entity, sessions per day and entity) are
 * kept as `COUNTER_STRIPES` rows per key, each session adding to the stripe of its id, and read
 * as their sum. One row per key made every chunk write, processing round and session close of
 * an entity wait in line on PostgreSQL for the one before it to commit: a row lock held through
 * the commit's flush, with the pool's connections waiting behind it (64 clients: a third of the
 * database's busy time was spent so). Striped, two writes meet only when their sessions share a
 * stripe. A session always adds to the same stripe, so what processing takes from a stripe's
 * waiting records is what its chunk writes put there, and no stripe goes below zero.
 */

/** Rows per counter key. */
export const COUNTER_STRIPES = 16;

/** The stripe of a session's counter rows: a 32-bit FNV-1a hash of its id, modulo the stripes. */
export function counterStripe(ingestionId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < ingestionId.length; i += 1) {
    hash ^= ingestionId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % COUNTER_STRIPES;
}
