import { type AuditActor, systemActor } from '../audit/entry.js';

/**
 * Who the audit trail names for a tally of failed sign-ins: the service, which writes one when
 * its counting window ends.
 */
export const SIGN_IN_FAILURES_ACTOR: AuditActor = systemActor('a counting window of failed sign-ins ended');

/** A user as stored (docs/reference.md, Users, roles and credentials). */
export interface UserRow {
  email: string;
  displayName: string;
  passwordHash: string | null;
  roles: string[];
  disabled: boolean;
  createdAt: string;
}

/** A credential as stored; the secret exists only as its slow hash. */
export interface CredentialRow {
  clientId: string;
  secretHash: string;
  ownerEmail: string;
  name: string;
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
  /** When the credential last obtained a token, or null when never. */
  lastUsedAt: string | null;
}

/** A token as stored: only its SHA-256, never the token itself. */
export interface TokenRow {
  tokenHash: string;
  kind: 'access' | 'refresh';
  familyId: string;
  clientId: string;
  issuedAt: string;
  expiresAt: string;
  usedAt: string | null;
  revokedAt: string | null;
}

/** A token as `findToken` reads it: with its family's revocation and, once used, its sealed answer. */
export interface StoredToken extends TokenRow {
  familyRevokedAt: string | null;
  /**
   * A used refresh token: the answer of the refresh that used it, encrypted under a key derived
   * from the token itself (`modules/auth/sealed-answer.ts`), until the purge forgets it; else null.
   */
  answerSealed: string | null;
}

/** Everything needed to decide whether an access token may call the API, in one read. */
export interface TokenGrantView {
  token: TokenRow;
  familyRevokedAt: string | null;
  credential: CredentialRow;
  owner: UserRow;
}

/** A credential with its owner, in one read. */
export interface CredentialWithOwner {
  credential: CredentialRow;
  owner: UserRow;
}

/** What a change of a user may change; absent members stay as they are. */
export interface UserChange {
  roles?: string[];
  disabled?: boolean;
  displayName?: string;
}

/**
 * The users and credentials as their changes write them, inside the change runner's transaction
 * (`modules/changes/runner.ts`; implemented in `storage/access-tables.ts`): rows, not rules, with
 * no transaction of their own and no audit entry (the runner writes it). The rules are
 * `access-changes.ts`'s.
 */
export interface AccessTables {
  findUser(email: string): Promise<UserRow | undefined>;
  /** Inserts a user; false, and nothing written, when the e-mail exists already. */
  insertUser(user: UserRow): Promise<boolean>;
  /**
   * The user as it is, locked on PostgreSQL until the transaction ends (after any holders of
   * `lockEnabledHolders`, the one lock order); undefined when no user has this e-mail.
   */
  lockUser(email: string): Promise<UserRow | undefined>;
  /** Changes a user that exists (`lockUser` found it) and returns it as it is now. */
  updateUser(email: string, change: UserChange): Promise<UserRow>;
  /**
   * The e-mails of the enabled holders of `role`, in e-mail order, locked in that order on
   * PostgreSQL, so concurrent changes queue here and each sees who still holds the role (SQLite
   * runs one write transaction at a time). Taken before `lockUser`.
   */
  lockEnabledHolders(role: string): Promise<string[]>;
  findCredential(clientId: string): Promise<CredentialRow | undefined>;
  /**
   * Inserts a credential, or replaces the secret hash, owner and expiry of an existing one and
   * clears its revocation (bootstrap); returns it as it was (undefined when new) and as it is now.
   */
  upsertCredential(
    credential: CredentialRow,
  ): Promise<{ previous: CredentialRow | undefined; row: CredentialRow }>;
  /**
   * Marks a credential revoked at `at` and returns it revoked; `'already-revoked'` (nothing
   * changed) when it was revoked before, undefined when it does not exist.
   */
  revokeCredential(clientId: string, at: string): Promise<CredentialRow | 'already-revoked' | undefined>;
}

