import ivm from 'isolated-vm';
import { afterEach, describe, expect, it } from 'vitest';
import { FLOW_SCRIPT_GLOBALS } from '../../../src/modules/flows/flow-scripts.js';
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
    // Each record spins a fixed number of turns (a few milliseconds, tens on a loaded machine)
    // against a limit of 250 ms: the batch outlasts one window and is resumed, yet no record
    // times out. (Scripts have no clock to wait on.)
    const results = await sandbox(
      "let turns = 0; for (let k = 0; k < 1e7; k++) turns += k & 1;\npublish('i', input.i)",
      { timeoutMs: 250, memoryMb: 32 },
    ).run(...inputs(40));
    expect(results.every((r) => r.ok)).toBe(true);
  });

  it('replaces an isolate that ran out of memory and names the record that did it', async () => {
    const results = await sandbox(
      "if (input.i === 2) { const all = []; for (;;) all.push(new Array(1e6).fill(1.5)); }\npublish('i', input.i)",
      { timeoutMs: 5_000, memoryMb: 16 },
    ).run(...inputs(4));
    expect(results.map((r) => (r.ok ? 'ok' : r.code))).toEqual(['ok', 'ok', 'script-memory', 'ok']);
  });

  it('a script cannot replace JSON, with which its results come back: the built-ins are frozen', async () => {
    const results = await sandbox(
      "JSON.stringify = () => '[]'; JSON.parse = () => []; publish('i', input.i)",
    ).run(...inputs(3));
    expect(results.map((r) => (r.ok ? 'ok' : r.message))).toEqual(
      Array(3).fill(
        `script of step "step" threw TypeError: Cannot assign to read only property 'stringify' of object '[object JSON]' (line 1, column 16)`,
      ),
    );
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

/** The outputs of each record, or its error code and message. */
function outcomes(results: Awaited<ReturnType<ScriptSandbox['run']>>): unknown[] {
  return results.map((r) => (r.ok ? r.published : [r.code, r.message]));
}

describe('no state survives a record: its outputs depend on the record alone', () => {
  it('a counter kept on Object.prototype gives every record, in one chunk or the next, the same outcome', async () => {
    const step = sandbox(
      "Object.prototype.n = (Object.prototype.n ?? 0) + 1;\npublish('n', Object.prototype.n)",
    );
    const all = [...outcomes(await step.run(...inputs(3))), ...outcomes(await step.run(...inputs(2)))];
    expect(all).toEqual(
      Array(5).fill([
        'script-error',
        'script of step "step" threw TypeError: Cannot add property n, object is not extensible (line 1, column 20)',
      ]),
    );
    // A script that shrugs the refusal off sees no count either.
    const tolerant = sandbox(
      "try { Object.prototype.n = (Object.prototype.n ?? 0) + 1; } catch {}\npublish('n', Object.prototype.n ?? 0)",
    );
    const counts = [
      ...outcomes(await tolerant.run(...inputs(3))),
      ...outcomes(await tolerant.run(...inputs(2))),
    ];
    expect(counts).toEqual(Array(5).fill([['n', 0]]));
  });

  it.each([
    ['a global', 'globalThis.leak', 'globalThis.leak = input.i'],
    ['a property of a built-in', 'Math.leak', 'Math.leak = input.i'],
    ['a method of a built-in', 'Math.max(1, 2)', 'Math.max = () => input.i'],
    ['Array.prototype', '[].leak', 'Array.prototype.leak = input.i'],
    ['String.prototype', "'ab'.at(0)", 'String.prototype.at = () => input.i'],
    ['Function.prototype', '(() => 0).leak', 'Function.prototype.leak = input.i'],
    [
      'an iterator prototype',
      '[][Symbol.iterator]().leak',
      'Object.getPrototypeOf([][Symbol.iterator]()).leak = input.i',
    ],
    [
      'the generator prototype',
      '(function* () {})().leak',
      'Object.getPrototypeOf(Object.getPrototypeOf((function* () {})())).leak = input.i',
    ],
    [
      'the TypedArray prototype',
      'new Uint8Array(1).leak',
      'Object.getPrototypeOf(Uint8Array.prototype).leak = input.i',
    ],
    ['a Date', 'new Date(0).constructor.leak', 'Date.leak = input.i'],
    ['the last match of RegExp', 'RegExp.$1', '/(\\d)/.exec(String(input.i))'],
    ['JSON', 'JSON.parse("[1]")[0]', 'JSON.parse = () => [input.i]'],
  ])('a record that changes %s leaves nothing for the next', async (_what, read, write) => {
    const step = sandbox(
      `publish('seen', String(${read}));\ntry { ${write}; } catch {}\npublish('after', String(${read}));`,
    );
    const results = outcomes(await step.run(...inputs(3)));
    expect(new Set(results.map((r) => JSON.stringify(r))).size, JSON.stringify(results)).toBe(1);
    const [first] = results as [[string, string][]];
    expect(first[0]?.[1]).toBe(first[1]?.[1]);
  });

  it('everything a script can reach without making it is frozen', async () => {
    // From the global object and the prototypes only instances lead to (the instances themselves
    // are the record's own).
    const walk = `
      const pending = [globalThis, ...[function* () {}, async function () {}, async function* () {},
        [][Symbol.iterator](), ''[Symbol.iterator](),
        new Map()[Symbol.iterator](), new Set()[Symbol.iterator](), /a/[Symbol.matchAll](''),
        new Intl.Segmenter().segment(''), new Intl.Segmenter().segment('')[Symbol.iterator]()].map(Object.getPrototypeOf)];
      const seen = new Set();
      const open = [];
      while (pending.length > 0) {
        const value = pending.pop();
        if ((typeof value !== 'object' && typeof value !== 'function') || value === null || seen.has(value)) continue;
        seen.add(value);
        pending.push(Object.getPrototypeOf(value));
        for (const key of Reflect.ownKeys(value)) {
          const property = Object.getOwnPropertyDescriptor(value, key);
          if ('value' in property) pending.push(property.value); else pending.push(property.get, property.set);
        }
        if (!Object.isFrozen(value)) open.push(String(value.name ?? Object.prototype.toString.call(value)));
      }
      publish('objects', seen.size > 500);
      publish('open', open.join());`;
    const [result] = await sandbox(walk).run(...inputs(1));
    if (result === undefined || !result.ok) throw new Error(JSON.stringify(result));
    expect(result.published).toEqual([
      ['objects', true],
      ['open', ''],
    ]);
  });

  it('ordinary code that assigns what a frozen prototype has still works', async () => {
    const results = await sandbox(`
      class LoanError extends Error { constructor(message) { super(message); this.name = 'LoanError'; } }
      function Money(amount) { this.amount = amount; }
      Money.prototype = Object.create(Object.prototype);
      Money.prototype.constructor = Money;
      Money.prototype.toString = function () { return this.amount + ' EUR'; };
      const plain = {};
      plain.valueOf = () => 7;
      publish('error', String(new LoanError('no')));
      publish('money', String(new Money('1.50')));
      publish('plain', plain + 1);`).run(...inputs(2));
    expect(outcomes(results)).toEqual(
      Array(2).fill([
        ['error', 'LoanError: no'],
        ['money', '1.50 EUR'],
        ['plain', 8],
      ]),
    );
  });

  it('a script cannot close the function it is wrapped in and run code outside every record', async () => {
    const escaping = sandbox("});\nvar count = 0;\n(function (input, publish) { publish('n', ++count);");
    await expect(escaping.run(...inputs(2))).rejects.toThrow(/Single function literal required/);
  });

  it('what a promise job publishes after the script returned is lost, and a rejection nobody handles fails no record', async () => {
    const results = await sandbox(
      "Promise.resolve().then(() => publish('late', 1));\nPromise.reject(new Error('ignored'));\npublish('now', input.i)",
    ).run(...inputs(3));
    expect(outcomes(results)).toEqual([[['now', 0]], [['now', 1]], [['now', 2]]]);
  });
});

describe('no clock and no chance', () => {
  it.each([
    ['Date.now()', 'Date.now()'],
    ['new Date()', 'new Date()'],
    ['Date()', 'Date() (the current time)'],
    ['new (new Date(0).constructor)()', 'new Date()'],
    ['Math.random()', 'Math.random()'],
    ["new Intl.DateTimeFormat('en').format()", 'format() of Intl.DateTimeFormat'],
    ["new Intl.DateTimeFormat('en').formatToParts()", 'formatToParts() of Intl.DateTimeFormat'],
  ])('%s throws a TypeError that says why', async (call, what) => {
    const [result] = await sandbox(`publish('x', String(${call}))`).run(...inputs(1));
    expect(result).toMatchObject({ ok: false, code: 'script-error' });
    expect(result?.ok === false && result.message).toContain(`threw TypeError: ${what}`);
    expect(result?.ok === false && result.message).toContain(
      'does not exist in a flow script: its outputs depend on the record alone, not on the clock or chance',
    );
  });

  it('dates from values, their parsing and their arithmetic work as ever', async () => {
    const [result] = await sandbox(`
      const due = new Date('2026-01-31T00:00:00Z');
      due.setUTCMonth(due.getUTCMonth() + 1);
      publish('due', due.toISOString().slice(0, 10));
      publish('parsed', Date.parse('2026-03-01T12:00:00Z'));
      publish('utc', Date.UTC(2026, 0, 1));
      publish('days', (new Date(2026, 2, 1) - new Date(2026, 1, 1)) / 864e5);
      publish('isDate', new Date(0) instanceof Date);
      publish('formatted', new Intl.DateTimeFormat('en', { timeZone: 'UTC' }).format(new Date(0)));
      class BusinessDate extends Date {}
      publish('subclass', new BusinessDate('2026-01-02').getUTCDate());`).run(...inputs(1));
    expect(result).toEqual({
      ok: true,
      unpublishable: [],
      published: [
        ['due', '2026-03-03'],
        ['parsed', Date.parse('2026-03-01T12:00:00Z')],
        ['utc', Date.UTC(2026, 0, 1)],
        ['days', 28],
        ['isDate', true],
        ['formatted', '1/1/1970'],
        ['subclass', 2],
      ],
    });
  });
});

describe('memory, time and disposal are told apart', () => {
  it('a record whose array buffers exhaust memory is script-memory, and the others run', async () => {
    const results = await sandbox(
      "if (input.i === 1) { const all = []; for (;;) all.push(new ArrayBuffer(1e7)); }\npublish('i', input.i)",
      { timeoutMs: 5_000, memoryMb: 32 },
    ).run(...inputs(3));
    expect(results.map((r) => (r.ok ? 'ok' : r.code))).toEqual(['ok', 'script-memory', 'ok']);
  });

  it('a record stopped by the clock after taking most of the heap is script-memory; a busy loop is script-timeout', async () => {
    const limits = { timeoutMs: 200, memoryMb: 64 };
    const results = await sandbox(
      "if (input.i === 1) { const kept = new Array(5e6).fill(1.5); for (;;) {} }\nif (input.i === 2) for (;;) {}\npublish('i', input.i)",
      limits,
    ).run(...inputs(4));
    expect(results.map((r) => (r.ok ? 'ok' : r.code))).toEqual([
      'ok',
      'script-memory',
      'script-timeout',
      'ok',
    ]);
    expect(results[1]?.ok === false && results[1].message).toMatch(
      /^script of step "step" ran out of memory: when its 200 ms ran out it had taken \d+ MB of the 64 MB a script may use$/,
    );
  });

  it("disposing a sandbox while it runs is no record's fault: the run rejects, no record is script-memory", async () => {
    const busy = sandbox('for (;;) {}', { timeoutMs: 10_000, memoryMb: 32 });
    const running = busy.run(...inputs(2));
    // Dispose once the isolate runs the first record.
    await new Promise((resolve) => setImmediate(resolve));
    busy.dispose();
    await expect(running).rejects.toThrow(
      'the isolate of step "step" was disposed before its records were run',
    );
    await expect(busy.run(...inputs(1))).rejects.toThrow(/was disposed/);
  });
});
