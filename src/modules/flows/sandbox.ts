/**
 * Runs the script of one Script step in an isolate of its own (isolated-vm: a separate V8 heap,
 * run on isolated-vm's threads; docs/adr/0012-flow-script-isolation.md). The isolate holds the
 * ECMAScript built-ins and nothing of the host: no `require`, `process`, timers, file system or
 * network. The script is the body of a function of `input` and `publish`; it is compiled once
 * and called for a whole chunk of records in one call across the isolate boundary.
 *
 * Limits: each call has a wall-clock limit the isolate enforces (`timeoutMs`), so a script that
 * never ends is stopped, and the isolate has a heap limit (`memoryMb`); an isolate that runs out
 * is disposed by V8 and a fresh one is made. A batch that hits the time limit is resumed: the
 * record that was running when time ran out gets a call (and the full limit) of its own, and the
 * batch goes on after it. So every record gets at least the full limit, and a record that never
 * ends costs its chunk about twice the limit. A record that exhausts memory takes the isolate
 * with it; the batch is then rerun record by record in fresh isolates, to tell which one it was.
 */
import ivm from 'isolated-vm';

/** Default wall-clock limit of a script per record (`FLOW_SCRIPT_TIMEOUT_MS`). */
export const FLOW_SCRIPT_TIMEOUT_MS_DEFAULT = 50;
/** Highest `FLOW_SCRIPT_TIMEOUT_MS`: a record that needs a minute is no record. */
export const FLOW_SCRIPT_TIMEOUT_MS_MAX = 60_000;
/** Default heap of a script's isolate (`FLOW_SCRIPT_MEMORY_MB`). */
export const FLOW_SCRIPT_MEMORY_MB_DEFAULT = 64;
/** Bounds of `FLOW_SCRIPT_MEMORY_MB`: isolated-vm needs 8 MB; 4 GB is V8's own ceiling. */
export const FLOW_SCRIPT_MEMORY_MB_MIN = 8;
export const FLOW_SCRIPT_MEMORY_MB_MAX = 4096;

/** The per-record limits of scripts (`FLOW_SCRIPT_TIMEOUT_MS`, `FLOW_SCRIPT_MEMORY_MB`). */
export interface ScriptLimits {
  /** Wall-clock milliseconds a record's script may run. */
  timeoutMs: number;
  /** Heap megabytes of the isolate that runs a step's script. */
  memoryMb: number;
}

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

/**
 * Set up in every fresh context before the script is compiled. It removes the globals a script
 * has no use for (and that would let it evaluate code the upload never saw, keep state past a
 * record, or log nowhere) and defines the runner that calls the step for each record.
 * `JSON.parse` and `JSON.stringify` are taken before any script runs, so a script cannot change
 * how its records come in or its results go out.
 */
const PRELUDE = `
'use strict';
for (const name of ['eval', 'console', 'WebAssembly', 'SharedArrayBuffer', 'Atomics', 'WeakRef', 'FinalizationRegistry']) {
  delete globalThis[name];
}
globalThis.__makeRunner = function (step) {
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const isFinite = Number.isFinite;
  const isArray = Array.isArray;
  let inputs = [];
  let results = [];
  let current = 0;
  const describe = (error) => {
    try {
      if (error instanceof Error) {
        const at = /flow-script:(\\d+):(\\d+)/.exec(String(error.stack));
        const where = at === null ? '' : ' (line ' + at[1] + ', column ' + at[2] + ')';
        return String(error.name) + ': ' + String(error.message) + where;
      }
      return 'the value ' + String(error);
    } catch {
      return 'threw a value that cannot be shown';
    }
  };
  const runOne = (i) => {
    current = i;
    const published = [];
    const unpublishable = [];
    const publish = (name, value) => {
      if (typeof name !== 'string') {
        throw new TypeError('publish(name, value): the name must be a string, got ' + typeof name);
      }
      const kind = value === null ? 'null' : isArray(value) ? 'array' : typeof value;
      if (kind === 'string' || kind === 'boolean' || kind === 'null' || (kind === 'number' && isFinite(value))) {
        published[published.length] = [name, value];
      } else {
        unpublishable[unpublishable.length] = [name, kind === 'number' ? String(value) : kind];
      }
    };
    try {
      step(inputs[i], publish);
      results[i] = [published, unpublishable];
    } catch (error) {
      results[i] = describe(error);
    }
  };
  return {
    begin(json) {
      inputs = parse(json);
      results = [];
      current = 0;
      return inputs.length;
    },
    runFrom(from) {
      for (let i = from; i < inputs.length; i++) runOne(i);
      current = inputs.length;
    },
    runOne,
    current() {
      return current;
    },
    collect() {
      return stringify(results);
    },
  };
};
`;

