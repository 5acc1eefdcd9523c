/**
 * Where a page of a list starts: at a page number (read with an OFFSET, so a deep page costs its
 * offset) or after the sort key of a row the caller was given (read from an index, so every page
 * costs the same). docs/decisions.md, "Cursor paging".
 */
export type PageStart<K> = { page: number } | { after: K };

/** One page of a list, and the sort key of its last row when more rows follow (else undefined). */
export interface KeyedPage<T, K> {
  rows: T[];
  next: K | undefined;
}
