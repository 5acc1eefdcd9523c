/**
 * Phase 2 of the upload check: what a semantic check is, and the helpers every check reads the
 * document with. Each module declares its own checks (this module the sections it owns, `flows`
 * the flows section) and the composition root hands them all to the upload
 * (`src/composition/configuration-checks.ts`), so no module imports the rules of another.
 *
 * The checks read the configuration as far as it is sound (`Readable`, see `readable.ts`): a
 * faulty or missing required member is `null`, and a check skips exactly what it cannot read. A
 * reference is checked against the names that could be read; a check that needs a whole list
 * (exactly one Input step, exactly one event_type attribute) says nothing while a member of that
 * list is unreadable.
 */
import { at } from './configuration-errors.js';
import type { ConfigurationSectionName } from './document.js';
import type { Configuration } from './model.js';
import type { Readable } from './readable.js';

/** The configuration as far as it could be read. */
export type ReadableConfiguration = Readable<Configuration>;

/** Records one problem: a JSON Pointer into the body and a sentence naming the rule. */
export type Report = (path: string, message: string) => void;

/**
 * A semantic check: reads the configuration and reports what is wrong with it. `section` is the
 * section its problems are reported in; the checks run, and their problems are listed, by
 * section in download order (`CONFIGURATION_SECTIONS`), each section's checks in the order they
 * are given.
 */
export interface ConfigurationCheck {
  readonly section: ConfigurationSectionName;
  readonly check: (c: ReadableConfiguration, report: Report) => void;
}

/** A list as a check may read it: absent, unreadable (`null`), or with unreadable elements. */
export type ReadableList<T> = readonly (T | null)[] | null | undefined;

/** The elements of a list that could be read, each with its index in the document. */
export function readable<T>(items: ReadableList<T>): [T, number][] {
  const out: [T, number][] = [];
  items?.forEach((item, i) => {
    if (item !== null) out.push([item, i]);
  });
  return out;
}

/** The members of a map whose values could be read. */
export function members<T>(
  map: Readonly<Record<string, T | null | undefined>> | null | undefined,
): [string, T][] {
  const out: [string, T][] = [];
  for (const [key, value] of Object.entries(map ?? {})) {
    if (value !== null && value !== undefined) out.push([key, value]);
  }
  return out;
}

/** Whether every element of a list, and the member `member` of each, could be read. */
export function allReadable<T extends object>(items: ReadableList<T>, member: keyof T): boolean {
  return items !== null && (items ?? []).every((item) => item !== null && item[member] !== null);
}

/** A string member value, or undefined when it is absent or could not be read. */
export function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/**
 * Reports every element whose key repeats an earlier one. `keyOf` returns undefined for elements
 * that have no key to compare (absent or unreadable).
 */
export function checkUnique<T>(
  items: ReadableList<T>,
  keyOf: (item: T) => string | undefined,
  pathOf: (index: number) => string,
  describe: (key: string, firstPath: string) => string,
  report: Report,
): void {
  const first = new Map<string, number>();
  for (const [item, i] of readable(items)) {
    const key = keyOf(item);
    if (key === undefined) continue;
    const j = first.get(key);
    if (j === undefined) first.set(key, i);
    else report(pathOf(i), describe(key, pathOf(j)));
  }
}

/** Reports every element of `section` whose `member` repeats an earlier element's. */
export function uniqueNames<T>(
  section: ConfigurationSectionName,
  items: ReadableList<T>,
  member: keyof T & string,
  report: Report,
): void {
  checkUnique(
    items,
    (item) => text(item[member]),
    (i) => at(section, i, member),
    (key, first) => `duplicate ${member} "${key}": must be unique within ${section} (first at ${first})`,
    report,
  );
}

/** The `member` values of the readable elements of a section, or null when the section is unreadable. */
export function namesOf<T>(items: ReadableList<T>, member: keyof T): Set<string> | null {
  if (items === null) return null;
  const names = new Set<string>();
  for (const [item] of readable(items)) {
    const name = text(item[member]);
    if (name !== undefined) names.add(name);
  }
  return names;
}

/**
 * Reports every reference (pointer and value) that names no element of the target section.
 * Nothing is checked while the target section cannot be read, nor a reference whose value
 * could not be read.
 */
export function checkReferences(
  references: readonly (readonly [path: string, value: unknown])[],
  names: ReadonlySet<string> | null,
  target: ConfigurationSectionName,
  targetMember: string,
  report: Report,
): void {
  if (names === null) return;
  for (const [path, raw] of references) {
    const value = text(raw);
    if (value !== undefined && !names.has(value)) {
      report(path, `must name an existing ${target} entry: no ${targetMember} "${value}"`);
    }
  }
}
