import { type TSchema, Type } from '@sinclair/typebox';

/** Page size when the caller gives none, and the most a caller may ask for (docs/reference.md, Conventions). */
export const PAGE_LIMIT_DEFAULT = 50;
export const PAGE_LIMIT_MAX = 1000;
/**
 * The highest page number a caller may ask for: the offset of its first item (page × limit)
 * stays an exact integer at any page size, so no store is handed an offset it cannot read.
 */
export const PAGE_MAX = Math.floor(Number.MAX_SAFE_INTEGER / PAGE_LIMIT_MAX);

/**
 * Longest path parameter: the router refuses a longer path segment before any route runs
 * (`maxParamLength` in `http/app.ts`), so every path parameter carries this bound.
 */
export const PATH_PARAM_LENGTH_MAX = 200;

/** A path parameter the route itself bounds no further than the router does. */
export const PathParam = Type.String({ maxLength: PATH_PARAM_LENGTH_MAX });

/**
 * A query filter compared with session ids, session namespaces and entities, or processing
 * error codes: every stored one is no longer than a path parameter (ids and names are bounded
 * when they are made, codes are a closed list), so a longer value could match nothing and is
 * refused with a 400 naming it instead of an empty page (docs/decisions.md, HTTP in general).
 */
export const StoredNameFilter = Type.String({ maxLength: PATH_PARAM_LENGTH_MAX });

/** The `page` and `limit` query parameters of every paginated list. */
export const PageQuery = {
  page: Type.Integer({
    minimum: 0,
    maximum: PAGE_MAX,
    default: 0,
    description: `Page number, from 0 to ${PAGE_MAX}.`,
  }),
  limit: Type.Integer({
    minimum: 1,
    maximum: PAGE_LIMIT_MAX,
    default: PAGE_LIMIT_DEFAULT,
    description: `Items per page, at most ${PAGE_LIMIT_MAX}.`,
  }),
};

/**
 * A calendar day `YYYY-MM-DD` in a query. The `date` format of ajv-formats refuses days that do
 * not exist (`2026-02-30`): this is the one place a date of a request is checked.
 */
export function DateQuery(description: string) {
  return Type.String({ format: 'date', description, examples: ['2026-01-31'] });
}

/**
 * A date (midnight UTC) or an RFC 3339 date-time with an offset, in a query; an empty value is
 * no bound (what a form sends for a field left blank).
 */
export function InstantQuery(description: string) {
  const empty = Type.Literal('', { description: 'No bound.' });
  return Type.Union([Type.String({ format: 'date' }), Type.String({ format: 'date-time' }), empty], {
    description,
    examples: ['2026-01-31', '2026-01-31T10:15:00Z'],
  });
}

/** The paginated list envelope: `{ data, page, limit, totalSize, totalPages }`. */
export function Page<T extends TSchema>(item: T) {
  return Type.Object({
    data: Type.Array(item, { maxItems: PAGE_LIMIT_MAX }),
    page: Type.Integer({ minimum: 0, maximum: PAGE_MAX }),
    limit: Type.Integer({ minimum: 1, maximum: PAGE_LIMIT_MAX }),
    totalSize: Type.Integer({ minimum: 0 }),
    totalPages: Type.Integer({ minimum: 0 }),
  });
}

/** Builds the paginated envelope from one page of rows and the total count. */
export function pageOf<T>(data: T[], page: number, limit: number, totalSize: number) {
  return { data, page, limit, totalSize, totalPages: Math.ceil(totalSize / limit) };
}

/** A problem details body (RFC 9457) as documented in the OpenAPI document. */
export const Problem = Type.Object(
  {
    type: Type.String({
      pattern: '^urn:ledgerflow:problem:[a-z-]+$',
      description: 'Stable URI-like kind of error, e.g. urn:ledgerflow:problem:session-closed.',
    }),
    title: Type.String(),
    status: Type.Integer({ minimum: 400, maximum: 599 }),
    detail: Type.String(),
    instance: Type.String({ description: 'The request path.' }),
    timestamp: Type.String({ format: 'date-time' }),
    reference: Type.String({ description: 'Id of the request, also on its server log lines.' }),
  },
  { additionalProperties: true, description: 'Problem details (RFC 9457).' },
);
