import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../lib/errors.js';
import { isStorableText, unstorableCharacterOf } from '../lib/storable-text.js';

const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';

/** Where unstorable text is, and what the answer says of it. */
export interface UnstorableText {
  pointer: string;
  message: string;
}

function unstorable(pointer: string, text: string): UnstorableText {
  const character = unstorableCharacterOf(text);
  return {
    pointer,
    message:
      character === undefined || text.includes('\u0000') ? NUL_MESSAGE : `must not contain ${character}`,
  };
}

function pointerEscape(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * The JSON Pointer of the first text that no store can keep (a NUL character or a lone UTF-16
 * surrogate, `src/lib/storable-text.ts`) in a parsed value (a JSON document, a form, a query or
 * the path parameters), with what the answer says of it; undefined when there is none. Member
 * names count, as they may be stored too.
 */
export function unstorableTextOf(value: unknown, pointer = ''): UnstorableText | undefined {
  if (typeof value === 'string') return isStorableText(value) ? undefined : unstorable(pointer, value);
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = unstorableTextOf(item, `${pointer}/${index}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  // A form's repeated fields are named by the field alone.
  const entries: [unknown, unknown][] =
    value instanceof Map || value instanceof URLSearchParams
      ? [...value.entries()].flatMap(([name, item]: [unknown, unknown]) =>
          Array.isArray(item) ? item.map((one): [unknown, unknown] => [name, one]) : [[name, item]],
        )
      : typeof value === 'object' && value !== null
        ? Object.entries(value)
        : [];
  for (const [name, item] of entries) {
    const at = `${pointer}/${pointerEscape(String(name))}`;
    if (!isStorableText(String(name))) return unstorable(at, String(name));
    const found = unstorableTextOf(item, at);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Where unstorable text is in a request: path parameters, query, or a parsed body. */
function unstorableTextOfRequest(request: FastifyRequest): UnstorableText | undefined {
  const inParams = unstorableTextOf(request.params, '/params');
  if (inParams !== undefined) return inParams;
  const inQuery = unstorableTextOf(request.query, '/querystring');
  if (inQuery !== undefined) return inQuery;
  // A raw body (a string or bytes, as the chunk route reads it) is its route's to check: a NUL
  // inside a chunk record is an error of that record, not of the request.
  if (typeof request.body !== 'object' || request.body === null || Buffer.isBuffer(request.body)) {
    return undefined;
  }
  return unstorableTextOf(request.body);
}

/**
 * Refuses text no store can keep (a NUL character, which PostgreSQL refuses, or a lone UTF-16
 * surrogate, which UTF-8 cannot hold) anywhere in a request's text (path parameters, query, a
 * JSON or form body) with a 400 naming where it is, before any handler runs. The OAuth
 * endpoints render it in their own error form (`invalid_request`, `http/api/oauth/errors.ts`).
 */
export function registerNulGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const found = unstorableTextOfRequest(request);
    if (found === undefined) return;
    const { pointer, message } = found;
    throw new AppError('validation-failed', `${pointer} ${message}`, {
      errors: [{ path: pointer, message }],
    });
  });
}
