import { type TSchema, Type } from '@sinclair/typebox';
import { calendarDay, PATH_PARAM_LENGTH_MAX, StoredNameFilter } from '../../lib/input-rule.js';

export { PATH_PARAM_LENGTH_MAX, StoredNameFilter };

/** Page size when the caller gives none, and the most a caller may ask for (docs/reference.md, Conventions). */
export const PAGE_LIMIT_DEFAULT = 50;
export const PAGE_LIMIT_MAX = 1000;
/**
 * The highest page number a caller may ask for: the offset of its first item (page × limit)
 * stays an exact integer at any page size, so no store is handed an offset it cannot read.
 */
export const PAGE_MAX = Math.floor(Number.MAX_SAFE_INTEGER / PAGE_LIMIT_MAX);

/** A path parameter the route itself bounds no further than the router does. */
export const PathParam = Type.String({ maxLength: PATH_PARAM_LENGTH_MAX });

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
 * The longest `after` cursor: a cursor holds a list name and a sort key of at most three texts
 * no longer than a path parameter, in base64url (`http/api/cursor.ts`), so a longer one was not
 * made by the service.
 */
export const CURSOR_LENGTH_MAX = 1024;

/** The bounds of a cursor: opaque to clients, base64url (`http/api/cursor.ts`). */
const CURSOR = { minLength: 1, maxLength: CURSOR_LENGTH_MAX, pattern: '^[A-Za-z0-9_-]+$' };

/**
 * The query parameter of a list that pages by cursor as well as by page number
 * (docs/decisions.md, Cursor paging), beside `PageQuery`; listed after the filters.
 */
export const AfterQuery = {
  after: Type.Optional(
    Type.String({
      ...CURSOR,
      description:
        'The `next` cursor of the previous answer: the page after it, read from an index at the same cost however deep, without `totalSize`, `totalPages` and `page`; `page` is then not used. An invalid cursor, or one of another list, is a 400 naming `after`.',
    }),
  ),
};

/** What the description of a list that pages by cursor says about its totals. */
export const CURSOR_PAGING_DESCRIPTION =
  'Pages by `page` (with `totalSize` and `totalPages`, counted over every matching item) or by `after` (the `next` cursor of the previous answer, no count, the same cost for every page). Every answer carries `next`, null on the last page.';

/**
 * A calendar day `YYYY-MM-DD` in a query. The `date` format of ajv-formats refuses days that do
 * not exist (`2026-02-30`): this is the one place a date of a request is checked.
 */
export function DateQuery(description: string) {
  return calendarDay({ description, examples: ['2026-01-31'] });
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

/**
 * The envelope of a list that pages by cursor as well: `{ data, limit, next }`, with `page`,
 * `totalSize` and `totalPages` only when it was asked for by page number.
 */
export function CursorPage<T extends TSchema>(item: T) {
  return Type.Object({
    data: Type.Array(item, { maxItems: PAGE_LIMIT_MAX }),
    page: Type.Optional(
      Type.Integer({ minimum: 0, maximum: PAGE_MAX, description: 'Given with page paging only.' }),
    ),
    limit: Type.Integer({ minimum: 1, maximum: PAGE_LIMIT_MAX }),
    totalSize: Type.Optional(Type.Integer({ minimum: 0, description: 'Given with page paging only.' })),
    totalPages: Type.Optional(Type.Integer({ minimum: 0, description: 'Given with page paging only.' })),
    next: Type.Union(
      [Type.String({ ...CURSOR, description: 'The `after` of the next page.' }), Type.Null()],
      {
        description: 'The cursor of the next page (`after`), null on the last page.',
      },
    ),
  });
}

/** Builds the paginated envelope from one page of rows and the total count. */
export function pageOf<T>(data: T[], page: number, limit: number, totalSize: number) {
  return { data, page, limit, totalSize, totalPages: Math.ceil(totalSize / limit) };
}

/**
 * The envelope of one page of a list that pages by cursor: with `total` (page paging) as
 * `pageOf` gives it plus `next`, without it (cursor paging) only `data`, `limit` and `next`.
 */
export function cursorPageOf<T>(
  data: T[],
  limit: number,
  next: string | null,
  counted?: { page: number; total: number },
) {
  return counted === undefined
    ? { data, limit, next }
    : { ...pageOf(data, counted.page, limit, counted.total), next };
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
