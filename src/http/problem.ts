import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ProblemCode } from '../lib/errors.js';
import { ISO_DURATION_PATTERN } from '../lib/iso-duration.js';
import { JSON_BODY_EMPTY_DETAIL } from '../lib/json-body.js';
import { StoreUnavailableError } from '../storage/errors.js';
import { PROBLEM_STATUS, type ProblemContext, problemBody, problemHeaders } from './problems.js';

/** How long a client is asked to wait (`Retry-After`) when the store is unavailable. */
export const STORE_RETRY_AFTER_SECONDS = 5;
/** What a client is told when the store cannot be reached or did not answer in time. */
export const STORE_UNAVAILABLE_DETAIL =
  'the database cannot be reached or did not answer in time; try again shortly';

/** One failed rule of a request body or query, as a JSON Pointer path and a message. */
export interface PathError {
  path: string;
  message: string;
}

interface AjvLikeError {
  instancePath: string;
  schemaPath?: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** How messages name the string formats of request schemas. */
const FORMAT_NAMES: Record<string, string> = {
  date: 'a date YYYY-MM-DD',
  'date-time': 'an RFC 3339 date-time with an offset',
};

/** How messages name the patterns of request schemas, by the pattern's text. */
const PATTERN_NAMES: Record<string, string> = {
  [ISO_DURATION_PATTERN]: 'an ISO 8601 duration of weeks, days, hours, minutes and seconds, such as PT15M',
};

/** The form a `format` or named `pattern` error asks for, as messages name it. */
function formatName(error: AjvLikeError): string | undefined {
  const { format, pattern } = error.params;
  if (error.keyword === 'format' && typeof format === 'string') return FORMAT_NAMES[format] ?? `a ${format}`;
  if (error.keyword === 'pattern' && typeof pattern === 'string') return PATTERN_NAMES[pattern];
  return undefined;
}

function pointerEscape(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** The error of an `anyOf` branch that accepts an empty string. */
function isEmptyAlternative(error: AjvLikeError): boolean {
  return error.keyword === 'const' && error.params.allowedValue === '';
}

/**
 * Folds the errors of an `anyOf` whose branches are string formats (a date or a date-time) into
 * one error that names every accepted form, instead of one error per branch.
 */
function foldFormatAlternatives(errors: readonly AjvLikeError[]): AjvLikeError[] {
  const folded = new Set<AjvLikeError>();
  const result: AjvLikeError[] = [];
  for (const error of errors) {
    if (error.keyword !== 'anyOf' || error.schemaPath === undefined) continue;
    const branchPrefix = `${error.schemaPath}/`;
    const branches = errors.filter((e) => e.schemaPath?.startsWith(branchPrefix));
    // An empty value accepted as "no bound" is not a form worth naming in the message.
    const names = branches.filter((branch) => !isEmptyAlternative(branch)).map(formatName);
    if (branches.length === 0 || names.some((name) => name === undefined)) continue;
    for (const branch of branches) folded.add(branch);
    folded.add(error);
    result.push({ ...error, message: `must be ${[...new Set(names)].join(' or ')}` });
  }
  return [...errors.filter((error) => !folded.has(error)), ...result];
}

/** Turns Ajv errors into JSON Pointer paths that name the field at fault and the rule broken. */
export function ajvErrorsToPaths(errors: readonly AjvLikeError[], prefix = ''): PathError[] {
  return foldFormatAlternatives(errors).map((error) => {
    const base = `${prefix}${error.instancePath}`;
    if (error.keyword === 'required' && typeof error.params.missingProperty === 'string') {
      return { path: `${base}/${pointerEscape(error.params.missingProperty)}`, message: 'is required' };
    }
    if (error.keyword === 'additionalProperties' && typeof error.params.additionalProperty === 'string') {
      return {
        path: `${base}/${pointerEscape(error.params.additionalProperty)}`,
        message: 'is not a known member',
      };
    }
    if (error.keyword === 'enum' && Array.isArray(error.params.allowedValues)) {
      return { path: base, message: `must be one of ${error.params.allowedValues.join(', ')}` };
    }
    const format = formatName(error);
    if (format !== undefined) return { path: base, message: `must be ${format}` };
    return { path: base, message: error.message ?? error.keyword };
  });
}

/** The instance (path) and reference (request id) of a request's problems. */
export function problemContextOf(request: FastifyRequest): ProblemContext {
  return { instance: request.url.split('?')[0] ?? request.url, reference: request.id };
}

/**
 * Sends a problem+json answer (RFC 9457) whose `reference` is the request id, which is also on
 * every log line of the request.
 */
export function sendProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  code: ProblemCode,
  detail: string,
  extensions: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): FastifyReply {
  for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  return reply
    .code(PROBLEM_STATUS[code])
    .type('application/problem+json')
    .send(problemBody(code, detail, problemContextOf(request), extensions));
}

/** A byte count as people read it: `1,048,576 bytes`. */
function bytesText(bytes: number): string {
  return `${bytes.toLocaleString('en-US')} bytes`;
}

/** A failure Fastify raised (validation, body parsing, limits) as a problem code and detail. */
export interface FrameworkProblem {
  code: ProblemCode;
  detail: string;
  extensions?: Record<string, unknown>;
}

/**
 * What a failure Fastify raised means as a problem; `internal` for anything else.
 * `expectedMediaType` is what the route's body must be, named when another was sent (a plugin
 * whose routes take another than JSON says which).
 */
export function frameworkProblem(
  error: FastifyError,
  request: FastifyRequest,
  expectedMediaType = 'application/json',
): FrameworkProblem {
  if (error.validation !== undefined) {
    const context = error.validationContext ?? 'body';
    const prefix = context === 'body' ? '' : `/${context}`;
    const errors = ajvErrorsToPaths(error.validation as AjvLikeError[], prefix);
    const first = errors[0];
    return {
      code: 'validation-failed',
      detail: first === undefined ? 'the request is not valid' : `${first.path || context} ${first.message}`,
      extensions: { errors },
    };
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE': {
      const limit = request.routeOptions.bodyLimit;
      return {
        code: 'payload-too-large',
        detail: `the body is larger than this endpoint accepts: at most ${bytesText(limit)}`,
        extensions: { limitBytes: limit },
      };
    }
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': {
      const sent = request.headers['content-type'];
      const expected = expectedMediaType;
      return {
        code: 'unsupported-media-type',
        detail:
          sent === undefined
            ? `the body has no Content-Type; send it as ${expected}`
            : `the Content-Type ${sent} is not accepted here; send the body as ${expected}`,
      };
    }
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { code: 'malformed-json', detail: 'the body is shorter or longer than its Content-Length' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { code: 'malformed-json', detail: JSON_BODY_EMPTY_DETAIL };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { code: 'malformed-json', detail: error.message };
  }
  if (error instanceof SyntaxError || error.statusCode === 400) {
    return { code: 'malformed-json', detail: `the body is not valid JSON: ${error.message}` };
  }
  if (error.statusCode === 413) return { code: 'payload-too-large', detail: error.message };
  if (error.statusCode === 415) return { code: 'unsupported-media-type', detail: error.message };
  if (error.statusCode === 431 || error.statusCode === 414)
    return { code: 'validation-failed', detail: error.message };
  return { code: 'internal', detail: 'an unexpected error occurred; quote the reference when reporting it' };
}

