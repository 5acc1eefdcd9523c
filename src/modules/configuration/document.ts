/**
 * Shape helpers of the Configuration Data document: the section list, the empty configuration,
 * section counts (for the upload response and the audit log) and the canonical key order that
 * downloads use: sections and their keys come in a stable order, so two downloads of one
 * configuration are byte for byte the same.
 */
import type { TSchema } from '@sinclair/typebox';
import {
  type Configuration,
  type ConfigurationDocument,
  ConfigurationSchema,
  type EntityAttributeType,
  PRIMITIVE_TYPE,
} from './model.js';

/** A section name of the configuration. */
export type ConfigurationSectionName = keyof Configuration;

/** Section names sorted by code unit, as the product exports them; also the download order. */
export const CONFIGURATION_SECTIONS = [
  'accountLookups',
  'accountingConfigurations',
  'businessCalendars',
  'businessDateSettings',
  'businessEventDefinition',
  'businessEventTypes',
  'dimensionSets',
  'entities',
  'featureFlags',
  'fiscalCalendars',
  'flows',
  'journalDefinition',
  'journalTypes',
  'nodeValues',
  'nodes',
  'postingComponentIdentifications',
  'postingComponents',
] as const satisfies readonly ConfigurationSectionName[];

/** Sections that are a single object rather than an array of elements. */
export const OBJECT_SECTIONS: ReadonlySet<ConfigurationSectionName> = new Set([
  'businessDateSettings',
  'businessEventDefinition',
  'featureFlags',
  'journalDefinition',
]);

/**
 * Returns a configuration with every section empty: `[]` for array sections and `{}` for object
 * sections, as an empty instance downloads it (docs/reference.md, Configuration Data). A fresh
 * object is returned on every call, so callers may mutate it. Never fails.
 */
export function emptyConfiguration(): Configuration {
  return {
    accountLookups: [],
    accountingConfigurations: [],
    businessCalendars: [],
    businessDateSettings: {},
    businessEventDefinition: {},
    businessEventTypes: [],
    dimensionSets: [],
    entities: [],
    featureFlags: {},
    fiscalCalendars: [],
    flows: [],
    journalDefinition: {},
    journalTypes: [],
    nodeValues: [],
    nodes: [],
    postingComponentIdentifications: [],
    postingComponents: [],
  };
}

/**
 * Counts the content of every section, keyed by section name in canonical order. Array sections
 * count their elements; `featureFlags` counts its flags; the settings and definition objects
 * (`businessDateSettings`, `businessEventDefinition`, `journalDefinition`) count 1 when they hold
 * any member and 0 when they are `{}`, because each is one configuration item. Never fails.
 */
export function sectionCounts(c: Configuration): Record<ConfigurationSectionName, number> {
  const counts = {} as Record<ConfigurationSectionName, number>;
  for (const section of CONFIGURATION_SECTIONS) {
    const value: unknown = c[section];
    if (Array.isArray(value)) counts[section] = value.length;
    else if (section === 'featureFlags') counts[section] = Object.keys(c.featureFlags).length;
    else counts[section] = isPlainObject(value) && Object.keys(value).length > 0 ? 1 : 0;
  }
  return counts;
}

/**
 * The scalar type name an attribute type stands for, whichever way it was written: the
 * `primitive` of the canonical form, `typeName` of the shorthand, or `ListType` for a list.
 * `undefined` only for a `PrimitiveType` without `primitive`, which validation refuses. Pure.
 */
export function attributeTypeNameOf(type: EntityAttributeType): string | undefined {
  return type.typeName === PRIMITIVE_TYPE ? type.primitive : type.typeName;
}

/** The element type name of a list attribute type, in either form; TEXT when omitted. Pure. */
export function elementTypeNameOf(type: EntityAttributeType): string {
  const element = type.elementType;
  if (element === undefined) return 'TEXT';
  return typeof element === 'string' ? element : element.primitive;
}

/**
 * Returns a copy of the configuration whose object keys follow the declaration order of the TypeBox
 * schema (sections in download order, element members as the model declares them). Keys of
 * free-form maps (`featureFlags`, node `fields`, flow graph `edges` and `nodes`) are sorted by code
 * unit; array order is meaningful and kept. Flow steps follow the schema of their `type`. Values
 * are not converted. The caller passes a validated configuration; members the schema does not know
 * are kept after the known ones rather than dropped.
 */
