import { createHash, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../lib/clock.js';
import { newOpaqueToken, sha256Hex } from '../../lib/ids.js';
import { type UserView, userView } from './access-directory.js';
import { FailureLimiter, type Wait } from './failure-limiter.js';
import { type Permission, permissionsOf } from './permissions.js';
import { openSealed, seal } from './sealed-answer.js';
import { dummyHash, verifySecret } from './secret-hash.js';
import type { AuthStore, SignInRow, SignInStore } from './store.js';

/** The start of the failure-count window that holds `ms` (epoch milliseconds), as an ISO instant. */
function windowStartOf(ms: number): string {
  return new Date(Math.floor(ms / SIGN_IN_FAILURE_WINDOW_MS) * SIGN_IN_FAILURE_WINDOW_MS).toISOString();
}

/** A sign-in session ends after this long without a request. */
export const WEB_SESSION_IDLE_MS = 30 * 60 * 1000;
/** A sign-in session ends this long after sign-in, however active it is. */
export const WEB_SESSION_LIFETIME_MAX_MS = 12 * 3600 * 1000;
/** The idle deadline is moved at most this often, so that browsing is not a write per page. */
export const WEB_SESSION_TOUCH_INTERVAL_MS = 60 * 1000;
/** Longest password or e-mail accepted at sign-in; longer ones are refused before hashing. */
export const SIGN_IN_FIELD_LENGTH_MAX = 256;
/** How long something kept for a session's one view waits to be shown, from when it was kept. */
export const ONE_TIME_VIEW_TTL_MS = 5 * 60 * 1000;
/** Most one-time views a session has waiting; keeping another drops the oldest. */
export const ONE_TIME_VIEWS_PER_SESSION_MAX = 10;
/**
 * Failed sign-ins are counted per user and window of this length, and each window's count is
 * written to the audit trail once it has ended: one entry per user and hour, however many
 * attempts (docs/adr/0026-audit-trail.md).
 */
export const SIGN_IN_FAILURE_WINDOW_MS = 3600 * 1000;
/**
 * The subject of failed sign-ins with an e-mail that names no user: what was typed is never
 * kept, since people type their password into the e-mail field.
 */
export const SIGN_IN_UNKNOWN_SUBJECT = '(unknown user)';

/**
 * The CSRF token of a session, derived from its cookie value: SHA-256 over a label and the value,
 * so the token is fixed for the session, differs from the stored session hash, and cannot be
 * computed from anything the store holds.
 */
export function csrfTokenOf(sessionId: string): string {
  return createHash('sha256').update('ledgerflow csrf\u0000').update(sessionId).digest('base64url');
}

/** A signed-in user as every page and action sees them, with the permissions of their roles now. */
export interface WebPrincipal {
  user: UserView;
  permissions: ReadonlySet<Permission>;
  csrfToken: string;
  sessionHash: string;
}

/** The outcome of a sign-in; failures say only what the person may be told. */
export type SignInResult =
  | { ok: true; sessionId: string; principal: WebPrincipal }
  | { ok: false; reason: 'invalid' | 'disabled' | 'no-role' }
  | { ok: false; reason: 'limited'; retryAfterSeconds: number };

/** True when two CSRF tokens are equal, compared in constant time. */
export function csrfTokenMatches(expected: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Sign-in sessions of the administration interface: e-mail and password, server-side sessions
 * named by a random cookie value of which only the SHA-256 is stored, idle and absolute expiry,
 * and a CSRF token per session derived from the cookie value ({@link csrfTokenOf}), so the store
 * holds neither. Failed sign-ins are limited per (e-mail, address) and per
 * address as failed client authentications are (`FailureLimiter`): repeated failures slow the
 * next attempts down, the right password still signs in, and only a flood from one address is
 * refused before any password is hashed. A session's one-time views (`keepForOneView`) are
 * stored sealed under its cookie value.
 */
export class SignIns {
  readonly #users: AuthStore;
  readonly #sessions: SignInStore;
  readonly #clock: Clock;
  readonly #failures: FailureLimiter;

  /** `wait` holds slowed sign-in attempts (tests record instead of sleeping). */
  constructor(users: AuthStore, sessions: SignInStore, clock: Clock, wait?: Wait) {
    this.#users = users;
    this.#sessions = sessions;
    this.#clock = clock;
    this.#failures = new FailureLimiter(users, 'sign-in', wait);
  }

  /** Checks e-mail and password and opens a session; the cookie value is returned this once. */
  async signIn(email: string, password: string, address: string | undefined): Promise<SignInResult> {
    const now = this.#clock.now();
    const key = email.toLowerCase().slice(0, SIGN_IN_FIELD_LENGTH_MAX);
    const attempt = await this.#failures.admit(key, address, now.getTime());
    const { retryAfterSeconds } = attempt;
    if (retryAfterSeconds > 0) return { ok: false, reason: 'limited', retryAfterSeconds };
    await this.#failures.hold(attempt);
    const fail = async (subject: string): Promise<SignInResult> => {
      await Promise.all([
        this.#failures.failed(attempt, now.getTime()),
        this.#sessions.countFailure(subject, windowStartOf(now.getTime())),
      ]);
      return { ok: false, reason: 'invalid' };
    };
    if (email.length > SIGN_IN_FIELD_LENGTH_MAX || password.length > SIGN_IN_FIELD_LENGTH_MAX)
      return fail(SIGN_IN_UNKNOWN_SUBJECT);
    const user = await this.#users.findUser(key);
    const hash = user?.passwordHash ?? null;
    // Spend the same time when the user is unknown or has no password, so timing reveals nothing.
    const verified = await verifySecret(password, hash ?? dummyHash());
    if (user === undefined || hash === null || !verified) return fail(user?.email ?? SIGN_IN_UNKNOWN_SUBJECT);
    await this.#failures.succeeded(attempt);
    const permissions = permissionsOf(user.roles);
    if (user.disabled || permissions.size === 0) {
      // The right password, refused all the same: a failed sign-in for the audit trail's count.
      await this.#sessions.countFailure(user.email, windowStartOf(now.getTime()));
      return { ok: false, reason: user.disabled ? 'disabled' : 'no-role' };
    }
    const sessionId = newOpaqueToken('');
    const session: SignInRow = {
      sessionHash: sha256Hex(sessionId),
      userEmail: user.email,
      createdAt: now.toISOString(),
      lastSeenAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + WEB_SESSION_IDLE_MS).toISOString(),
      endsAt: new Date(now.getTime() + WEB_SESSION_LIFETIME_MAX_MS).toISOString(),
    };
    await this.#sessions.insert(session, address ?? null);
    return {
      ok: true,
      sessionId,
      principal: {
        user: userView(user),
        permissions,
        csrfToken: csrfTokenOf(sessionId),
        sessionHash: session.sessionHash,
      },
    };
  }

  /**
   * The signed-in user of a cookie value, with the permissions of their roles as they are now;
   * undefined when the session is unknown, expired, or its user was disabled (which ends it).
   * Moves the idle deadline.
   */
  async authenticate(sessionId: string): Promise<WebPrincipal | undefined> {
    const now = this.#clock.now();
    const found = await this.#sessions.find(sha256Hex(sessionId), now.toISOString());
    if (found === undefined) return undefined;
    const { session, user } = found;
    if (user.disabled) {
      await this.#sessions.delete(session.sessionHash);
      return undefined;
    }
    if (now.getTime() - Date.parse(session.lastSeenAt) >= WEB_SESSION_TOUCH_INTERVAL_MS) {
      const idle = now.getTime() + WEB_SESSION_IDLE_MS;
      const expiresAt = new Date(Math.min(idle, Date.parse(session.endsAt))).toISOString();
      await this.#sessions.touch(session.sessionHash, now.toISOString(), expiresAt);
    }
    return {
      user: userView(user),
      permissions: permissionsOf(user.roles),
      csrfToken: csrfTokenOf(sessionId),
      sessionHash: session.sessionHash,
    };
  }

  /** Ends a session (sign-out). Unknown sessions are ignored. */
  async signOut(sessionHash: string): Promise<void> {
    await this.#sessions.delete(sessionHash);
  }

  /**
   * Keeps `value` for one view by the session of cookie value `sessionId`, under `key`
   * (Post/Redirect/Get: the page after the redirect shows what the form made). It is stored, so
   * that any instance can show it, but only sealed under a key derived from the cookie value,
   * which the store does not hold. It waits `ONE_TIME_VIEW_TTL_MS`; a session has at most
   * `ONE_TIME_VIEWS_PER_SESSION_MAX` waiting, the oldest dropped first. Replaces what the session
   * kept under `key` before.
   */
  async keepForOneView(sessionId: string, key: string, value: string): Promise<void> {
    const expiresAt = new Date(this.#clock.now().getTime() + ONE_TIME_VIEW_TTL_MS).toISOString();
    await this.#sessions.putOneTimeView(
      { sessionHash: sha256Hex(sessionId), key, sealed: seal(sessionId, value, 'one-time view'), expiresAt },
      ONE_TIME_VIEWS_PER_SESSION_MAX,
    );
  }

  /**
   * Takes what `keepForOneView` kept for this session under `key`: the first call, on any
   * instance, gets it and removes it; later calls, other sessions and calls after it expired get
   * undefined.
   */
  async takeOneView(sessionId: string, key: string): Promise<string | undefined> {
    const view = await this.#sessions.takeOneTimeView(sha256Hex(sessionId), key);
    if (view === undefined || Date.parse(view.expiresAt) <= this.#clock.now().getTime()) return undefined;
    return openSealed(sessionId, view.sealed, 'one-time view');
  }

  /**
   * Deletes expired sessions and expired one-time views, and writes the failed sign-ins of every
   * ended window to the audit trail; returns how many rows.
   */
  async purgeExpired(): Promise<number> {
    const now = this.#clock.now();
    const at = now.toISOString();
    const windowMs = SIGN_IN_FAILURE_WINDOW_MS;
    const lastEnded = windowStartOf(now.getTime() - windowMs);
    const sessions = await this.#sessions.purgeExpired(at);
    const views = await this.#sessions.purgeOneTimeViews(at);
    return sessions + views + (await this.#sessions.flushFailures(lastEnded, windowMs, at));
  }
}