/**
 * Answers the errors the router raises before a route runs (a path that is not valid
 * percent-encoded UTF-8, a path segment over the length limit) as problem+json: without it,
 * Fastify answers them in its own JSON form.
 */
export function sendRouterProblem(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const detail =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? 'a path segment is longer than this service accepts'
      : 'the path is not valid: a percent-escape is malformed or is not UTF-8';
  sendProblem(request, reply, 'validation-failed', detail, {
    errors: [{ path: '/params', message: detail }],
  });
}

/**
 * Answers an error as problem+json: an `AppError` with its code, detail, members and hints
 * (`Retry-After`, `WWW-Authenticate`), an unavailable store as 503 with `Retry-After`, a failure
 * Fastify raised by what it means, anything else as 500. Errors of status 500 and above are
 * logged with their stack. The app's error handler; a plugin with an answer form of its own hands
 * it what it does not answer itself.
 */
export function sendErrorProblem(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  if (error instanceof StoreUnavailableError) {
    // Logged once here; the connection that failed is already closed and replaced.
    request.log.warn({ err: error }, 'database unavailable');
    reply.header('retry-after', String(STORE_RETRY_AFTER_SECONDS));
    return sendProblem(request, reply, 'unavailable', STORE_UNAVAILABLE_DETAIL);
  }
  if (error instanceof AppError) {
    if (PROBLEM_STATUS[error.code] >= 500) request.log.error({ err: error }, 'request failed');
    return sendProblem(
      request,
      reply,
      error.code,
      error.message,
      error.extensions,
      problemHeaders(error.hints, error.message),
    );
  }
  const problem = frameworkProblem(error, request);
  if (problem.code === 'internal') request.log.error({ err: error }, 'request failed');
  return sendProblem(request, reply, problem.code, problem.detail, problem.extensions);
}

/** Installs the error and not-found handlers: every failure becomes problem+json. */
export function registerProblemHandlers(app: FastifyInstance): void {
  app.setErrorHandler(sendErrorProblem);
  app.setNotFoundHandler((request, reply) =>
    sendProblem(request, reply, 'not-found', `no resource at ${request.method} ${request.url.split('?')[0]}`),
  );
}
