import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../lib/errors.js';
import { OAuthError } from '../modules/auth/oauth-error.js';

const NUL = '\u0000';
const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';

function pointerEscape(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * The JSON Pointer of the first text holding a NUL character in a parsed value (a JSON document,
 * a form, a query or the path parameters), or undefined when there is none. Member names count,
 * as they may be stored too.
 */
export function nulPointerOf(value: unknown, pointer = ''): string | undefined {
  if (typeof value === 'string') return value.includes(NUL) ? pointer : undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = nulPointerOf(item, `${pointer}/${index}`);
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
    if (String(name).includes(NUL)) return at;
    const found = nulPointerOf(item, at);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Where a NUL character is in a request: path parameters, query, or a parsed body. */
function nulPointerOfRequest(request: FastifyRequest): string | undefined {
  const inParams = nulPointerOf(request.params, '/params');
  if (inParams !== undefined) return inParams;
  const inQuery = nulPointerOf(request.query, '/querystring');
  if (inQuery !== undefined) return inQuery;
  // A raw body (a string or bytes, as the chunk route reads it) is its route's to check: a NUL
  // inside a chunk record is an error of that record, not of the request.
  if (typeof request.body !== 'object' || request.body === null || Buffer.isBuffer(request.body)) {
    return undefined;
  }
  return nulPointerOf(request.body);
}

/**
 * Refuses a NUL character anywhere in a request's text (path parameters, query, a JSON or form
 * body) with a 400 naming where it is, before any handler runs: no stored text may hold one
 * (PostgreSQL refuses it in text), and no name or id contains one. The OAuth endpoints answer
 * `invalid_request` in their own error form.
 */
export function registerNulGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const pointer = nulPointerOfRequest(request);
    if (pointer === undefined) return;
    if (request.url.startsWith('/auth/')) {
      throw new OAuthError('invalid_request', `${pointer.replace(/^\//, '')} ${NUL_MESSAGE}`);
    }
    throw new AppError('validation-failed', `${pointer} ${NUL_MESSAGE}`, {
      errors: [{ path: pointer, message: NUL_MESSAGE }],
    });
  });
}
