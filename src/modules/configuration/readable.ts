/**
 * What the semantic rules of the upload validation may read of a document that has structural
 * faults. A faulty member is left out rather than guessed at, so the rules still check every
 * reference they can read, and a structural fault of one element never hides the reference
 * faults of the others.
 */
import type { TSchema } from '@sinclair/typebox';

/**
 * A value of type `T` as far as it could be read: a member or element that was present but
 * faulty (wrong type, unknown enumeration value, bad format, ...) is `null`, and so is a
 * required member that is missing; an optional member that was left out stays `undefined`.
 * Unknown members are dropped.
 */
export type Readable<T> = T extends string | number | boolean
  ? T
  : T extends readonly (infer E)[]
    ? readonly (Readable<E> | null)[]
    : T extends object
      ? { readonly [K in keyof T]?: Readable<T[K]> | null }
      : never;

/** The parts of a JSON Schema node the walk looks at. */
interface SchemaNode {
  readonly type?: string;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly required?: readonly string[];
  readonly patternProperties?: Readonly<Record<string, SchemaNode>>;
  readonly items?: SchemaNode;
  readonly anyOf?: readonly SchemaNode[];
  readonly const?: unknown;
}

/**
 * Returns `value` as far as `schema` can read it. `faultyPaths` are the JSON Pointers of the
 * structural faults found in the document (the pointer of a faulty value, of a missing required
 * member, or of an unknown member); `path` is the pointer of `value`. Anything at a faulty path
 * is `null`, as is a value of the wrong JSON type, a required member that is missing and a union
 * member (a flow step) whose branch cannot be told. Pure; never throws.
 */
export function readableValue(
  schema: TSchema,
  value: unknown,
  path: string,
  faultyPaths: ReadonlySet<string>,
): unknown {
  return read(schema as SchemaNode, value, path, faultyPaths);
}

function read(node: SchemaNode, value: unknown, path: string, faulty: ReadonlySet<string>): unknown {
  if (faulty.has(path)) return null;
  if (node.anyOf !== undefined) {
    const branch = branchOf(node.anyOf, value);
    return branch === undefined ? null : read(branch, value, path, faulty);
  }
  if (!hasJsonType(node, value)) return null;
  if (Array.isArray(value)) {
    const items = node.items;
    return items === undefined ? null : value.map((item, i) => read(items, item, child(path, i), faulty));
  }
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  if (node.properties !== undefined) {
    for (const [key, member] of Object.entries(node.properties)) {
      if (Object.hasOwn(value, key)) out[key] = read(member, value[key], child(path, key), faulty);
      else if (node.required?.includes(key)) out[key] = null;
    }
    return out;
  }
  const entry = node.patternProperties === undefined ? undefined : Object.values(node.patternProperties)[0];
  if (entry === undefined) return null;
  for (const [key, member] of Object.entries(value)) out[key] = read(entry, member, child(path, key), faulty);
  return out;
}

/** The union branch that describes `value`: the only one of its JSON type, or the one its `type` selects. */
function branchOf(branches: readonly SchemaNode[], value: unknown): SchemaNode | undefined {
  const fitting = branches.filter((b) => hasJsonType(b, value));
  if (fitting.length <= 1) return fitting[0];
  return isRecord(value) ? fitting.find((b) => b.properties?.type?.const === value.type) : undefined;
}

function hasJsonType(node: SchemaNode, value: unknown): boolean {
  switch (node.type) {
    case 'string':
      return typeof value === 'string' && (node.const === undefined || node.const === value);
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isRecord(value);
    default:
      return false;
  }
}

function child(path: string, segment: string | number): string {
  return `${path}/${String(segment).replaceAll('~', '~0').replaceAll('/', '~1')}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
