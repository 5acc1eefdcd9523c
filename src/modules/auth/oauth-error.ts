/** The error codes of RFC 6749 section 5.2 that the token endpoint answers with. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type';

const STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 403,
  unsupported_grant_type: 400,
};

/**
 * A token endpoint failure. It is rendered in the OAuth form `{ error, error_description,
 * reference }` (RFC 6749 5.2 plus the request id of the log), not as problem+json, because OAuth
 * clients expect that form.
 */
export class OAuthError extends Error {
  readonly error: OAuthErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(error: OAuthErrorCode, description: string, headers: Record<string, string> = {}) {
    super(description);
    this.name = 'OAuthError';
    this.error = error;
    this.status = STATUS[error];
    this.headers = headers;
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
 */
export class ClientAuthError extends OAuthError {
  readonly clientId: string | undefined;
  readonly reason: ClientAuthFailure;

  constructor(
    error: 'invalid_client' | 'unauthorized_client',
    description: string,
    failure: { clientId: string | undefined; reason: ClientAuthFailure },
    headers: Record<string, string> = {},
  ) {
    super(error, description, headers);
    this.name = 'ClientAuthError';
    this.clientId = failure.clientId;
    this.reason = failure.reason;
  }
}
