import fc from 'fast-check';

/** A JSON Schema node as the OpenAPI document of the app writes them (the members fuzzing reads). */
export interface SchemaNode {
  type?: string | string[];
  properties?: Record<string, SchemaNode>;
  required?: string[];
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  format?: string;
}

/**
 * JSON texts no JavaScript value stringifies to (numbers beyond a double, negative zero, long
 * decimals, deep nesting), spliced into generated bodies through `RAW_MARKER` placeholders.
 */
export const RAW_JSON = [
  '1e400',
  '-1e400',
  '-0',
  '-0.0',
  '1E+2',
  '0.1000000000000000000000000000000000000000001',
  '123456789012345678901234567890.123456789012345678901234567890',
  '99999999999999999999',
  '9007199254740993',
  `${'['.repeat(20_000)}${']'.repeat(20_000)}`,
  `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`,
  '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}',
] as const;

const RAW_MARKER = '\u0001raw:';

/** A placeholder that `toJsonText` replaces with `RAW_JSON[index]`. */
function rawPlaceholder(index: number): string {
  return `${RAW_MARKER}${index}\u0001`;
}

/** Serialises a generated value, splicing in the raw JSON texts its placeholders stand for. */
export function toJsonText(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(/"\\u0001raw:(\d+)\\u0001"/g, (_, index: string) => {
    return RAW_JSON[Number(index)] ?? 'null';
  });
}

/** Hostile text: NUL, odd unicode, traversal, SQL, prototype keys, numbers as text, long text. */
export const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\uD800',
  '\uDFFF\uD800',
  '\uFEFF',
  '\u202Eevil',
  '\u200B',
  'e\u0301\u0301\u0301',
  '𝕷𝖊𝖉𝖌𝖊𝖗',
  '🧾💸',
  '\r\n',
  '\t',
  '../../../../etc/passwd',
  '..\\..\\windows\\win.ini',
  '%2e%2e%2f%2e%2e%2f',
  '%00',
  '%',
  "' OR '1'='1",
  '1; DROP TABLE journals; --',
  '" OR ""="',
  '$1',
  '\\',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'null',
  'true',
  '[]',
  '{}',
  '1e400',
  '-0',
  '-1',
  '0',
  '1e20',
  '99999999999999999999',
  '9007199254740993',
  '0x10',
  '1.5',
  'NaN',
  'Infinity',
  '0.1000000000000000000000000000000000000000001',
  '2026-02-30',
  '2026-13-01T25:61:61Z',
  'PT99999999999999999999H',
  'x'.repeat(201),
  'x'.repeat(10_000),
] as const;

/** A hostile string, or any generated string (full unicode, control characters included). */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
);

/** A hostile JSON value of any type. */
export const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.constantFrom<unknown>(
    null,
    true,
    false,
    0,
    -1,
    1.5,
    Number.MAX_SAFE_INTEGER + 2,
    1e308,
    -1e308,
    [],
    {},
    [null],
    Array.from({ length: 2_000 }, (_, index) => index),
  ),
  fc.integer({ min: 0, max: RAW_JSON.length - 1 }).map(rawPlaceholder),
  fc.jsonValue({ maxDepth: 3 }),
);

/** Members no body declares, meant to trip prototype handling. */
const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'] as const;

/** The generated value of a schema node, without mutations. */
function typedValue(schema: SchemaNode, depth: number): fc.Arbitrary<unknown> {
  const choices = schema.anyOf ?? schema.oneOf;
  if (choices !== undefined && choices.length > 0) {
    return fc.oneof(...choices.map((choice) => schemaValue(choice, depth)));
  }
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum !== undefined && schema.enum.length > 0) return fc.constantFrom(...schema.enum);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object':
      return objectValue(schema, depth);
    case 'array':
      return fc.array(schemaValue(schema.items ?? {}, depth + 1), { maxLength: 4 });
    case 'string':
      return schema.format === 'date'
        ? fc.constantFrom('2026-01-31', '2026-02-29', '0000-00-00')
        : fc.string({ maxLength: 12 });
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -10, max: Math.min(schema.maximum ?? 1_000, 1_000) });
    case 'number':
      return fc.double({ noNaN: true });
    case 'boolean':
      return fc.boolean();
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function objectValue(schema: SchemaNode, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const members = properties.map(([name, child]) =>
    fc.tuple(fc.constant(name), schemaValue(child, depth + 1), fc.boolean()),
  );
  const extras = fc.array(fc.tuple(fc.constantFrom(...PROTOTYPE_KEYS, 'unknownMember'), hostileJson), {
    maxLength: 2,
  });
  return fc.tuple(fc.tuple(...members), extras).map(([chosen, extra]) =>
    // fromEntries defines own members, so `__proto__` stays a member and changes no prototype.
    Object.fromEntries([
      ...chosen.filter(([name, , keep]) => keep || required.has(name)).map(([name, value]) => [name, value]),
      ...extra,
    ]),
  );
}

/**
 * A value shaped by the schema, mutated at random: any member may be replaced by a hostile
 * value of another type, and objects get prototype keys and unknown members.
 */
export function schemaValue(schema: SchemaNode, depth = 0): fc.Arbitrary<unknown> {
  if (depth > 4) return hostileJson;
  return fc.oneof({ weight: 4, arbitrary: typedValue(schema, depth) }, { weight: 1, arbitrary: hostileJson });
}

/** Percent-encodes any string as UTF-8 (lone surrogates included), leaving unreserved characters. */
export function percentEncode(text: string): string {
  let encoded = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    encoded += /[A-Za-z0-9\-_.~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return encoded;
}

/** A path or query value as sent: percent-encoded, or raw (odd escapes and traversal intact). */
export const urlValue = (value: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: value.map(percentEncode) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '%00',
        '%',
        '%ZZ',
        '%C0%AE%C0%AE',
        '..%2F..%2Fetc',
        '%2e%2e',
        '..',
        '.',
        '%20',
      ),
    },
  );

/** Content types a client may send, wrong or missing ones included (undefined: no header). */
export const contentType: fc.Arbitrary<string | undefined> = fc.constantFrom(
  undefined,
  'application/json',
  'application/json',
  'application/json; charset=utf-8',
  'application/problem+json',
  'application/json; charset=latin1',
  'application/x-www-form-urlencoded',
  'text/plain',
  'text/html',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  'application/xml',
  '',
  'application/',
  '*/*',
);

/** Raw body texts: empty, malformed, scalar, deeply nested, prototype-laden. */
export const rawBody: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    'null',
    '[]',
    '{}',
    '{',
    '{"a":',
    '"text"',
    '\u0000',
    '{"a":"\u0000"}',
    '{"a":"\\u0000"}',
    'a=1&b=2',
    '<xml/>',
    '\uFEFF{}',
    ...RAW_JSON,
  ),
  fc.string({ unit: 'binary', maxLength: 60 }),
);