/** Freezes the global object once the runner exists, so no record leaves state in a global. */
const LOCKDOWN = `
'use strict';
delete globalThis.__makeRunner;
Object.freeze(globalThis);
`;

/** Milliseconds allowed for the runner's own bookkeeping calls (parse, collect). */
const RUNNER_CALL_TIMEOUT_MS = 5_000;

interface Runner {
  isolate: ivm.Isolate;
  begin: ivm.Reference<(json: string) => number>;
  runFrom: ivm.Reference<(from: number) => void>;
  runOne: ivm.Reference<(i: number) => void>;
  current: ivm.Reference<() => number>;
  collect: ivm.Reference<() => string>;
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && /timed out/i.test(error.message);
}

/** One step's script in its isolate; calls are queued, one at a time. */
export class ScriptSandbox {
  readonly #source: string;
  readonly #label: string;
  readonly #limits: ScriptLimits;
  #runner: Promise<Runner> | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  /**
   * `source` is the script text (checked at upload: it parses, and names only globals a script
   * has); `label` names the step in messages and stack traces.
   */
  constructor(source: string, label: string, limits: ScriptLimits) {
    this.#source = source;
    this.#label = label;
    this.#limits = limits;
  }

  /**
   * Runs the script once per record of `inputsJson` (a JSON array of records) and returns one
   * result per record, in order. A script that throws, runs over time or exhausts memory is the
   * result of its record only. Rejects only when the isolate cannot be set up at all.
   */
  run(inputsJson: string, count: number): Promise<ScriptRecordResult[]> {
    const result = this.#queue.then(() => this.#runBatch(inputsJson, count));
    this.#queue = result.catch(() => undefined);
    return result;
  }

  /** Releases the isolate; a later run makes a new one. */
  dispose(): void {
    const runner = this.#runner;
    this.#runner = undefined;
    runner?.then((r) => r.isolate.isDisposed || r.isolate.dispose()).catch(() => undefined);
  }

