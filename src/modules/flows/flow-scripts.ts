/**
 * The upload-time check of flow scripts (docs/reference.md, Flows). A script is JavaScript
 * (ECMAScript 2022) run as the body of a function of `input` and `publish`, in an isolate that
 * holds the standard built-ins and nothing of the host. So a script that does not parse, or that
 * names a global that does not exist there (`require`, `process`, `fetch`, `setTimeout`, a typo),
 * could never run: the upload refuses it with the line and column, instead of every record
 * failing later. The parse is acorn's and the scope analysis eslint-scope's, so hoisting,
 * destructuring, classes and closures resolve as the language says.
 */
import { parse } from 'acorn';
import { analyze } from 'eslint-scope';

/** The ECMAScript version scripts are written in. */
export const FLOW_SCRIPT_ECMA_VERSION = 2022;

/**
 * Every global a flow script may name: the ECMAScript built-ins the isolate keeps, and the two
 * names the runtime gives each call. The sandbox removes the rest of the isolate's globals
 * (`eval`, `console`, `WebAssembly`, shared memory, weak references) and a test keeps both lists
 * equal (test/modules/flows/sandbox.test.ts).
 */
export const FLOW_SCRIPT_GLOBALS: ReadonlySet<string> = new Set([
  'input',
  'publish',
  'AggregateError',
  'Array',
  'ArrayBuffer',
  'BigInt',
  'BigInt64Array',
  'BigUint64Array',
  'Boolean',
  'DataView',
  'Date',
  'Error',
  'EvalError',
  'Float32Array',
  'Float64Array',
  'Function',
  'Infinity',
  'Int16Array',
  'Int32Array',
  'Int8Array',
  'Intl',
  'JSON',
  'Map',
  'Math',
  'NaN',
  'Number',
  'Object',
  'Promise',
  'Proxy',
  'RangeError',
  'ReferenceError',
  'Reflect',
  'RegExp',
  'Set',
  'String',
  'Symbol',
  'SyntaxError',
  'TypeError',
  'URIError',
  'Uint16Array',
  'Uint32Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'WeakMap',
  'WeakSet',
  'decodeURI',
  'decodeURIComponent',
  'encodeURI',
  'encodeURIComponent',
  'escape',
  'globalThis',
  'isFinite',
  'isNaN',
  'parseFloat',
  'parseInt',
  'undefined',
  'unescape',
]);

/** Unknown names reported per script before the rest are summed up. */
const UNKNOWN_NAMES_REPORTED_MAX = 5;

/**
 * The reasons a script could never run, as sentences with line and column (1-based), or an
 * empty list. Pure; never throws.
 */
export function flowScriptProblems(script: string): string[] {
  let program: ReturnType<typeof parse>;
  try {
    program = parse(script, {
      ecmaVersion: FLOW_SCRIPT_ECMA_VERSION,
      sourceType: 'script',
      allowReturnOutsideFunction: true,
      locations: true,
      ranges: true,
    });
  } catch (error) {
    const { message, loc } = error as SyntaxError & { loc?: { line: number; column: number } };
    const where = loc === undefined ? '' : ` at line ${loc.line}, column ${loc.column + 1}`;
    // acorn appends "(line:column)" to its message; the position is said once, in our words.
    return [
      `does not parse as ECMAScript ${FLOW_SCRIPT_ECMA_VERSION}${where}: ${message.replace(/ \(\d+:\d+\)$/, '')}`,
    ];
  }
  // acorn's tree is ESTree, which eslint-scope reads; the two packages type it separately.
  const scopes = analyze(program as unknown as Parameters<typeof analyze>[0], {
    ecmaVersion: FLOW_SCRIPT_ECMA_VERSION,
    sourceType: 'script',
  });
  const unknown = new Map<string, { line: number; column: number }>();
  for (const reference of scopes.globalScope?.through ?? []) {
    const { name, loc } = reference.identifier;
    if (FLOW_SCRIPT_GLOBALS.has(name) || unknown.has(name) || loc == null) continue;
    unknown.set(name, { line: loc.start.line, column: loc.start.column + 1 });
  }
  const problems = [...unknown]
    .slice(0, UNKNOWN_NAMES_REPORTED_MAX)
    .map(
      ([name, { line, column }]) =>
        `uses "${name}" at line ${line}, column ${column}, which does not exist in a flow script: ` +
        'a script reads `input`, calls `publish(name, value)` and may use the ECMAScript built-ins, ' +
        'nothing of the host (no require, process, fetch, timers, console)',
    );
  if (unknown.size > UNKNOWN_NAMES_REPORTED_MAX)
    problems.push(`uses ${unknown.size - UNKNOWN_NAMES_REPORTED_MAX} more unknown name(s)`);
  return problems;
}