export function canonicalConfiguration(c: Configuration): Configuration {
  return canonicalValue(ConfigurationSchema, c) as Configuration;
}

/**
 * The JSON text of {@link canonicalConfiguration}, in pieces: joined, they are exactly
 * `JSON.stringify(canonicalConfiguration(c))`, and each is at most one section element (or one
 * section that is not an array), so a caller can write a large document out with the event loop
 * free between pieces instead of ordering and printing it in one go.
 */
export function* canonicalConfigurationText(c: Configuration): Generator<string> {
  const sections = (ConfigurationSchema as SchemaNode).properties ?? {};
  const known = Object.keys(sections).filter((key) => Object.hasOwn(c, key));
  const rest = Object.keys(c)
    .sort()
    .filter((key) => !Object.hasOwn(sections, key));
  const record = c as unknown as Record<string, unknown>;
  let separator = '{';
  for (const key of [...known, ...rest]) {
    const value = record[key];
    // As JSON.stringify does: a member without a value is left out.
    if (value === undefined) continue;
    const node = sections[key];
    yield `${separator}${JSON.stringify(key)}:`;
    separator = ',';
    const items = node?.items;
    if (!Array.isArray(value) || items === undefined) {
      yield JSON.stringify(node === undefined ? value : canonicalValue(node, value));
      continue;
    }
    let itemSeparator = '[';
    for (const item of value) {
      yield `${itemSeparator}${JSON.stringify(canonicalValue(items, item)) ?? 'null'}`;
      itemSeparator = ',';
    }
    yield itemSeparator === '[' ? '[]' : ']';
  }
  yield separator === '{' ? '{}' : '}';
}

/**
 * The text a configuration revision keeps of its document, and whose SHA-256 it records: the
 * canonical configuration (without the members a download adds), so that one configuration always
 * gives one text and one hash, however its upload was written.
 */
export function revisionDocumentText(c: Configuration): string {
  return [...canonicalConfigurationText(c)].join('');
}

/**
 * The members a download adds after `configuration`, in their order: when (`downloadTime` as
 * seconds and nanoseconds of `nowMs`), by whom, and the format version of what was stored. Pure.
 */
export function downloadMembers(
  nowMs: number,
  downloadedBy: string,
  version: string,
): Omit<ConfigurationDocument, 'configuration'> {
  return {
    downloadTime: { seconds: Math.floor(nowMs / 1000), nanos: (nowMs % 1000) * 1_000_000 },
    downloadedBy,
    version: version as ConfigurationDocument['version'],
  };
}

/** The parts of a JSON Schema node the canonical walk looks at. */
interface SchemaNode {
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly patternProperties?: Readonly<Record<string, SchemaNode>>;
  readonly items?: SchemaNode;
  readonly anyOf?: readonly SchemaNode[];
  readonly const?: unknown;
}

function canonicalValue(schema: TSchema | SchemaNode, value: unknown): unknown {
  const node = schema as SchemaNode;
  if (Array.isArray(value)) {
    const items = node.items;
    return items === undefined ? [...value] : value.map((item: unknown) => canonicalValue(items, item));
  }
  if (!isPlainObject(value)) return value;
  if (node.anyOf !== undefined) {
    // A flow step follows the branch its `type` selects; another union has one object branch.
    const branch =
      node.anyOf.find(
        (b) => b.properties?.type?.const !== undefined && b.properties.type.const === value.type,
      ) ?? node.anyOf.find(isObjectNode);
    return branch === undefined ? { ...value } : canonicalValue(branch, value);
  }
  const out: Record<string, unknown> = {};
  if (node.properties !== undefined) {
    for (const [key, child] of Object.entries(node.properties)) {
      if (Object.hasOwn(value, key)) out[key] = canonicalValue(child, value[key]);
    }
    for (const key of Object.keys(value).sort()) {
      if (!Object.hasOwn(out, key)) out[key] = value[key];
    }
    return out;
  }
  const entrySchema =
    node.patternProperties === undefined ? undefined : Object.values(node.patternProperties)[0];
  for (const key of Object.keys(value).sort()) {
    out[key] = entrySchema === undefined ? value[key] : canonicalValue(entrySchema, value[key]);
  }
  return out;
}

function isObjectNode(node: SchemaNode): boolean {
  return node.properties !== undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
