/**
 * The reading of a configuration upload: from the raw bytes of the body to a checked document,
 * every step that costs time in proportion to the document (parsing, the request's text checks,
 * the structure and every module's semantic checks, a whole preparation). One function, run on a
 * worker thread for a large body (`configuration-worker.ts`) and on the calling thread for a small
 * one, so both answer alike (docs/adr/0017-configuration-off-the-event-loop.md).
 */

import type { AppError } from '../lib/errors.js';
import {
  JSON_BODY_EMPTY_DETAIL,
  JSON_BODY_MALFORMED_DETAIL,
  JSON_BODY_NESTING_DEPTH_MAX,
  jsonBodyTooDeep,
} from '../lib/json-body.js';
import { unstorableTextError, unstorableTextOf } from '../lib/unstorable-text.js';
import type { ConfigurationError } from '../modules/configuration/configuration-errors.js';
import { nestsDeeperThan } from '../modules/entities/record-validator.js';
import { validateConfiguration } from './configuration-checks.js';
import { checkPreparation } from './prepared-configuration.js';

/**
 * One upload to read. `raw` holds the body as received (`checks: 'request'`: refused as a
 * request is when it is empty, not JSON, nested deeper than `JSON_BODY_NESTING_DEPTH_MAX` or
 * holding text no store can keep), or the JSON text of a value the caller parsed and checked
 * already (`checks: 'document'`: only the document's own checks).
 */
export interface UploadJob {
  raw: Uint8Array;
  checks: 'request' | 'document';
}

/**
 * A configuration section of a valid upload as JSON text: one text per element of an array
 * section, so that the main thread can parse a large document in short steps; one text for the
 * other sections. Text crosses threads far cheaper than the object graph it stands for.
 */
export type SectionText = readonly [name: string, text: string | readonly string[]];

/** What reading an upload found (errors do not cross threads as classes, so a refusal is data). */
export type UploadReading =
  | { kind: 'refused'; code: AppError['code']; detail: string; extensions: Record<string, unknown> }
  | { kind: 'invalid'; errors: ConfigurationError[] }
  | { kind: 'unprepared'; message: string }
  | { kind: 'valid'; version: string; sections: SectionText[] };

function refused(error: AppError): UploadReading {
  return { kind: 'refused', code: error.code, detail: error.message, extensions: error.extensions };
}

/**
 * Whether a parsed body holds a member that the application's JSON parser refuses as prototype
 * poisoning (Fastify's default parser, told to refuse both kinds): an own `__proto__`, or an own
 * `constructor` object with an own `prototype`. The whole value is walked, since the text may
 * spell the names with escapes.
 */
function poisoned(value: unknown): boolean {
  const pending: unknown[] = [value];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (typeof node !== 'object' || node === null) continue;
    if (Object.hasOwn(node, '__proto__')) return true;
    const ctor: unknown = Object.hasOwn(node, 'constructor')
      ? (node as Record<string, unknown>).constructor
      : undefined;
    if (typeof ctor === 'object' && ctor !== null && Object.hasOwn(ctor, 'prototype')) return true;
    for (const member of Object.values(node)) pending.push(member);
  }
  return false;
}

/** A byte order mark, which the application's parser skips before the JSON text. */
const BYTE_ORDER_MARK = 0xfeff;

/**
 * The body as JSON, or the refusal of a body that is not, as the application's parser refuses it
 * (a document's text, made by `JSON.stringify`, is always JSON).
 */
function parsedBody(text: string, checks: UploadJob['checks']): { body: unknown } | UploadReading {
  if (text.length === 0) {
    return { kind: 'refused', code: 'malformed-json', detail: JSON_BODY_EMPTY_DETAIL, extensions: {} };
  }
  try {
    const body: unknown = JSON.parse(text.charCodeAt(0) === BYTE_ORDER_MARK ? text.slice(1) : text);
    if (checks === 'request' && poisoned(body))
      throw new SyntaxError('the body holds a forbidden prototype member');
    return { body };
  } catch {
    return { kind: 'refused', code: 'malformed-json', detail: JSON_BODY_MALFORMED_DETAIL, extensions: {} };
  }
}

/**
 * Reads one upload: the request's checks (for a raw body), then the structure and every module's
 * semantic checks, then a whole preparation. Never throws for any body.
 */
export function readConfigurationUpload(job: UploadJob): UploadReading {
  const text = Buffer.from(job.raw.buffer, job.raw.byteOffset, job.raw.byteLength).toString('utf8');
  const parsed = parsedBody(text, job.checks);
  if (!('body' in parsed)) return parsed;
  const { body } = parsed;
  if (job.checks === 'request') {
    if (nestsDeeperThan(body, JSON_BODY_NESTING_DEPTH_MAX)) return refused(jsonBodyTooDeep());
    const unstorable = unstorableTextOf(body);
    if (unstorable !== undefined) return refused(unstorableTextError(unstorable));
  }
  const validation = validateConfiguration(body);
  if (!validation.ok) return { kind: 'invalid', errors: validation.errors };
  const { configuration, version } = validation.document;
  try {
    checkPreparation({ revision: -1, version, configuration, updatedAt: null, updatedBy: '' });
  } catch (error) {
    return { kind: 'unprepared', message: (error as Error).message };
  }
  const sections = Object.entries(configuration).map(
    ([name, value]): SectionText => [
      name,
      Array.isArray(value) ? value.map((element: unknown) => JSON.stringify(element)) : JSON.stringify(value),
    ],
  );
  return { kind: 'valid', version, sections };
}
