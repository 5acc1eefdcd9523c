/**
 * Runs the script of one Script step in an isolate of its own (isolated-vm: a separate V8 heap,
 * run on isolated-vm's threads; docs/adr/0012-flow-script-isolation.md). The isolate holds the
 * ECMAScript built-ins and nothing of the host: no `require`, `process`, timers, file system or
 * network. The script is the body of a function of `input` and `publish`; it is compiled once
 * and called for a whole chunk of records in one call across the isolate boundary.
 *
 * A record's outputs depend on the record alone: before any script runs, every object a script
 * can reach without making it (the global object, the built-ins, their prototypes) is frozen, so
 * no record leaves state for the next one, and the clock and randomness are gone (`Date.now()`,
 * `new Date()`, `Math.random()` throw). So records can share an isolate and a call.
 *
 * Limits: each call has a wall-clock limit the isolate enforces (`timeoutMs`), so a script that
 * never ends is stopped, and the isolate has a heap limit (`memoryMb`); an isolate that runs out
 * is disposed by V8 and a fresh one is made. A batch that hits the time limit is resumed: the
 * record that was running when time ran out gets a call (and the full limit) of its own, and the
 * batch goes on after it. When that call runs out of time too, the isolate's heap tells a record
 * that allocates without end (`script-memory`) from one that computes without end
 * (`script-timeout`); when garbage of earlier records clouds it, the record runs once more in an
 * isolate of its own. So every record gets at least the full limit, and a record that never ends
 * costs its chunk about twice the limit (three times when the heap was clouded). A record that
 * exhausts memory takes the isolate with it; the batch is then rerun record by record, to tell
 * which one it was. An isolate the host disposes is no record's fault.
 *
 * This is the only file that imports isolated-vm. The script text each isolate evaluates (the
 * prelude and the lockdown) is in isolate-scripts.ts, and the reading of the results the runner
 * collects in script-results.ts.
 */
import ivm from 'isolated-vm';
import { LOCKDOWN, PRELUDE } from './isolate-scripts.js';
import { isOutOfMemory, isPublished, parseEntries, type ScriptRecordResult } from './script-results.js';

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

/** Milliseconds allowed for the runner's own bookkeeping calls (parse, collect). */
const RUNNER_CALL_TIMEOUT_MS = 5_000;

/**
 * A record stopped by the time limit is out of memory, not out of time, when its call took at
 * least this share of the heap that was free when it began. Near its heap limit V8 collects
 * garbage again and again before it gives up, so a script that allocates without end is most
 * often stopped by the clock first; its heap says why it was slow.
 */
const TIMED_OUT_HEAP_TAKEN_SHARE_MIN = 0.5;

const BYTES_PER_MB = 1024 * 1024;

/** An isolate's heap before and after a call. */
interface HeapSpan {
  before: { used: number; limit: number };
  after: { used: number; limit: number };
}

interface Runner {
  isolate: ivm.Isolate;
  begin: ivm.Reference<(json: string) => number>;
  runFrom: ivm.Reference<(from: number) => void>;
  runOne: ivm.Reference<(i: number) => void>;
  /** The record whose step is running, or the number of records when none is. */
  current: ivm.Reference<() => number>;
  collect: ivm.Reference<() => string>;
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && /timed out/i.test(error.message);
}

/** Bytes an isolate holds: its heap and the array buffers counted against its limit. */
async function heapUsedBytes(isolate: ivm.Isolate): Promise<{ used: number; limit: number }> {
  const statistics = await isolate.getHeapStatistics();
  return {
    used: statistics.used_heap_size + statistics.externally_allocated_size,
    limit: statistics.heap_size_limit,
  };
}

/** One step's script in its isolate; calls are queued, one at a time. */
export class ScriptSandbox {
  readonly #source: string;
  readonly #label: string;
  readonly #limits: ScriptLimits;
  #runner: Promise<Runner> | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #disposed = false;
  /** The isolate of a record run on its own (`#runFresh`), disposed with the sandbox. */
  #alone: ivm.Isolate | undefined;

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
   * result of its record only. Rejects when the isolate cannot be set up at all, or when the
   * sandbox is disposed before the run ends (its records were not judged).
   */
  run(inputsJson: string, count: number): Promise<ScriptRecordResult[]> {
    const result = this.#queue.then(() => this.#runBatch(inputsJson, count));
    this.#queue = result.catch(() => undefined);
    return result;
  }

