/**
 * The `after` cursors of cursor paging (docs/decisions.md, Cursor paging): the base64url form of
 * a JSON array holding the name of the list and the sort key of the last row of a page. Clients
 * treat it as opaque; the service reads it back and checks it before any query sees it, so a
 * cursor that was not made by this list is a 400 naming `after`, never a query error.
 */
import { AppError } from '../../lib/errors.js';
import { PATH_PARAM_LENGTH_MAX } from './schemas.js';

/** A part of a sort key: a text (an id or an instant, printable ASCII) or a row id. */
type KeyPart = 'text' | 'integer';
type KeyOf<P extends readonly KeyPart[]> = { [I in keyof P]: P[I] extends 'text' ? string : number };

/**
 * Every text a key holds is an id, a date or an ISO instant: printable ASCII no longer than a
 * path parameter. Anything else (a NUL PostgreSQL refuses, a huge string) was not made here.
 */
const KEY_TEXT = new RegExp(`^[\\x20-\\x7e]{1,${PATH_PARAM_LENGTH_MAX}}$`);

/** The cursor after the row of list `list` whose sort key is `key`. */
export function cursorOf(list: string, key: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify([list, ...key]), 'utf8').toString('base64url');
}

/** The cursor of `key`, or null when there is no next page. */
export function nextCursor<K>(
  list: string,
  key: K | undefined,
  parts: (key: K) => (string | number)[],
): string | null {
  return key === undefined ? null : cursorOf(list, parts(key));
}

/** The error of an `after` that is not a cursor of the list. */
export function notACursor(): AppError {
  return new AppError('validation-failed', 'after is not a cursor of this list', {
    errors: [{ path: '/querystring/after', message: 'must be the next cursor of an answer of this list' }],
  });
}

function isPart(value: unknown, part: KeyPart): boolean {
  return part === 'text'
    ? typeof value === 'string' && KEY_TEXT.test(value)
    : typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * The sort key `cursor` holds, of the parts `parts` of list `list`. Errors:
 * `validation-failed` (naming `/querystring/after`) for anything else, a cursor of another list
 * included.
 */
export function keyOfCursor<const P extends readonly KeyPart[]>(
  list: string,
  cursor: string,
  parts: P,
): KeyOf<P> {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw notACursor();
  }
  if (!Array.isArray(decoded) || decoded.length !== parts.length + 1 || decoded[0] !== list)
    throw notACursor();
  const key = decoded.slice(1);
  if (!parts.every((part, i) => isPart(key[i], part))) throw notACursor();
  return key as KeyOf<P>;
}
