/**
 * Text that every store keeps exactly as sent (docs/reference.md, Conventions). PostgreSQL refuses
 * the NUL character (U+0000) in text, and both stores write text as UTF-8, which has no form for a
 * lone UTF-16 surrogate (a high surrogate not followed by a low one, or a low one alone): it would
 * be written as U+FFFD, so the value read back would not be the value accepted. Such text is
 * refused where it comes in rather than changed or lost on the way to the store.
 */

/** Any character that may make text unstorable: a NUL or a surrogate, paired or not. */
const NUL_OR_SURROGATE = /[\0\uD800-\uDFFF]/;
/** A NUL, a high surrogate not followed by a low one, or a low surrogate not after a high one. */
const UNSTORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/**
 * Whether `text` can be stored and read back unchanged: no NUL and no lone surrogate. One scan of
 * a character class for the text of every record; the exact check runs only when a NUL or a
 * surrogate (an emoji's pair, say) is there.
 */
export function isStorableText(text: string): boolean {
  return !NUL_OR_SURROGATE.test(text) || !UNSTORABLE.test(text);
}

/** What makes `text` unstorable, for a message: `a NUL character (U+0000)` or `a lone surrogate (U+D800)`. */
export function unstorableCharacterOf(text: string): string | undefined {
  const found = UNSTORABLE.exec(text)?.[0];
  if (found === undefined) return undefined;
  const code = `U+${found.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  return found === '\u0000' ? `a NUL character (${code})` : `a lone surrogate (${code})`;
}

/** `text` with every NUL and lone surrogate replaced by U+FFFD, for a message that must be stored. */
export function storableTextOf(text: string): string {
  return isStorableText(text) ? text : text.replace(UNSTORABLE_ALL, '\uFFFD');
}
