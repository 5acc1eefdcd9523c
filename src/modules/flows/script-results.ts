/**
 * What a Script step did for each record, and the reading of it on the host: the runner in the
 * isolate (isolate-scripts.ts) collects one entry per record as JSON (the published values and
 * the unpublishable calls, the message of what the step threw, or a mark that memory ran out),
 * and since a script may tamper with the built-ins that write it, every entry is checked here.
 */

/** What the script did for one record. */
export type ScriptRecordResult =
  | {
      ok: true;
      /** `publish(name, value)` calls in order: a value that is a string, a finite number or a boolean. */
      published: [string, string | number | boolean | null][];
      /** Calls whose value no field type accepts, with what it was (`undefined`, `object`, `NaN`...). */
      unpublishable: [string, string][];
    }
  | { ok: false; code: 'script-error' | 'script-timeout' | 'script-memory'; message: string };

/** The runner's results as a list, or an empty one when they do not parse. */
export function parseEntries(collected: string): unknown[] {
  try {
    const raw: unknown = JSON.parse(collected);
    return Array.isArray(raw) ? raw : [];
  } catch {
    return [];
  }
}

/** An entry that says the step ran out of memory (V8 could not allocate an ArrayBuffer). */
export function isOutOfMemory(entry: unknown): boolean {
  return (
    typeof entry === 'object' && entry !== null && (entry as { outOfMemory?: unknown }).outOfMemory === true
  );
}

/** An entry of a step that returned: its `publish` calls and the calls no field type accepts. */
export function isPublished(
  entry: unknown,
): entry is [[string, string | number | boolean | null][], [string, string][]] {
  return (
    Array.isArray(entry) &&
    entry.length === 2 &&
    Array.isArray(entry[0]) &&
    Array.isArray(entry[1]) &&
    (entry[0] as unknown[]).every((p) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string') &&
    (entry[1] as unknown[]).every(
      (p) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string' && typeof p[1] === 'string',
    )
  );
}
