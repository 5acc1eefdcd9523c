import { createHmac, randomBytes } from 'node:crypto';
import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { newOpaqueToken, newUuid, sha256Hex } from '../../lib/ids.js';
import { FailureLimiter, type Wait } from './failure-limiter.js';
import { ClientAuthError, type ClientAuthFailure, OAuthError } from './oauth-error.js';
import { type Permission, permissionsOf } from './permissions.js';
import { openSealed, seal } from './sealed-answer.js';
import { dummyHash, VerifiedSecretCache, verifySecret } from './secret-hash.js';
import type {
  AuthStore,
  CredentialRow,
  CredentialWithOwner,
  StoredToken,
  TokenRow,
  UserRow,
} from './store.js';

/** Prefixes make a leaked token recognisable by secret scanners and tell the kinds apart. */
const ACCESS_TOKEN_PREFIX = 'lfa_';
const REFRESH_TOKEN_PREFIX = 'lfr_';
/** A token longer than this is not one of ours; rejected before any hashing. */
export const TOKEN_LENGTH_MAX = 128;
/** Client ids and secrets longer than this are rejected before any hashing. */
export const CLIENT_FIELD_LENGTH_MAX = 256;
/**
 * How long after a refresh an exact repeat of it gets the same answer instead of revoking the
 * token family (`REFRESH_REUSE_GRACE_SECONDS`): long enough for a concurrent request or a quick
 * retry after a lost answer, short enough that a stolen token is of little use.
 */
export const REFRESH_REUSE_GRACE_SECONDS_DEFAULT = 10;
/** The longest grace window the setting accepts. */
export const REFRESH_REUSE_GRACE_SECONDS_MAX = 300;

export interface TokenLifetimes {
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /**
   * Seconds after a refresh during which presenting the same refresh token again gets the same
   * answer (`REFRESH_REUSE_GRACE_SECONDS_DEFAULT` when unset); 0 treats every repeat as reuse.
   */
  refreshReuseGraceSeconds?: number;
  /** How attempts slowed by failed authentications wait (tests record instead of sleeping). */
  authFailureWait?: Wait;
}

/** The token response (RFC 6749 5.1; docs/reference.md, Tokens). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  refresh_expires_in: number;
}

/** Who is calling, as established from a valid access token (roles as they are now). */
export interface Principal {
  clientId: string;
  ownerEmail: string;
  roles: string[];
  permissions: Set<Permission>;
}

/** Client authentication as presented at the token or revocation endpoint. */
export interface ClientAuth {
  clientId: string;
  clientSecret: string;
  /** Where the request came from, for the failed-authentication limit. */
  remoteAddress?: string;
}

/** How precisely a credential's `lastUsedAt` follows its use: it moves at most once a minute. */
export const CREDENTIAL_USE_PRECISION_MS = 60_000;
/** Credentials whose last write of `lastUsedAt` an instance remembers at most (then it forgets all). */
const MARKED_USES_MAX = 10_000;

/**
 * The OAuth 2.0 authorisation server and resource-server check (docs/reference.md, Tokens): client
 * credentials and refresh grants with rotation and reuse detection (RFC 9700 4.14), revocation
 * (RFC 7009) and bearer validation. Tokens are opaque random strings stored as SHA-256 (ADR 0003),
 * so revoking a credential or disabling a user takes effect on the next request on every
 * instance: each check reads the store.
 */
export class TokenService {
  readonly #store: AuthStore;
  readonly #clock: Clock;
  readonly #lifetimes: TokenLifetimes;
  readonly #verified = new VerifiedSecretCache();
  readonly #failures: FailureLimiter;
  /** Counted attempts in progress, by `#attemptKey`. */
  readonly #attempts = new Map<string, Promise<{ credential: CredentialRow; owner: UserRow }>>();
  readonly #attemptKeySecret = randomBytes(32);
  /** When this instance last wrote each credential's `lastUsedAt`. */
  readonly #markedUse = new Map<string, number>();

