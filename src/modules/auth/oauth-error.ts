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
 * A token endpoint failure (contract 2.1). It is rendered in the OAuth form
 * `{ error, error_description }`, not as problem+json, because OAuth clients expect that.
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
