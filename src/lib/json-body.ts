/**
 * What the service's JSON bodies share: the media types parsed as JSON, the deepest nesting
 * accepted and the answers to a body that cannot be read. The application's parser
 * (`http/app.ts`) and the reading of a configuration upload, which parses its raw body on a
 * worker thread (`composition/configuration-upload.ts`), apply the same rules and answer alike.
 */
import { AppError } from './errors.js';

/** The media types whose bodies are parsed as JSON. */
export const JSON_MEDIA_TYPES = [
  'application/json',
  'application/merge-patch+json',
  'application/problem+json',
];

/**
 * Deepest nesting of arrays and objects in a JSON body of an ordinary endpoint. Deeper bodies are
 * refused before any check walks them, since walking them recursively overflows the stack.
 */
export const JSON_BODY_NESTING_DEPTH_MAX = 64;

/** What the answer to an empty body says where a JSON document is expected. */
export const JSON_BODY_EMPTY_DETAIL = 'the body is empty; this endpoint expects a JSON document';

/**
 * What the answer to a body that is not JSON says: Fastify's own words, which every other route
 * answers with (`test/http/configuration-reading.test.ts` compares the two).
 */
export const JSON_BODY_MALFORMED_DETAIL =
  "Body is not valid JSON but content-type is set to 'application/json'";

/** The error of a body nested deeper than {@link JSON_BODY_NESTING_DEPTH_MAX}. */
export function jsonBodyTooDeep(): AppError {
  const message = `must not nest arrays and objects more than ${JSON_BODY_NESTING_DEPTH_MAX} levels deep`;
  return new AppError('validation-failed', `the body ${message}`, { errors: [{ path: '', message }] });
}