  constructor(store: AuthStore, clock: Clock, lifetimes: TokenLifetimes) {
    this.#store = store;
    this.#clock = clock;
    this.#lifetimes = lifetimes;
    this.#failures = new FailureLimiter(store, 'client', lifetimes.authFailureWait);
  }

  /**
   * Authenticates a client and checks that its owner may log in. Failed attempts slow down
   * further ones of the same client id from the same address (`FailureLimiter`), but a right
   * secret is always checked and accepted; only an address flooding with failures is refused
   * before checking, unless the secret is one this instance verified moments ago (no hashing).
   * Errors: `ClientAuthError`, whose `reason` (for the server log only) says which check failed:
   * `invalid_client` (unknown, wrong secret, expired, revoked, flood from the address),
   * `unauthorized_client` (owner disabled or without a role that grants API access).
   */
  authenticateClient(auth: ClientAuth): Promise<{ credential: CredentialRow; owner: UserRow }> {
    return this.#authenticate(auth, false);
  }

  /** `authenticateClient`; `afterOther` when the attempt waited for another one first. */
  async #authenticate(
    auth: ClientAuth,
    afterOther: boolean,
  ): Promise<{ credential: CredentialRow; owner: UserRow }> {
    const nowMs = this.#clock.now().getTime();
    // The credential with its owner and the failures of this client from this address, read
    // side by side: on PostgreSQL under many clients each read waits for a pooled connection.
    const [found, quiet] = await Promise.all([
      this.#find(auth),
      this.#failures.quiet(auth.clientId, auth.remoteAddress, nowMs),
    ]);
    // A secret this instance verified moments ago is checked without hashing, and it is right:
    // unless its client failed from this address lately (then it is held as any attempt), there
    // is nothing to limit, so nothing is counted (no write to the store).
    const verified =
      found !== undefined && this.#verified.has(found.credential.secretHash, auth.clientSecret, nowMs);
    if (verified && quiet) return this.#used(await this.#authenticateClient(auth, found));
    // Attempts of one client with one secret from one address while the first of them is being
    // checked (many workers behind one gateway starting at once) wait for it, then start over:
    // a right secret is then verified and they pass without a count or a hash of their own, so
    // such a burst costs one hash and is never taken for a flood; a wrong one is counted again.
    const key = this.#attemptKey(auth);
    const first = this.#attempts.get(key);
    if (first !== undefined && !afterOther) {
      await first.catch(() => undefined);
      return this.#authenticate(auth, true);
    }
    const attempt = this.#attempt(auth, nowMs, verified);
    if (first === undefined) {
      this.#attempts.set(key, attempt);
      void attempt.finally(() => this.#attempts.delete(key)).catch(() => undefined);
    }
    return this.#used(await attempt);
  }

  /** Keys attempts in progress by client, secret and address; a MAC, so no secret is kept. */
  #attemptKey(auth: ClientAuth): string {
    return createHmac('sha256', this.#attemptKeySecret)
      .update(auth.clientId)
      .update('\0')
      .update(auth.clientSecret)
      .update('\0')
      .update(auth.remoteAddress ?? '')
      .digest('base64');
  }

  /**
   * One counted attempt (`authenticateClient` without a recently verified secret, or with
   * recent failures): refused outright when its address floods, else held for the delay its
   * client's failures from that address earned, then checked, and its outcome recorded.
   */
  async #attempt(
    auth: ClientAuth,
    nowMs: number,
    verified: boolean,
  ): Promise<{ credential: CredentialRow; owner: UserRow }> {
    const attempt = await this.#failures.admit(auth.clientId, auth.remoteAddress, nowMs);
    if (attempt.retryAfterSeconds > 0 && !verified) {
      const retryAfter = attempt.retryAfterSeconds;
      throw new ClientAuthError(
        'invalid_client',
        `too many failed authentication attempts from this address; try again in ${retryAfter} s`,
        { clientId: loggableClientId(auth.clientId), reason: 'limited', retryAfterSeconds: retryAfter },
      );
    }
    await this.#failures.hold(attempt);
    let authenticated: { credential: CredentialRow; owner: UserRow };
    try {
      // Read again: a held attempt may have waited, and the credential may have changed meanwhile.
      authenticated = await this.#authenticateClient(auth, await this.#find(auth));
    } catch (error) {
      if (error instanceof OAuthError) {
        // unauthorized_client comes after the secret was found right.
        if (error.error === 'invalid_client') await this.#failures.failed(attempt, nowMs);
        else await this.#failures.succeeded(attempt);
      }
      throw error;
    }
    await this.#failures.succeeded(attempt);
    return authenticated;
  }

  /**
   * Records that a credential was used: its `lastUsedAt` moves when it is older than
   * `CREDENTIAL_USE_PRECISION_MS`, so a client asking for tokens many times a minute costs no
   * write each time.
   */
  async #used<T extends { credential: CredentialRow }>(authenticated: T): Promise<T> {
    const now = this.#clock.now();
    const nowMs = now.getTime();
    const { lastUsedAt, clientId } = authenticated.credential;
    const markedMs = Math.max(
      lastUsedAt === null ? Number.NEGATIVE_INFINITY : Date.parse(lastUsedAt),
      this.#markedUse.get(clientId) ?? Number.NEGATIVE_INFINITY,
    );
    if (nowMs - markedMs < CREDENTIAL_USE_PRECISION_MS) return authenticated;
    // Remembered before the write, so the requests that read the credential before it (many
    // clients starting at once) do not write the same minute again.
    if (this.#markedUse.size >= MARKED_USES_MAX) this.#markedUse.clear();
    this.#markedUse.set(clientId, nowMs);
    await this.#store.markCredentialUsed(clientId, now.toISOString());
    return authenticated;
  }

  /** The credential of this client id with its owner; none for an id too long to be one. */
  async #find(auth: ClientAuth): Promise<CredentialWithOwner | undefined> {
    if (auth.clientId.length > CLIENT_FIELD_LENGTH_MAX) return undefined;
    return this.#store.findCredentialWithOwner(auth.clientId);
  }

  /** Checks the secret against `found` (the credential read for this client id), then its state and owner. */
  async #authenticateClient(
    auth: ClientAuth,
    found: CredentialWithOwner | undefined,
  ): Promise<{ credential: CredentialRow; owner: UserRow }> {
    const clientId = loggableClientId(auth.clientId);
    const fail = (reason: ClientAuthFailure, description = 'client authentication failed') =>
      new ClientAuthError('invalid_client', description, { clientId, reason });
    if (
      auth.clientId.length > CLIENT_FIELD_LENGTH_MAX ||
      auth.clientSecret.length > CLIENT_FIELD_LENGTH_MAX
    ) {
      throw fail('too-long');
    }
    const nowMs = this.#clock.now().getTime();
    if (found === undefined) {
      // Spend the same time as a real check, so response times do not reveal which ids exist.
      await verifySecret(auth.clientSecret, dummyHash());
      throw fail('unknown-client');
    }
    const { credential, owner } = found;
    if (!(await this.#verified.verify(credential.secretHash, auth.clientSecret, nowMs)))
      throw fail('wrong-secret');
    if (credential.revokedAt !== null) throw fail('revoked', 'the credential has been revoked');
    if (Date.parse(credential.expiresAt) <= nowMs) throw fail('expired', 'the credential has expired');
    if (owner.disabled) {
      throw new ClientAuthError('unauthorized_client', 'the owner of this credential is disabled', {
        clientId,
        reason: 'owner-disabled',
      });
    }
    if (permissionsOf(owner.roles).size === 0) {
      throw new ClientAuthError(
        'unauthorized_client',
        'the owner of this credential has no role that allows API access',
        { clientId, reason: 'owner-without-role' },
      );
    }
    return { credential, owner };
  }

  /** The client credentials grant (RFC 6749 4.4): a new token family. */
  async clientCredentialsGrant(auth: ClientAuth): Promise<TokenResponse> {
    const { credential } = await this.authenticateClient(auth);
    const familyId = newUuid();
    const { response, rows } = this.#mint(familyId, credential.clientId);
    await this.#store.insertFamily(familyId, credential.clientId, this.#clock.now().toISOString(), rows);
    return response;
  }

  /**
   * The refresh grant (RFC 6749 6) with rotation: the used refresh token is spent, and a second use
   * of it revokes its whole family (RFC 9700 4.14.2), except an exact repeat within the reuse
   * grace window, which gets the first answer again (`#repeatAnswer`). Of two concurrent
   * refreshes with one token, on one instance or several, exactly one issues tokens.
   * Errors: those of `authenticateClient`, then `invalid_grant`.
   */
  async refreshGrant(auth: ClientAuth, refreshToken: string): Promise<TokenResponse> {
    const { credential } = await this.authenticateClient(auth);
    const invalid = (why: string) => new OAuthError('invalid_grant', why);
    if (!refreshToken.startsWith(REFRESH_TOKEN_PREFIX) || refreshToken.length > TOKEN_LENGTH_MAX) {
      throw invalid('the refresh token is not valid');
    }
    const hash = sha256Hex(refreshToken);
    const token = await this.#store.findToken(hash);
    const now = this.#clock.now();
    if (token === undefined || token.kind !== 'refresh') throw invalid('the refresh token is not valid');
    if (token.clientId !== credential.clientId)
      throw invalid('the refresh token was issued to another client');
    if (token.revokedAt !== null || token.familyRevokedAt !== null)
      throw invalid('the refresh token has been revoked');
    if (Date.parse(token.expiresAt) <= now.getTime()) throw invalid('the refresh token has expired');
    if (token.usedAt !== null) return this.#repeatAnswer(token, refreshToken, now);
    const { response, rows } = this.#mint(token.familyId, credential.clientId);
    // The answer is kept only sealed under the presented token, which the store never holds.
    const sealed = this.#graceMs > 0 ? seal(refreshToken, JSON.stringify(response)) : null;
    if (await this.#store.rotateRefreshToken(hash, now.toISOString(), sealed, rows)) return response;
    // Another request spent the token since it was read: its answer is stored with the mark.
    const spent = await this.#store.findToken(hash);
    if (spent === undefined) throw invalid('the refresh token is not valid');
    return this.#repeatAnswer(spent, refreshToken, now);
  }

  /**
   * A used refresh token presented again. Within the grace window after its use, while the
   * refresh token of its answer is unused and the family not revoked, the caller holding the
   * same token gets the same answer: a concurrent request or a retry after a lost answer is not
   * theft. Anything else is reuse (RFC 9700 4.14.2): the whole family is revoked.
   */
  async #repeatAnswer(token: StoredToken, refreshToken: string, now: Date): Promise<TokenResponse> {
    const invalid = (why: string) => new OAuthError('invalid_grant', why);
    if (token.familyRevokedAt !== null) throw invalid('the refresh token has been revoked');
    const withinGrace = token.usedAt !== null && now.getTime() - Date.parse(token.usedAt) < this.#graceMs;
    if (withinGrace && token.answerSealed !== null) {
      const opened = openSealed(refreshToken, token.answerSealed);
      const answer = opened === undefined ? undefined : (JSON.parse(opened) as TokenResponse);
      const issued =
        answer === undefined ? undefined : await this.#store.findToken(sha256Hex(answer.refresh_token));
      if (
        answer !== undefined &&
        issued !== undefined &&
        issued.usedAt === null &&
        issued.revokedAt === null
      ) {
        return answer;
      }
    }
    await this.#store.revokeFamily(token.familyId, now.toISOString());
    throw invalid('the refresh token was used before; every token of its grant is now revoked');
  }

  get #graceMs(): number {
    return (this.#lifetimes.refreshReuseGraceSeconds ?? REFRESH_REUSE_GRACE_SECONDS_DEFAULT) * 1000;
  }

  /**
   * Token revocation (RFC 7009): a client revokes one of its own tokens; revoking a refresh
   * token revokes its whole family. Unknown tokens and other clients' tokens are ignored, as
   * the RFC asks, so the answer reveals nothing.
   */
  async revoke(auth: ClientAuth, token: string): Promise<void> {
    const { credential } = await this.authenticateClient(auth);
    if (token.length > TOKEN_LENGTH_MAX) return;
    const hash = sha256Hex(token);
    const row = await this.#store.findToken(hash);
    if (row === undefined || row.clientId !== credential.clientId) return;
    const at = this.#clock.now().toISOString();
    if (row.kind === 'refresh') await this.#store.revokeFamily(row.familyId, at);
    else await this.#store.revokeToken(hash, at);
  }

  /**
   * Validates a bearer access token (RFC 6750) and returns the caller with the roles its owner
   * has now. Errors: AppError `invalid-token` (bearer refusal `invalid`, the detail saying why) for
   * a token that is unknown, malformed, expired or revoked, whose credential is revoked or
   * expired, or whose owner is disabled.
   */
  async authenticateBearer(accessToken: string): Promise<Principal> {
    const reject = (why: string) => new AppError('invalid-token', why, {}, { bearerRefusal: 'invalid' });
    if (!accessToken.startsWith(ACCESS_TOKEN_PREFIX) || accessToken.length > TOKEN_LENGTH_MAX) {
      throw reject('the access token is malformed');
    }
    const grant = await this.#store.findGrant(sha256Hex(accessToken));
    const nowMs = this.#clock.now().getTime();
    if (grant === undefined || grant.token.kind !== 'access') throw reject('the access token is not known');
    if (Date.parse(grant.token.expiresAt) <= nowMs) throw reject('the access token has expired');
    if (grant.token.revokedAt !== null || grant.familyRevokedAt !== null)
      throw reject('the access token has been revoked');
    if (grant.credential.revokedAt !== null) throw reject('the credential of this token has been revoked');
    if (Date.parse(grant.credential.expiresAt) <= nowMs)
      throw reject('the credential of this token has expired');
    if (grant.owner.disabled) throw reject('the owner of this token is disabled');
    return {
      clientId: grant.credential.clientId,
      ownerEmail: grant.owner.email,
      roles: grant.owner.roles,
      permissions: permissionsOf(grant.owner.roles),
    };
  }

  /**
   * Deletes tokens that expired more than a day ago, so the token table does not grow forever,
   * the failed-authentication counters of windows that have ended (of sign-ins too), and the
   * sealed answers of refreshes whose grace window has passed, which can no longer be repeated.
   */
  async purgeExpired(): Promise<number> {
    const nowMs = this.#clock.now().getTime();
    await this.#failures.purge(nowMs);
    await this.#store.forgetSealedAnswers(new Date(nowMs - this.#graceMs).toISOString());
    const before = new Date(nowMs - 24 * 3600 * 1000).toISOString();
    return this.#store.purgeExpiredTokens(before);
  }

  #mint(familyId: string, clientId: string): { response: TokenResponse; rows: TokenRow[] } {
    const now = this.#clock.now();
    const access = newOpaqueToken(ACCESS_TOKEN_PREFIX);
    const refresh = newOpaqueToken(REFRESH_TOKEN_PREFIX);
    const { accessTokenTtlSeconds, refreshTokenTtlSeconds } = this.#lifetimes;
    const row = (token: string, kind: TokenRow['kind'], ttlSeconds: number): TokenRow => ({
      tokenHash: sha256Hex(token),
      kind,
      familyId,
      clientId,
      issuedAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + ttlSeconds * 1000).toISOString(),
      usedAt: null,
      revokedAt: null,
    });
    return {
      response: {
        access_token: access,
        token_type: 'Bearer',
        expires_in: accessTokenTtlSeconds,
        refresh_token: refresh,
        refresh_expires_in: refreshTokenTtlSeconds,
      },
      rows: [row(access, 'access', accessTokenTtlSeconds), row(refresh, 'refresh', refreshTokenTtlSeconds)],
    };
  }
}

/** A client id as it may appear in a log line: cut to the longest id that can exist. */
function loggableClientId(clientId: string): string {
  return clientId.slice(0, CLIENT_FIELD_LENGTH_MAX);
}
