/**
 * The error list of an upload check: what one problem is (a JSON Pointer, RFC 6901, into the
 * body and a sentence naming the rule), how pointers are written, and how the list is tidied
 * before it is answered (each problem once, at most {@link CONFIGURATION_ERRORS_MAX_COUNT}).
 */

/** At most this many errors are listed; a final entry says how many more were found. */
export const CONFIGURATION_ERRORS_MAX_COUNT = 1000;

/** One problem of an uploaded document: where (JSON Pointer into the body) and which rule. */
export interface ConfigurationError {
  readonly path: string;
  readonly message: string;
}

/** One pointer segment, escaped as RFC 6901 says (`~` first, then `/`). */
export function escapeSegment(segment: string | number): string {
  return String(segment).replaceAll('~', '~0').replaceAll('/', '~1');
}

function unescapeSegment(segment: string): string {
  return segment.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** Builds a pointer into the document body from unescaped segments. */
export function pointer(...segments: readonly (string | number)[]): string {
  return segments.map((s) => `/${escapeSegment(s)}`).join('');
}

/** Builds a pointer into the `configuration` member. */
export function at(...segments: readonly (string | number)[]): string {
  return pointer('configuration', ...segments);
}

/** The value `path` points at in `root`, or undefined when nothing is there. */
export function valueAt(root: unknown, path: string): unknown {
  if (path === '') return root;
  let current: unknown = root;
  for (const raw of path.slice(1).split('/')) {
    const key = unescapeSegment(raw);
    if (Array.isArray(current)) current = current[Number(key)];
    else if (isRecord(current)) current = current[key];
    else return undefined;
  }
  return current;
}

/** Whether `path` is one of `paths` or lies below one of them. */
export function atOrBelowAny(path: string, paths: ReadonlySet<string>): boolean {
  for (let end = path.length; end > 0; end = path.lastIndexOf('/', end - 1)) {
    if (paths.has(path.slice(0, end))) return true;
  }
  return false;
}

/** Whether `value` is a JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The list without repeats of the same message at the same path, first occurrences kept. */
export function dedupe(errors: readonly ConfigurationError[]): ConfigurationError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const key = `${e.path}\u0000${e.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The first {@link CONFIGURATION_ERRORS_MAX_COUNT} errors, and an entry counting the rest. */
export function capped(errors: ConfigurationError[]): ConfigurationError[] {
  if (errors.length <= CONFIGURATION_ERRORS_MAX_COUNT) return errors;
  const more = errors.length - CONFIGURATION_ERRORS_MAX_COUNT;
  return [
    ...errors.slice(0, CONFIGURATION_ERRORS_MAX_COUNT),
    { path: '', message: `${more} further error(s) not listed (at most ${CONFIGURATION_ERRORS_MAX_COUNT})` },
  ];
}
