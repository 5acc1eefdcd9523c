import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * What a sealed text is for. Each use derives its own key from the secret (HKDF `info`, RFC 5869
 * 3.2: `ledgerflow <use> v1`), so a text sealed for one use never opens as another.
 */
export type SealedUse = 'refresh answer' | 'one-time view' | 'webhook secret' | 'credential answer';
/** The version tag of the sealed text, so the format can change without misreading old rows. */
const SEALED_VERSION = 'v1';
/** AES-256-GCM: 32-byte key, 12-byte nonce (NIST SP 800-38D 8.2.2), 16-byte tag. */
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * The key of what is sealed for one secret (a refresh token, a sign-in session's cookie value)
 * and one use: HKDF-SHA-256 of the secret itself. The secret holds 256 random bits, so it needs
 * no salt (RFC 5869 3.1); the store holds only the secret's SHA-256, from which this key cannot
 * be computed.
 */
function keyOf(secret: string, use: SealedUse): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), `ledgerflow ${use} v1`, KEY_BYTES));
}

/**
 * Encrypts `plaintext` (AES-256-GCM) under a key derived from `secret` for `use` (a refresh
 * answer unless said otherwise), so that only a caller presenting that same secret can read it
 * back (`openSealed`). The result is text: `v1.<nonce>.<ciphertext>.<tag>`, each part
 * base64url. The nonce is random: a refresh token seals at most one answer, and a sign-in
 * session a handful of one-time views, far below the 2^32 texts a key may seal with random
 * nonces (NIST SP 800-38D 8.3).
 */
export function seal(secret: string, plaintext: string, use: SealedUse = 'refresh answer'): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyOf(secret, use), nonce, { authTagLength: TAG_BYTES });
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [SEALED_VERSION, nonce, ciphertext, cipher.getAuthTag()]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

/**
 * Decrypts what `seal` made for `secret` and `use`; undefined when the text is not in that form
 * or was not sealed under this secret for this use (the authentication tag does not match).
 */
export function openSealed(
  secret: string,
  sealed: string,
  use: SealedUse = 'refresh answer',
): string | undefined {
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
  const decipher = createDecipheriv('aes-256-gcm', keyOf(secret, use), nonceBytes, {
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
