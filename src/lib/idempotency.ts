/**
 * The rule every `Idempotency-Key` keeps, written once for the chunks, the reversals and the
 * approval requests (docs/reference.md, Conventions): a request repeated under the key a client
 * used before answers that first answer again; the same key with another request is refused with
 * `idempotency-key-reused` and changes nothing. A request is told apart from another by its
 * digest: the SHA-256 of its body as sent (a chunk), or of its canonical JSON (a reversal, an
 * approval request), so that spacing and member order do not matter.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';
import { AppError } from './errors.js';

/** The SHA-256 (hex) of `value`'s canonical JSON: one digest for one request, however written. */
export function requestDigest(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/**
 * Refuses a repeat of the key `key` whose request's digest is not the one stored with its first
 * answer; `scope` says where keys are unique ("this client", "this session") and `earlier`, when
 * given, what the key answered first.
 */
export function assertSameRequest(
  key: string,
  stored: string | null,
  given: string | null,
  scope: string,
  earlier?: string,
): void {
  if (stored === given) return;
  throw new AppError(
    'idempotency-key-reused',
    `the Idempotency-Key ${JSON.stringify(key)} was used before by ${scope} for another request${earlier === undefined ? '' : ` (${earlier})`}; send this one under a new key`,
  );
}
