/**
 * The catalogue of problem kinds (RFC 9457). Every error the service answers with is one of
 * these; `type` is `urn:ledgerflow:problem:<code>` and stays stable once published, so clients
 * can branch on it (docs/reference.md, Errors). Modules throw `AppError` with a code from here; the
 * HTTP layer renders it.
 */
export const PROBLEMS = {
  'validation-failed': { status: 400, title: 'The request is not valid' },
  'malformed-json': { status: 400, title: 'The body is not valid JSON' },
  'unsupported-media-type': { status: 415, title: 'The content type is not supported' },
  'configuration-invalid': { status: 400, title: 'The configuration is not valid' },
  'chunk-invalid': { status: 400, title: 'Records of the chunk failed validation' },
  unauthorized: { status: 401, title: 'Authentication is required' },
  'invalid-token': { status: 401, title: 'The access token is not valid' },
  forbidden: { status: 403, title: 'The caller lacks a permission' },
  'not-found': { status: 404, title: 'The resource does not exist' },
  'entity-not-found': { status: 404, title: 'The entity does not exist' },
  'session-not-found': { status: 404, title: 'The ingestion session does not exist' },
  'method-not-allowed': { status: 405, title: 'The method is not allowed on this resource' },
  conflict: { status: 409, title: 'The request conflicts with the current state' },
  'session-closed': { status: 409, title: 'The ingestion session is closed' },
  'session-expired': { status: 409, title: 'The ingestion session has expired' },
  'configuration-changed': {
    status: 412,
    title: 'The configuration changed since the revision the request names',
  },
  'payload-too-large': { status: 413, title: 'The body is larger than allowed' },
  'idempotency-key-reused': {
    status: 422,
    title: 'The idempotency key was used before with another body',
  },
  'too-many-requests': { status: 429, title: 'Too many requests' },
  internal: { status: 500, title: 'Internal error' },
  unavailable: { status: 503, title: 'The service is not ready' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemCode = keyof typeof PROBLEMS;

/** URI-like `type` of a problem code. */
export function problemType(code: ProblemCode): string {
  return `urn:ledgerflow:problem:${code}`;
}

/**
 * An error with a problem code, a human detail and optional extension members (for example
 * `errors`). Thrown by modules; rendered as problem+json by the HTTP layer.
 */
export class AppError extends Error {
  readonly code: ProblemCode;
  readonly status: number;
  readonly extensions: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    code: ProblemCode,
    detail: string,
    extensions: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'AppError';
    this.code = code;
    this.status = PROBLEMS[code].status;
    this.extensions = extensions;
    this.headers = headers;
  }
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
  const { status, title } = PROBLEMS[code];
  return {
    type: problemType(code),
    title,
    status,
    detail,
    instance: context.instance,
    timestamp: context.timestamp ?? new Date().toISOString(),
    reference: context.reference,
    ...extensions,
  };
}
