/**
 * The source text run inside every isolate of a Script step (sandbox.ts): the prelude, which
 * takes the clock, randomness and needless globals away and defines the runner that calls the
 * step for each record, and the lockdown, which freezes everything a script can reach before any
 * record runs. Plain script text, evaluated in the isolate; nothing of it runs on the host.
 */

/**
 * Set up in every fresh context before the script is compiled. It removes the globals a script
 * has no use for (and that would let it evaluate code the upload never saw, keep state past a
 * record, or log nowhere), RegExp's legacy statics (`RegExp.$1`, `RegExp.lastMatch`: the last
 * match of any record), the clock and randomness, and defines the runner that calls the step for
 * each record. `new Date(value)`, `Date.UTC`, `Date.parse` and date arithmetic keep working; only
 * the current instant is gone, since a record processed again must give the same outputs.
 */
export const PRELUDE = `
'use strict';
for (const name of ['eval', 'console', 'WebAssembly', 'SharedArrayBuffer', 'Atomics', 'WeakRef', 'FinalizationRegistry']) {
  delete globalThis[name];
}
for (const name of Object.getOwnPropertyNames(RegExp)) {
  if (name !== 'length' && name !== 'name' && name !== 'prototype') delete RegExp[name];
}
{
  const absent = (what) =>
    new TypeError(what + ' does not exist in a flow script: its outputs depend on the record alone, not on the clock or chance');
  const thrower = (name, what) => ({
    value: { [name]() { throw absent(what); } }[name],
    writable: true,
    enumerable: false,
    configurable: true,
  });
  const ClockDate = Date;
  const NoClockDate = new Proxy(ClockDate, {
    apply() {
      throw absent('Date() (the current time)');
    },
    construct(target, args, newTarget) {
      if (args.length === 0) throw absent('new Date() without a value (the current time)');
      return Reflect.construct(target, args, newTarget);
    },
  });
  Object.defineProperty(ClockDate, 'now', thrower('now', 'Date.now()'));
  Object.defineProperty(ClockDate.prototype, 'constructor', { value: NoClockDate, writable: true, configurable: true });
  Object.defineProperty(globalThis, 'Date', { value: NoClockDate, writable: true, configurable: true });
  Object.defineProperty(Math, 'random', thrower('random', 'Math.random()'));
  // Intl.DateTimeFormat formats the current time when it is given no date.
  const formats = Intl.DateTimeFormat.prototype;
  const format = Object.getOwnPropertyDescriptor(formats, 'format').get;
  const formatToParts = formats.formatToParts;
  Object.defineProperty(formats, 'format', {
    get() {
      const bound = format.call(this);
      return (date) => {
        if (date === undefined) throw absent('format() of Intl.DateTimeFormat without a date (the current time)');
        return bound(date);
      };
    },
    configurable: true,
  });
  Object.defineProperty(formats, 'formatToParts', {
    value: {
      formatToParts(date) {
        if (date === undefined) throw absent('formatToParts() of Intl.DateTimeFormat without a date (the current time)');
        return formatToParts.call(this, date);
      },
    }.formatToParts,
    writable: true,
    configurable: true,
  });
}
// One piece: the runner's methods share the batch's inputs, results and position, out of a script's reach.
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
  // V8 throws this when the isolate's memory cannot hold a new ArrayBuffer.
  const allocationFailed = (error) => {
    try {
      return error instanceof RangeError && error.message === 'Array buffer allocation failed';
    } catch {
      return false;
    }
  };
  const runOne = (i) => {
    current = i;
    const published = [];
    const unpublishable = [];
    let open = true;
    const publish = (name, value) => {
      // Called from a promise job after the step returned: too late for this record.
      if (!open) throw new TypeError('publish(name, value) was called after the script returned');
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
      results[i] = allocationFailed(error) ? { outOfMemory: true } : describe(error);
    } finally {
      open = false;
      current = inputs.length;
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

/**
 * Run once the runner exists, before any record: freezes every object a script can reach without
 * making it, so nothing a record does survives it (`Object.prototype.n = 1`, `Math.x = 1`, a
 * global). The walk starts at the global object and at the prototypes only instances lead to
 * (generators, async functions, iterators, segments), and follows prototypes, property values and
 * accessors. Assigning `name`, `message`, `constructor`, `toString`, `valueOf`, `toLocaleString` or
 * `toJSON` to an object whose prototype is frozen would throw (a data property of a frozen
 * prototype cannot be overridden by assignment), which breaks ordinary code such as
 * `this.name = 'MyError'`; on the prototypes of objects, functions and errors these become
 * accessors whose setter gives the object its own property, as on an unfrozen prototype.
 */
export const LOCKDOWN = `
'use strict';
delete globalThis.__makeRunner;
{
  const assignable = ['constructor', 'name', 'message', 'toString', 'valueOf', 'toLocaleString', 'toJSON'];
  const errors = [Error, AggregateError, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError];
  for (const prototype of [Object.prototype, Function.prototype, ...errors.map((E) => E.prototype)]) {
    for (const key of assignable) {
      const own = Object.getOwnPropertyDescriptor(prototype, key);
      if (own === undefined || !('value' in own) || !own.writable) continue;
      const value = own.value;
      Object.defineProperty(prototype, key, {
        get() {
          return value;
        },
        set(assigned) {
          if (this === prototype) throw new TypeError('Cannot assign to read only property ' + key + ' of a built-in prototype');
          Object.defineProperty(this, key, { value: assigned, writable: true, enumerable: true, configurable: true });
        },
        enumerable: own.enumerable,
        configurable: false,
      });
    }
  }
  const segments = new Intl.Segmenter().segment('');
  const pending = [
    globalThis,
    function* () {},
    async function () {},
    async function* () {},
    [][Symbol.iterator](),
    ''[Symbol.iterator](),
    new Map()[Symbol.iterator](),
    new Set()[Symbol.iterator](),
    /a/[Symbol.matchAll](''),
    segments,
    segments[Symbol.iterator](),
    (function () { return arguments; })(),
  ];
  const seen = new Set();
  while (pending.length > 0) {
    const value = pending.pop();
    if ((typeof value !== 'object' && typeof value !== 'function') || value === null || seen.has(value)) continue;
    seen.add(value);
    pending.push(Object.getPrototypeOf(value));
    for (const key of Reflect.ownKeys(value)) {
      const property = Object.getOwnPropertyDescriptor(value, key);
      if (property === undefined) continue;
      if ('value' in property) pending.push(property.value);
      else pending.push(property.get, property.set);
    }
  }
  for (const value of seen) Object.freeze(value);
}
`;
