/**
 * The identity of a business event (docs/domain/accounting.md, Rollback of business events): two
 * events are identical when every attribute of `businessEventDefinition` has the same canonical
 * value in both. A rollback record finds the journals of its twin by this digest, stored on every
 * journal an event produces (`journals.event_fingerprint`, one index lookup however many journals
 * are stored). docs/adr/0021-business-event-rollback.md says why each rule is as it is.
 *
 * Canonical values: a `decimal` attribute by its value (`1.50`, `1.5` and the JSON number `1.5`'s
 * string are one value; trailing zeros after the point and leading zeros are dropped, `-0` is
 * `0`); a `date` as its ISO text (the record validator already made it `YYYY-MM-DD`); a `text`
 * exactly as sent (case and spaces count); an absent attribute, `null` and, for a decimal, the
 * empty string are all `null`. Attributes are taken in name order, so the order of a record's
 * keys does not matter, and only the attributes of the definition count.
 *
 * The digest is SHA-256 of a versioned canonical JSON text, base64url, cut to 22 characters: 132
 * bits. Two distinct events collide with probability about n² / 2^133 for n events stored: one in
 * 10^22 at a billion events, far below the odds of a disk corrupting the row, so a twin found by
 * the digest is taken as the event itself.
 */
import { hash } from 'node:crypto';
import { decimalTextFromValue } from '../../lib/decimal.js';

/** Characters of a fingerprint: 22 base64url characters, 132 bits of the SHA-256. */
export const EVENT_FINGERPRINT_LENGTH_CHARS = 22;

/**
 * The prefix of the hashed text, so that a future change of the canonical form makes other
 * digests instead of colliding with today's.
 */
const CANONICAL_FORM_VERSION = 'ledgerflow business event v1\n';

/** One attribute of the business event definition as the fingerprint reads it. */
export interface FingerprintAttribute {
  name: string;
  /** Whether its values are exact decimals, compared by value. */
  decimal: boolean;
  /** `JSON.stringify(name)`, made once per configuration. */
  key: string;
}

/** The attributes of the definition in name order, each once: the fingerprint's plan. */
export function fingerprintAttributesOf(
  attributes: readonly { name: string; type: string }[],
): FingerprintAttribute[] {
  const byName = new Map<string, FingerprintAttribute>();
  for (const { name, type } of attributes) {
    if (!byName.has(name)) byName.set(name, { name, decimal: type === 'decimal', key: JSON.stringify(name) });
  }
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** A decimal's canonical text: no trailing zeros after the point, no point without digits. */
function canonicalDecimal(value: unknown): unknown {
  if (value === '') return null;
  const read = decimalTextFromValue(value);
  if (read === undefined) return value;
  if (read.sign === 0) return '0';
  return read.scale === 0 ? read.text : read.text.replace(/\.?0+$/, '');
}

/** The canonical JSON text of an event (sorted keys, canonical values), the digest's input. */
export function canonicalEventText(
  attributes: readonly FingerprintAttribute[],
  event: Readonly<Record<string, unknown>>,
): string {
  let text = '{';
  for (let index = 0; index < attributes.length; index += 1) {
    const attribute = attributes[index];
    if (attribute === undefined) continue;
    const raw = event[attribute.name];
    const value = raw === undefined || raw === null ? null : attribute.decimal ? canonicalDecimal(raw) : raw;
    if (index > 0) text += ',';
    text += `${attribute.key}:${JSON.stringify(value)}`;
  }
  return `${text}}`;
}

/**
 * The fingerprint of a validated business event (a `ledger/businessEvent` or
 * `ledger/businessEventRollback` record, or an event a flow built): see the header. Pure.
 */
export function eventFingerprint(
  attributes: readonly FingerprintAttribute[],
  event: Readonly<Record<string, unknown>>,
): string {
  // The one-shot `hash` costs half of a `createHash` object per event (bench/engine-alone.ts).
  return hash('sha256', CANONICAL_FORM_VERSION + canonicalEventText(attributes, event), 'base64url').slice(
    0,
    EVENT_FINGERPRINT_LENGTH_CHARS,
  );
}