  async #runBatch(inputsJson: string, count: number): Promise<ScriptRecordResult[]> {
    const timeout = this.#limits.timeoutMs;
    const timedOut = new Set<number>();
    const runner = await this.#ready();
    try {
      await runner.begin.apply(undefined, [inputsJson], { timeout: RUNNER_CALL_TIMEOUT_MS });
      let from = 0;
      while (from < count) {
        try {
          await runner.runFrom.apply(undefined, [from], { timeout });
          break;
        } catch (error) {
          if (!isTimeout(error)) throw error;
          // Time ran out in record `stuck`: give it a call of its own, then go on after it.
          const stuck = await runner.current.apply(undefined, [], { timeout: RUNNER_CALL_TIMEOUT_MS });
          try {
            await runner.runOne.apply(undefined, [stuck], { timeout });
          } catch (again) {
            if (!isTimeout(again)) throw again;
            timedOut.add(stuck);
          }
          from = stuck + 1;
        }
      }
      const collected = await runner.collect.apply(undefined, [], { timeout: RUNNER_CALL_TIMEOUT_MS });
      return this.#results(collected, count, timedOut);
    } catch (error) {
      if (!runner.isolate.isDisposed) throw error;
      // The isolate ran out of memory: find the record one call at a time.
      this.#runner = undefined;
      return this.#runOneByOne(inputsJson, count);
    }
  }

  async #runOneByOne(inputsJson: string, count: number): Promise<ScriptRecordResult[]> {
    const results: ScriptRecordResult[] = [];
    const timeout = this.#limits.timeoutMs;
    for (let i = 0; i < count; i++) {
      const runner = await this.#ready();
      try {
        await runner.begin.apply(undefined, [inputsJson], { timeout: RUNNER_CALL_TIMEOUT_MS });
        await runner.runOne.apply(undefined, [i], { timeout });
        const collected = await runner.collect.apply(undefined, [], { timeout: RUNNER_CALL_TIMEOUT_MS });
        results.push(this.#results(collected, count, new Set())[i] ?? this.#broken());
      } catch (error) {
        if (runner.isolate.isDisposed) {
          this.#runner = undefined;
          results.push({
            ok: false,
            code: 'script-memory',
            message: `script of step "${this.#label}" used more than the ${this.#limits.memoryMb} MB a script may use`,
          });
        } else if (isTimeout(error)) {
          results.push(this.#timeoutResult());
        } else {
          throw error;
        }
      }
    }
    return results;
  }

  #timeoutResult(): ScriptRecordResult {
    return {
      ok: false,
      code: 'script-timeout',
      message: `script of step "${this.#label}" ran longer than the ${this.#limits.timeoutMs} ms a record may take`,
    };
  }

  #broken(): ScriptRecordResult {
    return {
      ok: false,
      code: 'script-error',
      message: `script of step "${this.#label}" changed the built-ins its results are returned with`,
    };
  }

  /** Reads the runner's results: one entry per record, checked, since a script may tamper. */
  #results(collected: string, count: number, timedOut: ReadonlySet<number>): ScriptRecordResult[] {
    let raw: unknown;
    try {
      raw = JSON.parse(collected);
    } catch {
      raw = undefined;
    }
    const entries = Array.isArray(raw) ? raw : [];
    const results: ScriptRecordResult[] = [];
    for (let i = 0; i < count; i++) {
      const entry: unknown = entries[i];
      if (timedOut.has(i)) results.push(this.#timeoutResult());
      else if (typeof entry === 'string')
        results.push({
          ok: false,
          code: 'script-error',
          message: `script of step "${this.#label}" threw ${entry}`,
        });
      else if (isPublished(entry)) results.push({ ok: true, published: entry[0], unpublishable: entry[1] });
      else results.push(this.#broken());
    }
    return results;
  }

  #ready(): Promise<Runner> {
    const existing = this.#runner;
    if (existing !== undefined) return existing;
    const created = this.#create();
    this.#runner = created;
    created.catch(() => {
      if (this.#runner === created) this.#runner = undefined;
    });
    return created;
  }

  async #create(): Promise<Runner> {
    const isolate = new ivm.Isolate({ memoryLimit: this.#limits.memoryMb });
    try {
      const context = await isolate.createContext();
      await context.eval(PRELUDE, { timeout: RUNNER_CALL_TIMEOUT_MS });
      // The script is the body of a function; its first line is line 1 of what the user wrote.
      const step = await isolate.compileScript(
        `(function (input, publish) { 'use strict';\n${this.#source}\n})`,
        { filename: 'flow-script', lineOffset: -1 },
      );
      const stepFunction = await step.run(context, { reference: true, timeout: RUNNER_CALL_TIMEOUT_MS });
      const makeRunner: ivm.Reference = await context.global.get('__makeRunner', { reference: true });
      const runner = (await makeRunner.apply(undefined, [stepFunction.derefInto()], {
        result: { reference: true },
        timeout: RUNNER_CALL_TIMEOUT_MS,
      })) as ivm.Reference<Record<string, unknown>>;
      const method = <T>(name: string) => runner.get(name, { reference: true }) as Promise<ivm.Reference<T>>;
      const made: Runner = {
        isolate,
        begin: await method('begin'),
        runFrom: await method('runFrom'),
        runOne: await method('runOne'),
        current: await method('current'),
        collect: await method('collect'),
      };
      await context.eval(LOCKDOWN, { timeout: RUNNER_CALL_TIMEOUT_MS });
      return made;
    } catch (error) {
      if (!isolate.isDisposed) isolate.dispose();
      throw error;
    }
  }
}

function isPublished(
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
