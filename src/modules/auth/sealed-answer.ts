import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** What the key is derived for (HKDF `info`, RFC 5869 3.2): a key of this use only. */
const KEY_INFO = 'ledgerflow refresh answer v1';
/** The version tag of the sealed text, so the format can change without misreading old rows. */
const SEALED_VERSION = 'v1';
/** AES-256-GCM: 32-byte key, 12-byte nonce (NIST SP 800-38D 8.2.2), 16-byte tag. */
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * The key of the answer sealed for one refresh token: HKDF-SHA-256 of the token itself. The
 * token holds 256 random bits, so it needs no salt (RFC 5869 3.1); the store holds only the
 * token's SHA-256, from which this key cannot be computed.
 */
function keyOf(refreshToken: string): Buffer {
  return Buffer.from(hkdfSync('sha256', refreshToken, Buffer.alloc(0), KEY_INFO, KEY_BYTES));
}

/**
 * Encrypts `plaintext` (AES-256-GCM) under a key derived from `refreshToken`, so that only a
 * caller presenting that same token can read it back (`openSealed`). The result is text:
 * `v1.<nonce>.<ciphertext>.<tag>`, each part base64url. Each token seals at most one answer,
 * and the nonce is random besides.
 */
export function seal(refreshToken: string, plaintext: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyOf(refreshToken), nonce, { authTagLength: TAG_BYTES });
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [SEALED_VERSION, nonce, ciphertext, cipher.getAuthTag()]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

/**
 * Decrypts what `seal` made for `refreshToken`; undefined when the text is not in that form or
 * was not sealed under this token (the authentication tag does not match).
 */
export function openSealed(refreshToken: string, sealed: string): string | undefined {
  const [version, nonce, ciphertext, tag, ...rest] = sealed.split('.');
  if (
    version !== SEALED_VERSION ||
    nonce === undefined ||
    ciphertext === undefined ||
    tag === undefined ||
    rest.length > 0
  ) {
    return undefined;
  }
  const tagBytes = Buffer.from(tag, 'base64url');
  const nonceBytes = Buffer.from(nonce, 'base64url');
  if (tagBytes.length !== TAG_BYTES || nonceBytes.length !== NONCE_BYTES) return undefined;
  const decipher = createDecipheriv('aes-256-gcm', keyOf(refreshToken), nonceBytes, {
    authTagLength: TAG_BYTES,
  });
  decipher.setAuthTag(tagBytes);
  try {
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    return undefined;
  }
}
