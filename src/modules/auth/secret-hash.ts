import { createHmac, randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * scrypt cost (RFC 7914): N = 2^15, r = 8, p = 1 needs 32 MiB and about 60 ms per hash here,
 * above the OWASP minimum. The parameters are stored in every hash, so they can be raised later
 * without invalidating existing secrets.
 */
const SCRYPT_N = 2 ** 15;
/**
 * The cost the test suite hashes with (`useTestHashCost`): thousands of credentials and
 * sign-ins would otherwise spend minutes in scrypt. Never used by the service.
 */
const SCRYPT_N_TEST = 2 ** 10;
let scryptN = SCRYPT_N;
const SCRYPT_R = 8;
const SCRYPT_P = 1;
const SCRYPT_KEY_BYTES = 32;
const SCRYPT_SALT_BYTES = 16;
const SCRYPT_MAXMEM_BYTES = 256 * 1024 * 1024;

/**
 * scrypt runs at once at most, in this process. Each run holds 128 · r · N bytes (32 MiB at the
 * cost above) on a thread of libuv's pool, which has four: 64 clients asking for tokens at once
 * held 128 MiB of resident memory for as long as the hashes took, and left no pool thread for
 * file reads. Two at once keep both cores of a small machine hashing; the rest wait their turn.
 */
const HASHES_AT_ONCE_MAX = 2;
let hashesRunning = 0;
/** Runs waiting for a turn, oldest first. */
const hashesWaiting: (() => void)[] = [];

async function scryptAsync(
  secret: string,
  salt: Buffer,
  keyBytes: number,
  options: ScryptOptions,
): Promise<Buffer> {
  if (hashesRunning >= HASHES_AT_ONCE_MAX) await new Promise<void>((resolve) => hashesWaiting.push(resolve));
  else hashesRunning += 1;
  try {
    return await new Promise((resolve, reject) => {
      scrypt(secret, salt, keyBytes, options, (error, key) => (error ? reject(error) : resolve(key)));
    });
  } finally {
    // The turn passes to the oldest waiting run, or is given back.
    const next = hashesWaiting.shift();
    if (next === undefined) hashesRunning -= 1;
    else next();
  }
}

/** scrypt runs in progress and waiting for a turn (for the tests). */
export function hashTurns(): { running: number; waiting: number } {
  return { running: hashesRunning, waiting: hashesWaiting.length };
}

/**
 * Makes this process hash new secrets at the test suite's low cost (`true`) or at the real one
 * (`false`, for the tests that time a check). For the test suite only, whose setup file turns it
 * on: refused outside a Vitest run, so the service can never be weakened by it.
 */
export function useTestHashCost(enabled: boolean): void {
  if (process.env.VITEST === undefined) throw new Error('useTestHashCost is for the test suite only');
  scryptN = enabled ? SCRYPT_N_TEST : SCRYPT_N;
}

/**
 * A well-formed hash, at the cost new secrets are hashed with, that no secret matches: checked
 * when the client id or e-mail is unknown, so response times do not reveal which exist.
 */
export function dummyHash(): string {
  return `scrypt$${scryptN}$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`;
}

/** A slow salted hash of a secret or password: `scrypt$N$r$p$salt$key` (base64url parts). */
export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(SCRYPT_SALT_BYTES);
  const key = await scryptAsync(secret, salt, SCRYPT_KEY_BYTES, {
    N: scryptN,
    r: SCRYPT_R,
    p: SCRYPT_P,
    maxmem: SCRYPT_MAXMEM_BYTES,
  });
  return ['scrypt', scryptN, SCRYPT_R, SCRYPT_P, salt.toString('base64url'), key.toString('base64url')].join(
    '$',
  );
}

/**
 * Checks a secret against a stored hash in constant time (the comparison does not depend on
 * where the keys differ). A malformed stored hash never matches.
 */
export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, saltText, keyText] = parts;
  const expected = Buffer.from(keyText ?? '', 'base64url');
  if (expected.length !== SCRYPT_KEY_BYTES) return false;
  const key = await scryptAsync(secret, Buffer.from(saltText ?? '', 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT_MAXMEM_BYTES,
  });
  return timingSafeEqual(key, expected);
}

/** Entries at most in the cache of recently verified secrets. */
const VERIFIED_CACHE_ENTRIES_MAX = 10_000;
/** How long a verified secret is remembered. */
const VERIFIED_CACHE_TTL_MS = 10 * 60 * 1000;

/**
 * Remembers, in this process's memory only, that a secret matched a stored hash, so that a
 * client asking for tokens again does not pay the full scrypt cost each time (ADR 0003). What is
 * kept is an HMAC of the secret under a key made at start and never stored, tied to the exact
 * stored hash: a changed or removed credential does not match. Revocation and expiry are
 * checked from the store on every request regardless.
 */
export class VerifiedSecretCache {
  readonly #key = randomBytes(32);
  readonly #entries = new Map<string, { mac: Buffer; untilMs: number }>();
  /** Checks in progress, by the MAC of stored hash and secret: the same secret is hashed once at a time. */
  readonly #inFlight = new Map<string, Promise<boolean>>();
  readonly #check: typeof verifySecret;

  /** `check` is the slow comparison (scrypt); tests pass one that counts its calls. */
  constructor(check: typeof verifySecret = verifySecret) {
    this.#check = check;
  }

  #mac(storedHash: string, secret: string): Buffer {
    return createHmac('sha256', this.#key).update(storedHash).update('\0').update(secret).digest();
  }

  /** True when this secret was verified against this stored hash recently. */
  has(storedHash: string, secret: string, nowMs: number): boolean {
    const entry = this.#entries.get(storedHash);
    if (entry === undefined || entry.untilMs < nowMs) return false;
    return timingSafeEqual(entry.mac, this.#mac(storedHash, secret));
  }

  /**
   * Checks `secret` against `storedHash`: at once when it was verified recently, else with
   * scrypt, remembering a match. Concurrent checks of the same secret against the same hash
   * share one scrypt run, so many clients starting at once with one credential cost one hash,
   * not one each.
   */
  async verify(storedHash: string, secret: string, nowMs: number): Promise<boolean> {
    if (this.has(storedHash, secret, nowMs)) return true;
    const key = this.#mac(storedHash, secret).toString('base64');
    let check = this.#inFlight.get(key);
    if (check === undefined) {
      check = this.#check(secret, storedHash).finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, check);
    }
    const matched = await check;
    if (matched) this.add(storedHash, secret, nowMs);
    return matched;
  }

  /** Records a successful verification. */
  add(storedHash: string, secret: string, nowMs: number): void {
    if (this.#entries.size >= VERIFIED_CACHE_ENTRIES_MAX) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    this.#entries.set(storedHash, {
      mac: this.#mac(storedHash, secret),
      untilMs: nowMs + VERIFIED_CACHE_TTL_MS,
    });
  }
}
