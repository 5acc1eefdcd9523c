/**
 * Signing of webhook deliveries (docs/reference.md, Verifying a webhook): the header
 * `Webhook-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]`, each `v1` the HMAC-SHA256 of
 * `"<t>.<raw body>"` under one signing secret (the UTF-8 bytes of its whole text), the current
 * secret first and then those still in their overlap after a rotation. The secrets are sealed at
 * rest (AES-256-GCM, `auth/sealed-answer.ts`) under the key of `WEBHOOK_SECRETS_KEY`, or under
 * one made once and kept in the store (docs/adr/0024-webhook-outbox.md), never hashed: the HMAC
 * needs them.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { openSealed, seal } from '../auth/sealed-answer.js';

/** What every signing secret starts with, so a leaked one is recognised by secret scanners. */
export const SECRET_PREFIX = 'whsec_';
/** Random bytes of a signing secret (256 bits). */
const SECRET_RANDOM_BYTES = 32;
/** Bytes of a sealing key. */
export const SEALING_KEY_BYTES = 32;

/** A new signing secret: the prefix and 256 random bits in base64url. */
export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_RANDOM_BYTES).toString('base64url')}`;
}

/** A new sealing key, base64. */
export function newSealingKey(): string {
  return randomBytes(SEALING_KEY_BYTES).toString('base64');
}

/** Seals a signing secret under the sealing key. */
export function sealSecret(sealingKey: string, secret: string): string {
  return seal(sealingKey, secret, 'webhook secret');
}

/**
 * Opens a sealed signing secret; throws when it does not open (the sealing key changed: the
 * operator must keep WEBHOOK_SECRETS_KEY, or rotate the secret).
 */
export function openSecret(sealingKey: string, sealed: string): string {
  const secret = openSealed(sealingKey, sealed, 'webhook secret');
  if (secret === undefined)
    throw new Error(
      'a webhook signing secret does not open with the sealing key (was WEBHOOK_SECRETS_KEY changed?)',
    );
  return secret;
}

/** The `Webhook-Signature` header of `body` sent at `unixSeconds`, one `v1` per secret. */
export function signatureHeader(body: string, unixSeconds: number, secrets: readonly string[]): string {
  const signed = `${unixSeconds}.${body}`;
  const parts = secrets.map((secret) => `v1=${createHmac('sha256', secret).update(signed).digest('hex')}`);
  return [`t=${unixSeconds}`, ...parts].join(',');
}
