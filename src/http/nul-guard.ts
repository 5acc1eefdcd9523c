import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type UnstorableText, unstorableTextError, unstorableTextOf } from '../lib/unstorable-text.js';

/** Where unstorable text is in a request: path parameters, query, or a parsed body. */
function unstorableTextOfRequest(request: FastifyRequest): UnstorableText | undefined {
  const inParams = unstorableTextOf(request.params, '/params');
  if (inParams !== undefined) return inParams;
  const inQuery = unstorableTextOf(request.query, '/querystring');
  if (inQuery !== undefined) return inQuery;
  // A raw body (a string or bytes, as the chunk and configuration upload routes read it) is its
  // route's to check: a NUL inside a chunk record is an error of that record, not of the request,
  // and a configuration upload is walked on its worker thread, off the event loop.
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
    if (found !== undefined) throw unstorableTextError(found);
  });
}
