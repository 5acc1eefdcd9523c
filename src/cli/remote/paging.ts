import { CliError, EXIT_REFUSED } from '../output.js';
import type { ApiClient } from './client.js';

/** Items asked for per page: the most the service gives. */
export const PAGE_LIMIT = 1000;
/** Pages read at most, a guard against a service whose `totalPages` never ends. */
const PAGES_MAX = 1_000_000;

/**
 * Every item of a paginated list endpoint (`{ data, totalPages }`), page by page in the
 * service's order, with `query` added to each request. The list is not a snapshot: items added
 * while it is read may shift later pages. Throws CliError (exit 1) for an answer without a
 * `data` array.
 */
export async function* pagedItems(
  client: ApiClient,
  path: string,
  query: Record<string, string | number | undefined> = {},
  limit = PAGE_LIMIT,
): AsyncGenerator<unknown> {
  for (let page = 0; page < PAGES_MAX; page += 1) {
    const answer = await client.json({ method: 'GET', path, query: { ...query, page, limit } });
    if (!Array.isArray(answer.data))
      throw new CliError(`GET ${path} answered without a data array`, EXIT_REFUSED);
    yield* answer.data;
    const totalPages = typeof answer.totalPages === 'number' ? answer.totalPages : 0;
    if (answer.data.length === 0 || page + 1 >= totalPages) return;
  }
}