  /**
   * Releases the isolate for good (a new configuration revision, or shutdown). A run in flight
   * or asked for later rejects: an isolate disposed here is no record's fault, never
   * `script-memory`.
   */
  dispose(): void {
    this.#disposed = true;
    const runner = this.#runner;
    this.#runner = undefined;
    runner?.then((r) => r.isolate.isDisposed || r.isolate.dispose()).catch(() => undefined);
    const alone = this.#alone;
    if (alone !== undefined && !alone.isDisposed) alone.dispose();
  }

  async #runBatch(inputsJson: string, count: number): Promise<ScriptRecordResult[]> {
    const verdicts = new Map<number, ScriptRecordResult>();
    const runner = await this.#ready();
    try {
      await runner.begin.apply(undefined, [inputsJson], { timeout: RUNNER_CALL_TIMEOUT_MS });
      let from = 0;
      while (from < count) {
        try {
          await runner.runFrom.apply(undefined, [from], { timeout: this.#limits.timeoutMs });
          break;
        } catch (error) {
          if (!isTimeout(error)) {
            if (runner.isolate.isDisposed) throw error;
            // A promise job of a record was rejected and nothing handled it, which isolated-vm
            // reports once the call's steps have all returned; publish is closed by then, so it
            // changes no record's outputs.
            break;
          }
          // Time ran out in record `stuck`: it gets a call of its own, then the batch goes on
          // after it. When no step was running, a promise job of a finished record ran over;
          // every step of the batch returned.
          const stuck = await runner.current.apply(undefined, [], { timeout: RUNNER_CALL_TIMEOUT_MS });
          if (stuck >= count) break;
          const verdict = await this.#runOwn(runner, inputsJson, count, stuck);
          if (verdict !== undefined) verdicts.set(stuck, verdict);
          from = stuck + 1;
        }
      }
      const collected = await runner.collect.apply(undefined, [], { timeout: RUNNER_CALL_TIMEOUT_MS });
      const entries = parseEntries(collected);
      return Array.from({ length: count }, (_, i) => verdicts.get(i) ?? this.#result(entries[i]));
    } catch (error) {
      if (this.#disposed) throw this.#disposedError();
      if (!runner.isolate.isDisposed) throw error;
      // V8 disposed the isolate: it ran out of memory. Find the record one call at a time.
      this.#runner = undefined;
      return this.#runOneByOne(inputsJson, count);
    }
  }

  async #runOneByOne(inputsJson: string, count: number): Promise<ScriptRecordResult[]> {
    const results: ScriptRecordResult[] = [];
    for (let i = 0; i < count; i++) {
      const runner = await this.#ready();
      try {
        await runner.begin.apply(undefined, [inputsJson], { timeout: RUNNER_CALL_TIMEOUT_MS });
        const verdict = await this.#runOwn(runner, inputsJson, count, i);
        if (verdict !== undefined) {
          results.push(verdict);
        } else {
          const collected = await runner.collect.apply(undefined, [], { timeout: RUNNER_CALL_TIMEOUT_MS });
          results.push(this.#result(parseEntries(collected)[i]));
        }
      } catch (error) {
        if (this.#disposed) throw this.#disposedError();
        if (!runner.isolate.isDisposed) throw error;
        this.#runner = undefined;
        results.push(this.#memoryResult());
      }
    }
    return results;
  }

  /**
   * Calls the step for record `i` alone with the full time limit. `undefined` when its step
   * returned (its result is collected with the others), else its verdict: `script-memory` when
   * the call took at least half of the heap that was free, `script-timeout` when the heap is
   * mostly free. When the heap is mostly taken but not by this call as far as can be seen (V8 may
   * have reclaimed the garbage of earlier records to make room), the record runs once more in an
   * isolate of its own, whose heap holds only the runner, the records and what it takes.
   */
  async #runOwn(
    runner: Runner,
    inputsJson: string,
    count: number,
    i: number,
  ): Promise<ScriptRecordResult | undefined> {
    const call = await this.#callAlone(runner, i, count);
    if (call === undefined) return undefined;
    const memory = this.#outOfMemory(call);
    if (memory !== undefined) return memory;
    if (call.after.used < call.after.limit * TIMED_OUT_HEAP_TAKEN_SHARE_MIN) return this.#timeoutResult();
    return this.#runFresh(inputsJson, count, i);
  }

  /**
   * Calls the step for record `i` with the full time limit; `undefined` when it returned, else
   * the isolate's heap before and after. Rejects when the isolate was disposed.
   */
  async #callAlone(runner: Runner, i: number, count: number): Promise<HeapSpan | undefined> {
    const before = await heapUsedBytes(runner.isolate);
    try {
      await runner.runOne.apply(undefined, [i], { timeout: this.#limits.timeoutMs });
      return undefined;
    } catch (error) {
      if (runner.isolate.isDisposed) throw error;
      // Not a timeout: an unhandled rejection of its promise jobs, after its step returned
      // (see #runBatch). A timeout with no step running: one of those jobs ran over.
      if (!isTimeout(error)) return undefined;
      const running = await runner.current.apply(undefined, [], { timeout: RUNNER_CALL_TIMEOUT_MS });
      if (running >= count) return undefined;
      return { before, after: await heapUsedBytes(runner.isolate) };
    }
  }

  /** `script-memory` for a record stopped by the clock that took half or more of the free heap. */
  #outOfMemory({ before, after }: HeapSpan): ScriptRecordResult | undefined {
    const taken = after.used - before.used;
    const free = before.limit - before.used;
    if (free > 0 && taken >= free * TIMED_OUT_HEAP_TAKEN_SHARE_MIN) {
      return {
        ok: false,
        code: 'script-memory',
        message:
          `script of step "${this.#label}" ran out of memory: when its ${this.#limits.timeoutMs} ms ran out ` +
          `it had taken ${Math.round(taken / BYTES_PER_MB)} MB of the ${this.#limits.memoryMb} MB a script may use`,
      };
    }
    return undefined;
  }

  /** Record `i` run in an isolate of its own (see #runOwn). */
  async #runFresh(inputsJson: string, count: number, i: number): Promise<ScriptRecordResult> {
    const runner = await this.#create();
    this.#alone = runner.isolate;
    try {
      await runner.begin.apply(undefined, [inputsJson], { timeout: RUNNER_CALL_TIMEOUT_MS });
      const call = await this.#callAlone(runner, i, count);
      if (call !== undefined) return this.#outOfMemory(call) ?? this.#timeoutResult();
      const collected = await runner.collect.apply(undefined, [], { timeout: RUNNER_CALL_TIMEOUT_MS });
      return this.#result(parseEntries(collected)[i]);
    } catch (error) {
      if (this.#disposed) throw this.#disposedError();
      if (!runner.isolate.isDisposed) throw error;
      return this.#memoryResult();
    } finally {
      this.#alone = undefined;
      if (!runner.isolate.isDisposed) runner.isolate.dispose();
    }
  }

  #disposedError(): Error {
    return new Error(`the isolate of step "${this.#label}" was disposed before its records were run`);
  }

  #timeoutResult(): ScriptRecordResult {
    return {
      ok: false,
      code: 'script-timeout',
      message: `script of step "${this.#label}" ran longer than the ${this.#limits.timeoutMs} ms a record may take`,
    };
  }

  #memoryResult(): ScriptRecordResult {
    return {
      ok: false,
      code: 'script-memory',
      message: `script of step "${this.#label}" used more than the ${this.#limits.memoryMb} MB a script may use`,
    };
  }

  /** One record's entry of the runner's results, checked, since a script may tamper. */
  #result(entry: unknown): ScriptRecordResult {
    if (typeof entry === 'string') {
      return { ok: false, code: 'script-error', message: `script of step "${this.#label}" threw ${entry}` };
    }
    if (isPublished(entry)) return { ok: true, published: entry[0], unpublishable: entry[1] };
    if (isOutOfMemory(entry)) return this.#memoryResult();
    return {
      ok: false,
      code: 'script-error',
      message: `script of step "${this.#label}" changed the built-ins its results are returned with`,
    };
  }

  #ready(): Promise<Runner> {
    if (this.#disposed) return Promise.reject(this.#disposedError());
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
      const body = `'use strict';\n${this.#source}\n`;
      // V8's own parser checks that the script is a function body by itself, before any of it
      // runs: a script that closed the wrapper below early would run code, and could keep state,
      // outside every record.
      await context.evalClosure("Function('input', 'publish', $0);", [body], {
        arguments: { copy: true },
        timeout: RUNNER_CALL_TIMEOUT_MS,
      });
      // The script is the body of a function; its first line is line 1 of what the user wrote.
      const step = await isolate.compileScript(`(function (input, publish) { ${body}})`, {
        filename: 'flow-script',
        lineOffset: -1,
      });
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
