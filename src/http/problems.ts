import { type BearerRefusal, PROBLEMS, type ProblemCode, type ProblemHints } from '../lib/errors.js';

/**
 * The HTTP status of each problem code (docs/reference.md, Errors): the modules name the rule
 * that was broken (`src/lib/errors.ts`), http says how it answers.
 */
export const PROBLEM_STATUS: { readonly [C in ProblemCode]: number } = {
  'validation-failed': 400,
  'malformed-json': 400,
  'unsupported-media-type': 415,
  'configuration-invalid': 400,
  'chunk-invalid': 400,
  unauthorized: 401,
  'invalid-token': 401,
  forbidden: 403,
  'not-found': 404,
  'entity-not-found': 404,
  'session-not-found': 404,
  'method-not-allowed': 405,
  conflict: 409,
  'session-closed': 409,
  'session-expired': 409,
  'configuration-change-unsafe': 409,
  'configuration-changed': 412,
  'payload-too-large': 413,
  'idempotency-key-reused': 422,
  'nothing-to-reverse': 422,
  'reversal-too-large': 422,
  'posting-date-closed': 422,
  'approval-by-maker': 403,
  'approval-not-pending': 409,
  'approval-invalidated': 409,
  'period-state-conflict': 409,
  'period-work-pending': 409,
  'too-many-requests': 429,
  'extract-not-incremental': 400,
  'redelivery-too-large': 422,
  'invariant-broken': 500,
  internal: 500,
  unavailable: 503,
};

/** URI-like `type` of a problem code, stable once published, so clients can branch on it. */
export function problemType(code: ProblemCode): string {
  return `urn:ledgerflow:problem:${code}`;
}

/**
 * Where and when a problem happened: the request path, the request id (the log reference) and,
 * for an answer given again (an idempotent replay), the time of the first answer.
 */
export interface ProblemContext {
  instance: string;
  reference: string;
  timestamp?: string;
}

/** The problem details body (RFC 9457) with the `timestamp` and `reference` members. */
export function problemBody(
  code: ProblemCode,
  detail: string,
  context: ProblemContext,
  extensions: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    type: problemType(code),
    title: PROBLEMS[code].title,
    status: PROBLEM_STATUS[code],
    detail,
    instance: context.instance,
    timestamp: context.timestamp ?? new Date().toISOString(),
    reference: context.reference,
    ...extensions,
  };
}

/** The `WWW-Authenticate` challenge of a refused bearer token (RFC 6750 3). */
function bearerChallengeOf(refusal: BearerRefusal, detail: string): string {
  switch (refusal) {
    case 'missing':
      return 'Bearer realm="ledgerflow"';
    case 'malformed':
      return 'Bearer realm="ledgerflow", error="invalid_request"';
    case 'invalid':
      return `Bearer error="invalid_token", error_description="${detail}"`;
  }
}

/** The headers that say an error's hints: `WWW-Authenticate`, `Retry-After`. */
export function problemHeaders(hints: ProblemHints, detail: string): Record<string, string> {
  return {
    ...(hints.bearerRefusal === undefined
      ? {}
      : { 'www-authenticate': bearerChallengeOf(hints.bearerRefusal, detail) }),
    ...(hints.retryAfterSeconds === undefined ? {} : { 'retry-after': String(hints.retryAfterSeconds) }),
  };
}
