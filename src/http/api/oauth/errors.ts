import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../../lib/errors.js';
import { ClientAuthError, OAuthError, type OAuthErrorCode } from '../../../modules/auth/oauth-error.js';
import { StoreUnavailableError } from '../../../storage/errors.js';
import {
  frameworkProblem,
  STORE_RETRY_AFTER_SECONDS,
  STORE_UNAVAILABLE_DETAIL,
  sendErrorProblem,
} from '../../problem.js';
import { PROBLEM_STATUS } from '../../problems.js';

/** The media type of the bodies of the token and revocation endpoints. */
export const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

/** The HTTP status of each RFC 6749 5.2 error code. */
const OAUTH_ERROR_STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 403,
  unsupported_grant_type: 400,
};

/**
 * Sends an answer in the OAuth form, `{ error, error_description, reference }` (RFC 6749 5.2 plus
 * the request id of the log lines), never stored by caches (RFC 6749 5.1).
 */
function sendOAuthError(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  error: string,
  description: string,
): FastifyReply {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .send({ error, error_description: description, reference: request.id });
}

/**
 * The error handler of the token and revocation endpoints: their failures are answered in the
 * OAuth form, which OAuth clients expect, rather than as problem+json. An `OAuthError` with its
 * code; a failed client authentication logged with the client id and the reason (never the
 * secret), with `Retry-After` when the address was refused unchecked, and `WWW-Authenticate:
 * Basic` when the client authenticated by HTTP Basic (RFC 6749 5.2). A rate limit and an
 * unavailable store are `temporarily_unavailable` with `Retry-After`: RFC 6749 names no error for
 * them, and 4.1.2.1's says to come back later. A request the framework refused (body, media type)
 * is `invalid_request`. Any other error is answered as everywhere else (problem+json).
 */
export function sendOAuthErrorAnswer(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  if (error instanceof OAuthError) {
    if (error instanceof ClientAuthError) {
      request.log.warn(
        { clientId: error.clientId, reason: error.reason },
        `client authentication failed: ${error.reason}`,
      );
      if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
    }
    if (error.error === 'invalid_client' && /^basic /i.test(request.headers.authorization ?? '')) {
      reply.header('www-authenticate', 'Basic realm="ledgerflow"');
    }
    return sendOAuthError(request, reply, OAUTH_ERROR_STATUS[error.error], error.error, error.message);
  }
  if (error instanceof StoreUnavailableError) {
    // Logged once here; the connection that failed is already closed and replaced.
    request.log.warn({ err: error }, 'database unavailable');
    reply.header('retry-after', String(STORE_RETRY_AFTER_SECONDS));
    return sendOAuthError(
      request,
      reply,
      PROBLEM_STATUS.unavailable,
      'temporarily_unavailable',
      STORE_UNAVAILABLE_DETAIL,
    );
  }
  if (error instanceof AppError && error.code === 'too-many-requests') {
    if (error.hints.retryAfterSeconds !== undefined)
      reply.header('retry-after', String(error.hints.retryAfterSeconds));
    return sendOAuthError(
      request,
      reply,
      PROBLEM_STATUS['too-many-requests'],
      'temporarily_unavailable',
      error.message,
    );
  }
  if (error instanceof AppError && error.code === 'validation-failed') {
    // Text no store can keep (`http/nul-guard.ts`), named as the form field it is in.
    const [first] = (error.extensions.errors as { path: string; message: string }[] | undefined) ?? [];
    const description =
      first === undefined ? error.message : `${first.path.replace(/^\//, '')} ${first.message}`;
    return sendOAuthError(
      request,
      reply,
      PROBLEM_STATUS['validation-failed'],
      'invalid_request',
      description,
    );
  }
  if (error instanceof AppError) return sendErrorProblem(error, request, reply);
  const problem = frameworkProblem(error, request, FORM_MEDIA_TYPE);
  if (problem.code === 'internal') return sendErrorProblem(error, request, reply);
  return reply
    .code(PROBLEM_STATUS[problem.code])
    .header('cache-control', 'no-store')
    .send({ error: 'invalid_request', error_description: problem.detail, reference: request.id });
}
