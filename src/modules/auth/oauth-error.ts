/** The error codes of RFC 6749 section 5.2 that the token endpoint answers with. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type';

/**
 * A token endpoint failure, by its RFC 6749 5.2 error code and a description. The OAuth routes
 * render it in the OAuth form `{ error, error_description, reference }` (RFC 6749 5.2 plus the
 * request id of the log), not as problem+json, because OAuth clients expect that form; the status
 * of each code is theirs too.
 */
export class OAuthError extends Error {
  readonly error: OAuthErrorCode;

  constructor(error: OAuthErrorCode, description: string) {
    super(description);
    this.name = 'OAuthError';
    this.error = error;
  }
}

/** Why a client authentication failed; logged by the server, never told to the caller. */
export type ClientAuthFailure =
  | 'no-credentials'
  | 'too-long'
  | 'unknown-client'
  | 'wrong-secret'
  | 'revoked'
  | 'expired'
  | 'limited'
  | 'owner-disabled'
  | 'owner-without-role';

/**
 * A failed client authentication: the OAuth error the caller sees, plus the client id and the
 * reason for the server log line, so an operator can tell a wrong secret from an expired
 * credential while the answer reveals nothing more than RFC 6749 asks. Never carries the secret.
 * `retryAfterSeconds` is set when the attempt was refused unchecked (`limited`): when the address
 * may try again.
 */
export class ClientAuthError extends OAuthError {
  readonly clientId: string | undefined;
  readonly reason: ClientAuthFailure;
  readonly retryAfterSeconds: number | undefined;

  constructor(
    error: 'invalid_client' | 'unauthorized_client',
    description: string,
    failure: { clientId: string | undefined; reason: ClientAuthFailure; retryAfterSeconds?: number },
  ) {
    super(error, description);
    this.name = 'ClientAuthError';
    this.clientId = failure.clientId;
    this.reason = failure.reason;
    this.retryAfterSeconds = failure.retryAfterSeconds;
  }
}
