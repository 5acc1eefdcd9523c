import { createHash, randomBytes, randomUUID } from 'node:crypto';

/** Bytes of randomness in every opaque token and client secret (256 bits). */
export const TOKEN_RANDOM_BYTES = 32;

/** A new random UUID (RFC 9562 version 4), lower case. */
export function newUuid(): string {
  return randomUUID();
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
