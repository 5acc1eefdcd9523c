import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { CursorPage } from '../../http/api/answer-schemas.js';
import type { ApiClient } from './client.js';

/** Items asked for per page: the most the service gives. */
export const PAGE_LIMIT = 1000;
/** Pages read at most, a guard against a service whose pages never end. */
const PAGES_MAX = 1_000_000;

/**
 * Every item of a list endpoint that pages by cursor (`{ data, next }`, docs/decisions.md,
 * Cursor paging), page by page in the service's order, with `query` added to each request. Each
 * page after the first is read after the last item of the one before (`after=next`), so every
 * page costs the service the same however deep, and items added while the list is read neither
 * repeat nor push an item out: those added past the position read appear. Throws CliError
 * (exit 1) for a page whose `data` and `next` do not match the envelope of `item` (the route's
 * item schema).
 */
export async function* pagedItems<T extends TSchema>(
  client: ApiClient,
  path: string,
  item: T,
  query: Record<string, string | number | undefined> = {},
  limit = PAGE_LIMIT,
): AsyncGenerator<Static<T>> {
  const pageSchema = Type.Pick(CursorPage(item), ['data', 'next']);
  let after: string | undefined;
  for (let pages = 0; pages < PAGES_MAX; pages += 1) {
    const answer = await client.json({ method: 'GET', path, query: { ...query, after, limit } }, pageSchema);
    yield* answer.data;
    if (answer.next === null || answer.data.length === 0) return;
    after = answer.next;
  }
}