/**
 * The storage port of the auth module's reads and of the writes that are not changes of the
 * change runner, implemented in `storage/auth-store.ts` (the users' and credentials' changes
 * write `AccessTables`). Every method is one statement or one transaction, safe when several
 * instances share one database.
 */
export interface AuthStore {
  findUser(email: string): Promise<UserRow | undefined>;
  listUsers(page: number, limit: number): Promise<{ rows: UserRow[]; total: number }>;
  countUsers(): Promise<number>;
  /**
   * Replaces a user's password hash and ends every sign-in session of that user, with the audit
   * entry (`users.set-password`: whether the password was `generated`, how many sign-ins ended;
   * never the password or its hash), in one transaction; returns false (and changes nothing)
   * when no user has this e-mail.
   */
  setPassword(
    email: string,
    passwordHash: string,
    audit: { actor: AuditActor; at: string; generated: boolean },
  ): Promise<boolean>;

  findCredential(clientId: string): Promise<CredentialRow | undefined>;
  /** A credential and its owner in one read (a token request checks both). */
  findCredentialWithOwner(clientId: string): Promise<CredentialWithOwner | undefined>;
  listCredentials(page: number, limit: number): Promise<{ rows: CredentialRow[]; total: number }>;
  /** Records that the credential authenticated successfully at `at`. */
  markCredentialUsed(clientId: string, at: string): Promise<void>;

  /** Stores a new token family with its first tokens, in one statement on PostgreSQL. */
  insertFamily(familyId: string, clientId: string, at: string, tokens: TokenRow[]): Promise<void>;
  findToken(tokenHash: string): Promise<StoredToken | undefined>;
  /** The access-check view of a token, or undefined when no such token exists. */
  findGrant(tokenHash: string): Promise<TokenGrantView | undefined>;
  /**
   * Spends a refresh token in one transaction: marks it used at `at` with `answerSealed`, only if
   * it was not used before, and stores `tokens`, the new tokens of that answer. Returns false and
   * stores nothing when another request used it first; that request's answer is then readable
   * with `findToken`, since both are written in one statement. On PostgreSQL the whole rotation
   * is one statement.
   */
  rotateRefreshToken(
    tokenHash: string,
    at: string,
    answerSealed: string | null,
    tokens: TokenRow[],
  ): Promise<boolean>;
  /** Forgets the sealed answers of refresh tokens used before `usedBefore`; returns how many. */
  forgetSealedAnswers(usedBefore: string): Promise<number>;
  revokeFamily(familyId: string, at: string): Promise<void>;
  revokeToken(tokenHash: string, at: string): Promise<void>;
  /** Deletes tokens that expired before `before`; returns how many. */
  purgeExpiredTokens(before: string): Promise<number>;

  /**
   * Adds one failure to the counter of `keyHash` in one atomic statement: a window that began
   * `windowMs` or longer before `nowMs` starts again at `nowMs` with this failure. Returns the
   * count including this one and when its window began, as every instance sees them.
   */
  countAuthFailure(keyHash: string, nowMs: number, windowMs: number): Promise<AuthFailureCount>;
  /** The failures counted for `keyHash` in the window that is open at `nowMs` (0 when none). */
  readAuthFailures(keyHash: string, nowMs: number, windowMs: number): Promise<number>;
  /** Takes back one failure counted for `keyHash` (never below zero). */
  uncountAuthFailure(keyHash: string): Promise<void>;
  /** Forgets the counter of `keyHash`. */
  clearAuthFailures(keyHash: string): Promise<void>;
  /** Deletes counters whose window began before `beforeMs`; returns how many. */
  purgeAuthFailures(beforeMs: number): Promise<number>;
}

/** Requests of one key in one window that an instance adds to the shared count. */
export interface RequestCountUpdate {
  /** SHA-256 of the counted key (a client id or an address, with its kind). */
  keyHash: string;
  /** Epoch milliseconds at which the window began; windows are aligned, so instances agree. */
  windowStartedMs: number;
  requests: number;
}

