import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

/** Every TypeScript file under src, relative to it (`modules/accounting/store.ts`). */
function sourceFiles(): string[] {
  return readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts'))
    .map((path) => path.split('\\').join('/'));
}

/**
 * The files under src that `file` imports or re-exports through a relative specifier, type-only
 * imports included: a cycle of types still ties two files together.
 */
function importsOf(file: string): string[] {
  const text = readFileSync(join(SRC, file), 'utf8');
  const specifiers = [...text.matchAll(/^(?:import|export)\b[^;]*?(?:\bfrom\s+|^import\s+)'(\.[^']+)'/gms)];
  return specifiers.map((match) =>
    relative(SRC, resolve(SRC, dirname(file), (match[1] ?? '').replace(/\.js$/, '.ts')))
      .split('\\')
      .join('/'),
  );
}

/** `modules/<name>` for a module file, else undefined. */
function moduleOf(file: string): string | undefined {
  const [top, name, ...rest] = file.split('/');
  return top === 'modules' && name !== undefined && rest.length > 0 ? `modules/${name}` : undefined;
}

/**
 * The cycles of a directed graph, each as the path that closes it: one per edge back to a node
 * still on the depth-first path, so every knot is named at least once (not every one of the
 * many cycles a knot may hold).
 */
function cyclesOf(graph: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const cycles: string[] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (node: string): void => {
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      const at = path.indexOf(next);
      if (at >= 0) cycles.push([...path.slice(at), next].join(' -> '));
      else if (!done.has(next)) visit(next);
    }
    path.pop();
    done.add(node);
  };
  for (const node of graph.keys()) if (!done.has(node)) visit(node);
  return cycles;
}

describe('layering of src', () => {
  const files = sourceFiles();

  it('has no import cycle between modules', () => {
    const graph = new Map<string, Set<string>>();
    for (const file of files) {
      const from = moduleOf(file);
      if (from === undefined) continue;
      for (const target of importsOf(file)) {
        const to = moduleOf(target);
        if (to === undefined || to === from) continue;
        graph.set(from, (graph.get(from) ?? new Set()).add(to));
      }
    }
    expect(graph.size).toBeGreaterThan(0);
    expect(cyclesOf(graph)).toEqual([]);
  });

  it('has no import cycle between files', () => {
    const graph = new Map(files.map((file) => [file, new Set(importsOf(file))]));
    expect(cyclesOf(graph)).toEqual([]);
  });

  /** The imports of the files under `folder` whose target `allowed` refuses, as `file -> target`. */
  const refused = (folder: string, allowed: (target: string) => boolean): string[] =>
    files
      .filter((file) => file.startsWith(folder))
      .flatMap((file) => importsOf(file).map((target) => ({ file, target })))
      .filter(({ target }) => !allowed(target))
      .map(({ file, target }) => `${file} -> ${target}`);

  it('lets modules import only modules and lib (never HTTP, storage or the composition root)', () => {
    expect(
      refused('modules/', (target) => target.startsWith('modules/') || target.startsWith('lib/')),
    ).toEqual([]);
  });

  it('lets storage import of the modules only their ports (modules/*/store.ts)', () => {
    expect(
      refused(
        'storage/',
        (target) => !target.startsWith('modules/') || /^modules\/[^/]+\/store\.ts$/.test(target),
      ),
    ).toEqual([]);
  });

  it('lets HTTP import of storage only the store handle and its errors (storage/store.ts, storage/errors.ts)', () => {
    expect(
      refused(
        'http/',
        (target) =>
          !target.startsWith('storage/') || ['storage/store.ts', 'storage/errors.ts'].includes(target),
      ),
    ).toEqual([]);
  });

  it('keeps the administration interface off the REST routes (http/admin never imports http/api)', () => {
    expect(refused('http/admin/', (target) => !target.startsWith('http/api/'))).toEqual([]);
  });

  it('asks which SQL dialect it is on only in the dialect adapters and the migrations', () => {
    // A comparison with a dialect's name is a branch on the dialect; the adapters
    // (storage/dialect-adapter.ts, storage/sqlite/, storage/postgres/) and the migrations are the
    // places allowed one, and everything else asks its adapter or picks with `byDialect`.
    const allowed = /^storage\/(?:dialect-adapter\.ts|sqlite\/|postgres\/|migrations\/)/;
    const branching = files.filter(
      (file) =>
        !allowed.test(file) &&
        /[!=]==\s*'(?:postgres|sqlite)'|'(?:postgres|sqlite)'\s*[!=]==/.test(
          readFileSync(join(SRC, file), 'utf8'),
        ),
    );
    expect(branching).toEqual([]);
  });
});
