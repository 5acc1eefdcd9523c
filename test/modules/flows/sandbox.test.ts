import ivm from 'isolated-vm';
import { afterEach, describe, expect, it } from 'vitest';
import { FLOW_SCRIPT_GLOBALS } from '../../../src/modules/configuration/flow-scripts.js';
import { ScriptSandbox } from '../../../src/modules/flows/sandbox.js';

const LIMITS = { timeoutMs: 50, memoryMb: 32 };
const sandboxes: ScriptSandbox[] = [];

function sandbox(source: string, limits = LIMITS): ScriptSandbox {
  const made = new ScriptSandbox(source, 'step', limits);
  sandboxes.push(made);
  return made;
}

function inputs(count: number): [string, number] {
  return [JSON.stringify(Array.from({ length: count }, (_, i) => ({ i }))), count];
}

afterEach(() => {
  for (const s of sandboxes.splice(0)) s.dispose();
});

describe('the script sandbox', () => {
  it('leaves a script exactly the globals the upload check allows', async () => {
    const names = await sandbox(
      "for (const name of Object.getOwnPropertyNames(globalThis)) publish('n', name);",
    ).run(...inputs(1));
    const [result] = names;
    if (result === undefined || !result.ok) throw new Error('the script ran');
    const seen = result.published.map(([, name]) => name);
    // `input` and `publish` are the step function's parameters, not globals.
    expect(new Set(seen)).toEqual(
      new Set([...FLOW_SCRIPT_GLOBALS].filter((n) => n !== 'input' && n !== 'publish')),
    );
  });

  it('runs a batch in one call and keeps the order of the records', async () => {
    const results = await sandbox("publish('twice', input.i * 2)").run(...inputs(1000));
    expect(results.map((r) => (r.ok ? r.published[0]?.[1] : r.code))).toEqual(
      Array.from({ length: 1000 }, (_, i) => i * 2),
    );
  });

  it('resumes a batch after a record that never ends, and every other record gets its result', async () => {
    const results = await sandbox("if (input.i % 100 === 7) for (;;) {}\npublish('i', input.i)").run(
      ...inputs(300),
    );
    const timedOut = results.flatMap((r, i) => (r.ok ? [] : [[i, r.code]]));
    expect(timedOut).toEqual([
      [7, 'script-timeout'],
      [107, 'script-timeout'],
      [207, 'script-timeout'],
    ]);
  });

  it('gives each slow record the whole limit of its own', async () => {
    // 100 ms of wall clock a record against a limit of 250 ms: a batch window holds two, so the
    // batch is resumed several times, yet no record times out. (The wall clock, not CPU time,
    // ends each record, so a loaded machine does not change the outcome.)
    const results = await sandbox(
      "const until = Date.now() + 100; while (Date.now() < until) {}\npublish('i', input.i)",
      {
        timeoutMs: 250,
        memoryMb: 32,
      },
    ).run(...inputs(6));
    expect(results.every((r) => r.ok)).toBe(true);
  });

  it('replaces an isolate that ran out of memory and names the record that did it', async () => {
    const results = await sandbox(
      "if (input.i === 2) { const all = []; for (;;) all.push(new Array(1e6).fill(1.5)); }\npublish('i', input.i)",
      { timeoutMs: 5_000, memoryMb: 16 },
    ).run(...inputs(4));
    expect(results.map((r) => (r.ok ? 'ok' : r.code))).toEqual(['ok', 'ok', 'script-memory', 'ok']);
  });

  it('is not fooled by a script that replaces JSON: its results are still read correctly', async () => {
    const results = await sandbox(
      "JSON.stringify = () => '[]'; JSON.parse = () => []; publish('i', input.i)",
    ).run(...inputs(3));
    expect(results.map((r) => r.ok)).toEqual([true, true, true]);
  });

  it('cannot reach the host: the isolate has its own heap and no host objects', () => {
    // A sanity check of the library's promise, so a future version that changed it is noticed.
    const isolate = new ivm.Isolate({ memoryLimit: 8 });
    try {
      const context = isolate.createContextSync();
      expect(context.evalSync('typeof process + typeof require + typeof setTimeout')).toBe(
        'undefinedundefinedundefined',
      );
    } finally {
      isolate.dispose();
    }
  });
});