/**
 * The storage port of the request limiter (`request-limiter.ts`), implemented in
 * `storage/request-count-store.ts`: one counter per key, shared by every instance of the store.
 */
export interface RequestCountStore {
  /**
   * Adds each update to its key's counter in one statement: a counter of an older window starts
   * again with the update, one of a newer window is left as it is. Returns, by key hash, the
   * counter as it stands after the statement, with the window it counts.
   */
  addRequestCounts(
    updates: readonly RequestCountUpdate[],
  ): Promise<Map<string, { windowStartedMs: number; requests: number }>>;
  /** Deletes counters of windows that began before `beforeMs`; returns how many. */
  purgeRequestCounts(beforeMs: number): Promise<number>;
}

/** One failure counter as it stands after counting. */
export interface AuthFailureCount {
  failures: number;
  windowStartedMs: number;
}

/** A sign-in session of the administration interface as stored: never the cookie value. */
export interface SignInRow {
  sessionHash: string;
  userEmail: string;
  createdAt: string;
  lastSeenAt: string;
  /** The idle deadline, never later than `endsAt`. */
  expiresAt: string;
  /** The absolute deadline. */
  endsAt: string;
}

/** Something a sign-in session is shown once, as stored: the value only sealed. */
export interface OneTimeViewRow {
  sessionHash: string;
  /** What the view is of, within the session (a new credential's client id). */
  key: string;
  /** The value, sealed under a key derived from the session's cookie value. */
  sealed: string;
  expiresAt: string;
}

/**
 * The storage port of sign-in sessions and of what they are shown once, implemented in
 * `storage/sign-in-store.ts`. Both live in the database, so every instance sharing it knows
 * them.
 */
export interface SignInStore {
  /**
   * Stores a new session with the sign-in's audit entry (`auth.sign-in`, by its user, with the
   * address it came from) in one transaction.
   */
  insert(session: SignInRow, address: string | null): Promise<void>;
  /**
   * Counts one failed sign-in of `subject` (a user's e-mail, or `SIGN_IN_UNKNOWN_SUBJECT`) in
   * the window that began at `windowStartedAt`, in one statement.
   */
  countFailure(subject: string, windowStartedAt: string): Promise<void>;
  /**
   * Turns the failure counts of every window that began at or before `windowsStartedBy` into
   * audit entries (`auth.sign-in-failures`, one per subject and window, at `at`) and forgets
   * them, in one transaction: of several instances flushing at once, one writes each count.
   * Returns how many entries were written.
   */
  flushFailures(windowsStartedBy: string, windowMs: number, at: string): Promise<number>;
  /** The session and its user, when the session exists and has not expired at `now`. */
  find(sessionHash: string, now: string): Promise<{ session: SignInRow; user: UserRow } | undefined>;
  /** Moves the idle deadline. */
  touch(sessionHash: string, lastSeenAt: string, expiresAt: string): Promise<void>;
  delete(sessionHash: string): Promise<void>;
  /** Deletes sessions that expired before `before`; returns how many. */
  purgeExpired(before: string): Promise<number>;
  /**
   * Keeps a one-time view in one transaction: replaces the session's view under the same key,
   * then drops the session's oldest views past `perSessionMax`. Keeps nothing when the session
   * no longer exists (signed out meanwhile), since its views go with it.
   */
  putOneTimeView(view: OneTimeViewRow, perSessionMax: number): Promise<void>;
  /**
   * Deletes the session's view under `key` and returns it, expired or not, in one statement, so
   * that of concurrent takers on any instance at most one gets it; undefined when there is none.
   */
  takeOneTimeView(sessionHash: string, key: string): Promise<OneTimeViewRow | undefined>;
  /** Deletes one-time views that expired before `before`; returns how many. */
  purgeOneTimeViews(before: string): Promise<number>;
}
