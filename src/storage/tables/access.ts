/**
 * The rows of who may call the service: users, client credentials, tokens, the administration
 * interface's sign-ins, and the counts behind authentication limits.
 */
import type { Generated } from 'kysely';

export interface UsersTable {
  email: string;
  display_name: string;
  password_hash: string | null;
  roles: string;
  disabled: number;
  created_at: string;
}

export interface CredentialsTable {
  client_id: string;
  secret_hash: string;
  owner_email: string;
  name: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  /** When the credential last obtained a token; null when never (or before the column existed). */
  last_used_at: Generated<string | null>;
}

/** Sign-ins of the administration interface (migration 0004, renamed by 0011). */
export interface AdminSignInsTable {
  /** The SHA-256 of the sign-in's cookie value, never the value. */
  sign_in_hash: string;
  user_email: string;
  created_at: string;
  last_seen_at: string;
  /** The idle deadline, never later than `ends_at`. */
  expires_at: string;
  /** The absolute deadline, however active the session is. */
  ends_at: string;
}

/** What a sign-in is shown once, sealed under its cookie value (migration 0010, renamed by 0011). */
export interface AdminOneTimeViewsTable {
  /** Orders a sign-in's views, oldest first. */
  id: Generated<number>;
  sign_in_hash: string;
  /** What the view is of, within the sign-in (a new credential's client id). */
  view_key: string;
  /** The value, sealed under a key derived from the session's cookie value. */
  sealed: string;
  expires_at: string;
}

/** Failed authentications of one key in one fixed window (migration 0005). */
export interface AuthFailuresTable {
  /** SHA-256 of the counted key: a client id or e-mail with an address, or an address. */
  key_hash: string;
  /** Epoch milliseconds at which the window began. */
  window_started_ms: number;
  failures: number;
}

/** Requests of one key in its current fixed window, for the per-client rate limit (migration 0006). */
export interface RequestCountsTable {
  /** SHA-256 of the counted key: a client id or an address, with its kind. */
  key_hash: string;
  /** Epoch milliseconds at which the window began, a multiple of the window length. */
  window_started_ms: number;
  requests: number;
}

export interface TokenFamiliesTable {
  family_id: string;
  client_id: string;
  created_at: string;
  revoked_at: string | null;
}

export interface OAuthTokensTable {
  token_hash: string;
  kind: 'access' | 'refresh';
  family_id: string;
  client_id: string;
  issued_at: string;
  expires_at: string;
  used_at: string | null;
  revoked_at: string | null;
  /**
   * A used refresh token: the answer of the refresh that used it, AES-256-GCM under a key derived
   * from the token (never the token or the answer in clear), kept for the reuse grace window
   * (migration 0006); else null.
   */
  answer_sealed: Generated<string | null>;
}

/**
 * Failed sign-ins counted per user (or `*unknown*`) and hour until the hour's entry is written
 * to the audit trail (`storage/sign-in-store.ts`).
 */
export interface SignInFailureTalliesTable {
  subject: string;
  window_started_at: string;
  failures: number;
}
