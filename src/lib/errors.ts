/**
 * The catalogue of problem kinds: every error the service answers with is one of these codes,
 * each naming the rule that was broken, with the title its answers carry. Codes stay stable once
 * published, so clients can branch on them (docs/reference.md, Errors). Modules throw `AppError`
 * with a code from here and speak no HTTP: the status of each code and the wire form (RFC 9457
 * problem+json, `urn:ledgerflow:problem:<code>`) are `src/http/problems.ts`'s.
 */
export const PROBLEMS = {
  'validation-failed': { title: 'The request is not valid' },
  'malformed-json': { title: 'The body is not valid JSON' },
  'unsupported-media-type': { title: 'The content type is not supported' },
  'configuration-invalid': { title: 'The configuration is not valid' },
  'chunk-invalid': { title: 'Records of the chunk failed validation' },
  unauthorized: { title: 'Authentication is required' },
  'invalid-token': { title: 'The access token is not valid' },
  forbidden: { title: 'The caller lacks a permission' },
  'not-found': { title: 'The resource does not exist' },
  'entity-not-found': { title: 'The entity does not exist' },
  'session-not-found': { title: 'The ingestion session does not exist' },
  'method-not-allowed': { title: 'The method is not allowed on this resource' },
  conflict: { title: 'The request conflicts with the current state' },
  'session-closed': { title: 'The ingestion session is closed' },
  'session-expired': { title: 'The ingestion session has expired' },
  'configuration-change-unsafe': { title: 'The configuration change conflicts with the stored data' },
  'configuration-changed': { title: 'The configuration changed since the revision the request names' },
  'payload-too-large': { title: 'The body is larger than allowed' },
  'idempotency-key-reused': { title: 'The idempotency key was used before with another body' },
  'nothing-to-reverse': { title: 'The selection matched no journal' },
  'reversal-too-large': { title: 'The selection holds more journals than one reversal may' },
  'posting-date-closed': { title: 'The posting date cannot date a reversal' },
  'approval-by-maker': { title: 'The maker of a request cannot decide it' },
  'approval-not-pending': { title: 'The approval request is not pending approval' },
  'approval-invalidated': { title: 'The data the approval was bound to has changed' },
  'period-state-conflict': { title: "The period's state does not allow the change" },
  'period-work-pending': { title: 'Work dated in the period is still pending' },
  'too-many-requests': { title: 'Too many requests' },
  'extract-not-incremental': { title: 'The extraction configuration is not incremental' },
  'redelivery-too-large': { title: 'More events than one redelivery may queue' },
  'invariant-broken': { title: 'A rule of the books would have been broken: nothing was changed' },
  internal: { title: 'Internal error' },
  unavailable: { title: 'The service is not ready' },
} as const satisfies Record<string, { title: string }>;

export type ProblemCode = keyof typeof PROBLEMS;

/**
 * Why a bearer access token (RFC 6750) was refused: `missing`, no token was sent; `malformed`,
 * the request does not carry one as RFC 6750 2.1 says; `invalid`, the token is unknown,
 * expired or revoked (the error's detail says which). http answers each with its own challenge
 * (RFC 6750 3).
 */
export type BearerRefusal = 'missing' | 'malformed' | 'invalid';

/**
 * What an error tells the caller besides its code, detail and members, as facts of the rules;
 * http renders them (`Retry-After`, `WWW-Authenticate`).
 */
export interface ProblemHints {
  /** Seconds after which the same request may succeed (a limit that refused it). */
  retryAfterSeconds?: number;
  /** The error refuses a bearer token, for this reason. */
  bearerRefusal?: BearerRefusal;
}

/**
 * An error with a problem code, a human detail, optional extension members (for example
 * `errors`) and hints. Thrown by modules; rendered as problem+json by the HTTP layer.
 */
export class AppError extends Error {
  readonly code: ProblemCode;
  readonly extensions: Record<string, unknown>;
  readonly hints: ProblemHints;

  constructor(
    code: ProblemCode,
    detail: string,
    extensions: Record<string, unknown> = {},
    hints: ProblemHints = {},
  ) {
    super(detail);
    this.name = 'AppError';
    this.code = code;
    this.extensions = extensions;
    this.hints = hints;
  }
}
