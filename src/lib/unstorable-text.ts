/**
 * Where a parsed value holds text that no store can keep (`storable-text.ts`), named by a JSON
 * Pointer, with what an answer says of it: the one walk behind the request guard of the HTTP
 * layer and the reading of a configuration upload on its worker thread.
 */
import { AppError } from './errors.js';
import { isStorableText, unstorableCharacterOf } from './storable-text.js';

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

/** The error that refuses a request for its unstorable text (`validation-failed`, naming where it is). */
export function unstorableTextError({ pointer, message }: UnstorableText): AppError {
  return new AppError('validation-failed', `${pointer} ${message}`, { errors: [{ path: pointer, message }] });
}
