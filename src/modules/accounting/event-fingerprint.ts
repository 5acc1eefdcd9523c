/**
 * The identity of a business event (docs/domain/accounting.md, Rollback of business events): two
 * events are identical when every attribute of `businessEventDefinition` that either of them has a
 * value of has the same canonical value in both. A rollback record finds the journals of its twin
 * by this digest, stored on every journal an event produces (`journals.event_fingerprint`, one
 * index lookup however many journals are stored). docs/adr/0021-business-event-rollback.md says
 * why each rule is as it is.
 *
 * Canonical values: a `decimal` attribute by its value (`1.50`, `1.5` and the JSON number `1.5`'s
 * string are one value; trailing zeros after the point and leading zeros are dropped, `-0` is
 * `0`); a `date` as its ISO text (the record validator already made it `YYYY-MM-DD`); a `text`
 * exactly as sent (case and spaces count). An attribute without a value (absent, `null` and, for
 * a decimal, the empty string) is left out of the text, so adding an optional attribute to the
 * definition, as a keep-data upload may, changes the digest of no event stored before: the
 * digest depends on the values an event has, not on the attributes it could have had.
 * Attributes are taken in name order, so the order of a record's keys does not matter, and only
 * the attributes of the definition count.
 *
 * The digest is SHA-256 of a versioned canonical JSON text, base64url, cut to 22 characters: 132
 * bits. Two distinct events collide with probability about n² / 2^133 for n events stored: one in
 * 10^22 at a billion events, far below the odds of a disk corrupting the row, so a twin found by
 * the digest is taken as the event itself.
 *
 * The first form (v1) wrote an attribute without a value as `null`, so its digest changed with
 * the definition. Journals stored under it keep their digest; the attribute plans they were made
 * with are kept by migration 0032 (`event_fingerprint_forms`), and a rollback also looks for its
 * v1 digest under each of them ({@link eventFingerprints}).
 */
import { hash } from 'node:crypto';
import { decimalTextFromValue } from '../../lib/decimal.js';

/** Characters of a fingerprint: 22 base64url characters, 132 bits of the SHA-256. */
export const EVENT_FINGERPRINT_LENGTH_CHARS = 22;

/**
 * The prefix of the hashed text, so that a change of the canonical form makes other digests
 * instead of colliding with earlier ones.
 */
const CANONICAL_FORM_VERSION = 'ledgerflow business event v2\n';
/** The prefix of the first form, which wrote attributes without a value as `null`. */
const CANONICAL_FORM_V1 = 'ledgerflow business event v1\n';

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

/** The canonical value of an attribute of `event`, `null` when it has none. */
function canonicalValue(attribute: FingerprintAttribute, event: Readonly<Record<string, unknown>>): unknown {
  const raw = event[attribute.name];
  if (raw === undefined || raw === null) return null;
  return attribute.decimal ? canonicalDecimal(raw) : raw;
}

/**
 * The canonical JSON text of an event (sorted keys, canonical values), the digest's input. The
 * current form leaves attributes without a value out; `withNulls` writes them as `null`, as the
 * first form did.
 */
export function canonicalEventText(
  attributes: readonly FingerprintAttribute[],
  event: Readonly<Record<string, unknown>>,
  withNulls = false,
): string {
  let text = '{';
  for (const attribute of attributes) {
    const value = canonicalValue(attribute, event);
    if (value === null && !withNulls) continue;
    if (text.length > 1) text += ',';
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

/** The first form's digest of an event under the attribute plan its journals were made with. */
function eventFingerprintV1(
  attributes: readonly FingerprintAttribute[],
  event: Readonly<Record<string, unknown>>,
): string {
  return hash('sha256', CANONICAL_FORM_V1 + canonicalEventText(attributes, event, true), 'base64url').slice(
    0,
    EVENT_FINGERPRINT_LENGTH_CHARS,
  );
}

/**
 * Every digest a rollback of `event` looks its twin up by: the current one first, then its
 * first-form digest under each attribute plan of `legacyPlans` (the plans journals stored before
 * the current form were made with). A plan is used only when `event` has no value of an
 * attribute of the definition that the plan lacks: such an event has a value its twin of then
 * could not have, so it is another event. Pure.
 */
export function eventFingerprints(
  attributes: readonly FingerprintAttribute[],
  legacyPlans: readonly (readonly FingerprintAttribute[])[],
  event: Readonly<Record<string, unknown>>,
): string[] {
  const digests = [eventFingerprint(attributes, event)];
  for (const plan of legacyPlans) {
    const inPlan = new Set(plan.map((a) => a.name));
    if (attributes.some((a) => !inPlan.has(a.name) && canonicalValue(a, event) !== null)) continue;
    const digest = eventFingerprintV1(plan, event);
    if (!digests.includes(digest)) digests.push(digest);
  }
  return digests;
}
