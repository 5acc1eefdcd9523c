import { createHash, randomBytes, randomUUID } from 'node:crypto';

/** Bytes of randomness in every opaque token and client secret (256 bits). */
export const TOKEN_RANDOM_BYTES = 32;

/** A new random UUID (RFC 9562 version 4), lower case. */
export function newUuid(): string {
  return randomUUID();
}

/** The millisecond of the last time-ordered UUID, and the text of its time fields. */
let timePrefixMs = -1;
let timePrefix = '';

/**
 * A new time-ordered UUID (RFC 9562 version 7): 48 bits of Unix milliseconds, the version, then
 * 74 random bits, lower case. Ids made later sort later, so rows keyed by them are appended to
 * the end of their index instead of landing on a random page of it: a journal's and its lines'
 * inserts touch a few pages per chunk rather than one page per row (docs/adr/0014-storage-fast-paths.md).
 * Within one millisecond ids are in random order. Built on `randomUUID`, whose random bits come
 * from a batched pool: one call costs about a quarter of a microsecond, where the `uuid` package's
 * `v7` costs five.
 */
export function newTimeOrderedUuid(): string {
  const random = randomUUID();
  const ms = Date.now();
  if (ms !== timePrefixMs) {
    timePrefixMs = ms;
    const hex = ms.toString(16).padStart(12, '0');
    timePrefix = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7`;
  }
  // `random` is xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx: its first 15 characters (time fields and
  // version) are replaced, the rest (random bits and the variant in y) kept.
  return timePrefix + random.slice(15);
}

/**
 * A new ingestion id: `in_` followed by 32 lower-case hex digits (docs/reference.md, Sessions).
 * The product's examples derive the id from the namespace and entity; we keep it opaque and
 * random so that it reveals nothing and never collides across instances (docs/decisions.md).
 */
export function newIngestionId(): string {
  return `in_${randomUUID().replaceAll('-', '')}`;
}

/** A new random token or secret with the given prefix, base64url, 256 bits of entropy. */
export function newOpaqueToken(prefix: string): string {
  return `${prefix}${randomBytes(TOKEN_RANDOM_BYTES).toString('base64url')}`;
}

/**
 * SHA-256 of a high-entropy token, hex. Tokens are random 256-bit values, so a fast hash is
 * enough to store them safely (there is nothing to brute-force); client secrets, which a person
 * may choose, use a slow salted hash instead (modules/auth/secret-hash.ts).
 */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
