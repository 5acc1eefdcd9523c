import type { KeyedPage } from '../lib/keyed-page.js';

/**
 * The page of `limit` rows out of `rows`, read with a limit of `limit + 1`: the one row more
 * says whether a next page exists without counting, and the last row kept gives its key.
 */
export function keyedPageOf<R, K>(rows: R[], limit: number, keyOf: (row: R) => K): KeyedPage<R, K> {
  const kept = rows.slice(0, limit);
  const last = kept.at(-1);
  return { rows: kept, next: rows.length > limit && last !== undefined ? keyOf(last) : undefined };
}
