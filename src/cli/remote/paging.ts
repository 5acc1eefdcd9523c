import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { CursorPage } from '../../http/api/answer-schemas.js';
import type { ApiClient } from './client.js';

/** Items asked for per page: the most the service gives. */
export const PAGE_LIMIT = 1000;
/** Pages read at most, a guard against a service whose pages never end. */
const PAGES_MAX = 1_000_000;

/**
 * Every item of a paginated list endpoint, page by page in the service's order, with `query`
 * added to each request. A list that answers `next` (cursor paging, docs/decisions.md) is walked
 * by it: each page after the first is read after the last item of the one before, so every page
 * costs the service the same, and items added while it is read neither repeat nor shift an
 * item out (those added after the position read appear). A list without `next` is walked by page
 * number up to its `totalPages`; there, items added meanwhile may shift later pages. Throws
 * CliError (exit 1) for a page that does not match the page envelope of `item` (the route's item
 * schema).
 */
export async function* pagedItems<T extends TSchema>(
  client: ApiClient,
  path: string,
  item: T,
  query: Record<string, string | number | undefined> = {},
  limit = PAGE_LIMIT,
): AsyncGenerator<Static<T>> {
  const envelope = CursorPage(item).properties;
  const pageSchema = Type.Object({
    data: envelope.data,
    totalPages: envelope.totalPages,
    next: Type.Optional(envelope.next),
  });
  let after: string | undefined;
  for (let page = 0; page < PAGES_MAX; page += 1) {
    const position = after === undefined ? { page } : { after };
    const answer = await client.json(
      { method: 'GET', path, query: { ...query, ...position, limit } },
      pageSchema,
    );
    yield* answer.data;
    if (answer.data.length === 0) return;
    if (answer.next !== undefined) {
      if (answer.next === null) return;
      after = answer.next;
    } else if (page + 1 >= (answer.totalPages ?? 0)) return;
  }
}
