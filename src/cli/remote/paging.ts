import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Page } from '../../http/api/answer-schemas.js';
import type { ApiClient } from './client.js';

/** Items asked for per page: the most the service gives. */
export const PAGE_LIMIT = 1000;
/** Pages read at most, a guard against a service whose `totalPages` never ends. */
const PAGES_MAX = 1_000_000;

/**
 * Every item of a paginated list endpoint (`{ data, totalPages }`), page by page in the
 * service's order, with `query` added to each request. The list is not a snapshot: items added
 * while it is read may shift later pages. Throws CliError (exit 1) for a page whose `data` and
 * `totalPages` do not match the page envelope of `item` (the route's item schema).
 */
export async function* pagedItems<T extends TSchema>(
  client: ApiClient,
  path: string,
  item: T,
  query: Record<string, string | number | undefined> = {},
  limit = PAGE_LIMIT,
): AsyncGenerator<Static<T>> {
  const pageSchema = Type.Pick(Page(item), ['data', 'totalPages']);
  for (let page = 0; page < PAGES_MAX; page += 1) {
    const answer = await client.json({ method: 'GET', path, query: { ...query, page, limit } }, pageSchema);
    yield* answer.data;
    if (answer.data.length === 0 || page + 1 >= answer.totalPages) return;
  }
}
