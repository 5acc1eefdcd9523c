/**
 * The difference between two configurations, change by change, each at a JSON Pointer
 * (RFC 6901) into the configuration it is found in: the newer one for an added or changed value,
 * the older one for a removed value. Elements of the sections and lists that name their elements
 * (entities, attributes, flows, lookups, ...; `NAMED_ARRAYS`) are matched by name, as a reader
 * thinks of them: an element whose name stays is `changed` where its members differ, never
 * removed and added again, and a change of order alone is no change. Other arrays (nodes,
 * posting patterns, a step's mapping, ...) are compared position by position. Objects are
 * compared member by member. Pure.
 */
import type { Configuration } from './model.js';

/** One difference: where, what kind, and the values before and after (absent where there is none). */
export interface ConfigurationChange {
  path: string;
  kind: 'added' | 'removed' | 'changed';
  old?: unknown;
  new?: unknown;
}

/** The most changes one diff lists; a diff that finds more says so with `truncated`. */
export const CONFIGURATION_DIFF_CHANGES_MAX = 10_000;

/** The changes between `from` and `to`, in document order, at most {@link CONFIGURATION_DIFF_CHANGES_MAX}. */
export interface ConfigurationDiff {
  changes: ConfigurationChange[];
  truncated: boolean;
}

type Named = (element: Record<string, unknown>) => unknown;

const byName: Named = (e) => e.name;

/**
 * The arrays whose elements have a name unique among them (the upload checks make it so), by
 * their place in the document with `*` for an array index: how the diff matches their elements.
 */
const NAMED_ARRAYS: ReadonlyMap<string, Named> = new Map<string, Named>([
  ['/accountLookups', (e) => e.postingCode],
  ['/accountingConfigurations', byName],
  ['/businessCalendars', byName],
  ['/businessEventDefinition/attributes', byName],
  ['/businessEventTypes', byName],
  ['/dimensionSets', byName],
  [
    '/entities',
    (e) =>
      typeof e.namespace === 'string' && typeof e.name === 'string' ? `${e.namespace}/${e.name}` : undefined,
  ],
  ['/entities/*/attributes', byName],
  ['/fiscalCalendars', byName],
  ['/flows', byName],
  ['/journalDefinition/fields', byName],
  ['/journalTypes', (e) => e.code],
  ['/nodeValues', (e) => e.fieldName],
  ['/postingComponentIdentifications', (e) => e.businessEventTypeName],
  ['/postingComponents', (e) => e.code],
]);

/** A reference token of a JSON Pointer (RFC 6901, 3): `~` as `~0`, `/` as `~1`. */
export function pointerToken(token: string | number): string {
  return String(token).replaceAll('~', '~0').replaceAll('/', '~1');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Collects changes up to the limit; `full` once it is reached. */
class Changes {
  readonly list: ConfigurationChange[] = [];
  full = false;

  add(change: ConfigurationChange): void {
    if (this.list.length >= CONFIGURATION_DIFF_CHANGES_MAX) this.full = true;
    else this.list.push(change);
  }
}

/**
 * The keys of the elements of `list` by `named`, or undefined when some element has no usable
 * name or two share one (then the array is compared by position).
 */
function keysOf(list: readonly unknown[], named: Named): Map<string, number> | undefined {
  const keys = new Map<string, number>();
  for (const [i, element] of list.entries()) {
    const key = isObject(element) ? named(element) : undefined;
    if (typeof key !== 'string' || keys.has(key)) return undefined;
    keys.set(key, i);
  }
  return keys;
}

function compare(
  from: unknown,
  to: unknown,
  fromPath: string,
  toPath: string,
  place: string,
  out: Changes,
): void {
  if (out.full) return;
  if (Array.isArray(from) && Array.isArray(to)) {
    compareArrays(from, to, fromPath, toPath, place, out);
    return;
  }
  if (isObject(from) && isObject(to)) {
    for (const [key, value] of Object.entries(from)) {
      const token = pointerToken(key);
      if (!Object.hasOwn(to, key)) out.add({ path: `${fromPath}/${token}`, kind: 'removed', old: value });
      else compare(value, to[key], `${fromPath}/${token}`, `${toPath}/${token}`, `${place}/${token}`, out);
    }
    for (const [key, value] of Object.entries(to)) {
      if (!Object.hasOwn(from, key))
        out.add({ path: `${toPath}/${pointerToken(key)}`, kind: 'added', new: value });
    }
    return;
  }
  if (JSON.stringify(from) !== JSON.stringify(to))
    out.add({ path: toPath, kind: 'changed', old: from, new: to });
}

function compareArrays(
  from: readonly unknown[],
  to: readonly unknown[],
  fromPath: string,
  toPath: string,
  place: string,
  out: Changes,
): void {
  const named = NAMED_ARRAYS.get(place);
  const fromKeys = named === undefined ? undefined : keysOf(from, named);
  const toKeys = named === undefined ? undefined : keysOf(to, named);
  if (fromKeys === undefined || toKeys === undefined) {
    const common = Math.min(from.length, to.length);
    for (let i = 0; i < common; i += 1)
      compare(from[i], to[i], `${fromPath}/${i}`, `${toPath}/${i}`, `${place}/*`, out);
    for (let i = common; i < from.length; i += 1)
      out.add({ path: `${fromPath}/${i}`, kind: 'removed', old: from[i] });
    for (let i = common; i < to.length; i += 1)
      out.add({ path: `${toPath}/${i}`, kind: 'added', new: to[i] });
    return;
  }
  for (const [key, i] of fromKeys) {
    const j = toKeys.get(key);
    if (j === undefined) out.add({ path: `${fromPath}/${i}`, kind: 'removed', old: from[i] });
    else compare(from[i], to[j], `${fromPath}/${i}`, `${toPath}/${j}`, `${place}/*`, out);
  }
  for (const [key, j] of toKeys) {
    if (!fromKeys.has(key)) out.add({ path: `${toPath}/${j}`, kind: 'added', new: to[j] });
  }
}

/**
 * The changes that turn configuration `from` into `to` (see the header for paths and matching).
 * At most {@link CONFIGURATION_DIFF_CHANGES_MAX}; `truncated` says more were found. Pure.
 */
export function diffConfigurations(from: Configuration, to: Configuration): ConfigurationDiff {
  const out = new Changes();
  compare(from, to, '', '', '', out);
  return { changes: out.list, truncated: out.full };
}
