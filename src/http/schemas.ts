import { type TSchema, Type } from '@sinclair/typebox';

/** Page size when the caller gives none, and the most a caller may ask for (contract section 0). */
export const PAGE_LIMIT_DEFAULT = 50;
export const PAGE_LIMIT_MAX = 1000;

export const PageQuery = {
  page: Type.Integer({ minimum: 0, default: 0, description: 'Page number, from 0.' }),
  limit: Type.Integer({
    minimum: 1,
    maximum: PAGE_LIMIT_MAX,
    default: PAGE_LIMIT_DEFAULT,
    description: `Items per page, at most ${PAGE_LIMIT_MAX}.`,
  }),
};

/** The paginated list envelope of contract section 0. */
export function Page<T extends TSchema>(item: T) {
  return Type.Object({
    data: Type.Array(item),
    page: Type.Integer(),
    limit: Type.Integer(),
    totalSize: Type.Integer(),
    totalPages: Type.Integer(),
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
      description: 'Stable URI-like kind of error, e.g. urn:ledgerflow:problem:session-closed.',
    }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    instance: Type.String({ description: 'The request path.' }),
    timestamp: Type.String({ format: 'date-time' }),
    reference: Type.String({ description: 'Id of the request, also on its server log lines.' }),
  },
  { additionalProperties: true, description: 'Problem details (RFC 9457).' },
);

/** The standard error answers of an authenticated endpoint, for the OpenAPI document. */
export const AUTH_ERRORS = { 401: Problem, 403: Problem } as const;
