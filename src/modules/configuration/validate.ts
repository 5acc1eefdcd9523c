/**
 * Validation of an uploaded Configuration Data document. Two phases, in a stable order: the
 * structure and types of every member (Ajv, compiled once from the TypeBox model), then the
 * semantic rules (unique names, cross-references, flow graphs, time zones). Every problem is
 * reported at once, each with a JSON Pointer (RFC 6901) path.
 *
 * Over 500 lines, not yet split: its rules share one collector of problems and one walk of the
 * document. Splitting it by section (entities, accounting, flows, with one graph helper shared
 * with `flows/plan.ts`) belongs with the re-layout of the modules.
 */
import { Ajv, type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import { CONFIGURATION_SECTIONS, type ConfigurationSectionName, emptyConfiguration } from './document.js';
import { flowScriptProblems } from './flow-scripts.js';
import {
  type Configuration,
  type ConfigurationDocument,
  ConfigurationSchema,
  type ConfigurationUpload,
  ConfigurationUploadSchema,
  ENTITY_SCALAR_TYPE_NAMES,
  type EntityAttributeType,
  FLOW_STEP_TYPES,
  type Flow,
  type InputStep,
  LEDGER_ENTITY_NAMES,
  LEDGER_NAMESPACE,
  LIST_TYPE,
  type Mapping,
  PRIMITIVE_TYPE,
  PRIMITIVE_TYPE_NAMES,
  SUPPORTED_CONFIGURATION_VERSIONS,
} from './model.js';
import { type Readable, readableValue } from './readable.js';

/** At most this many errors are listed; a final entry says how many more were found. */
export const CONFIGURATION_ERRORS_MAX_COUNT = 1000;

/** One problem of an uploaded document: where (JSON Pointer into the body) and which rule. */
export interface ConfigurationError {
  readonly path: string;
  readonly message: string;
}

/** Outcome of {@link validateConfigurationDocument}. */
export type ConfigurationValidation =
  | { readonly ok: true; readonly document: ConfigurationDocument }
  | { readonly ok: false; readonly errors: ConfigurationError[] };

const ajv = new Ajv({ allErrors: true, strict: true });
addFormats.default(ajv, ['date', 'date-time', 'uuid']);
const checkStructure = ajv.compile<ConfigurationUpload>(ConfigurationUploadSchema);

const SUPPORTED_VERSIONS_TEXT = `supported versions: ${SUPPORTED_CONFIGURATION_VERSIONS.join(', ')}`;

/**
 * Validates an upload body against the Configuration Data structure and its semantic rules. On
 * success returns the document with every section present (an omitted section is empty; field
 * values are not otherwise defaulted, so a download returns what was uploaded). On failure
 * returns every problem found, in a stable order: structural errors first (Ajv order), then
 * semantic errors by section in download order. The semantic rules also run on a structurally
 * faulty document: they read every member that is sound and skip only the faulty ones (see
 * `readable.ts`), so one answer lists the reference faults of every element, and a semantic
 * error at (or below) the path of a structural error is left out, so one fault is not reported
 * twice. Never throws for any JSON value; the returned document shares objects with `body`, so
 * the caller must not mutate `body` afterwards.
 */
export function validateConfigurationDocument(body: unknown): ConfigurationValidation {
  const structureOk = checkStructure(body);
  const errors = structureOk ? [] : structuralErrors(body, checkStructure.errors ?? []);
  const configurationInput = isRecord(body) ? body.configuration : undefined;
  if (isRecord(configurationInput)) {
    const faultyPaths = new Set(errors.map((e) => e.path));
    const readable = readableValue(
      ConfigurationSchema,
      { ...emptyConfiguration(), ...configurationInput },
      pointer('configuration'),
      faultyPaths,
    );
    if (isRecord(readable)) {
      const semantic = semanticErrors(readable as ReadableConfiguration);
      errors.push(...semantic.filter((e) => !atOrBelowAny(e.path, faultyPaths)));
    }
  }
  if (structureOk && errors.length === 0) {
    const document: ConfigurationDocument = {
      ...body,
      configuration: { ...emptyConfiguration(), ...body.configuration },
    };
    return { ok: true, document };
  }
  return { ok: false, errors: capped(dedupe(errors)) };
}

/** Whether `path` is one of `paths` or lies below one of them. */
function atOrBelowAny(path: string, paths: ReadonlySet<string>): boolean {
  for (let end = path.length; end > 0; end = path.lastIndexOf('/', end - 1)) {
    if (paths.has(path.slice(0, end))) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// JSON Pointer helpers (RFC 6901)
// ---------------------------------------------------------------------------------------------

function escapeSegment(segment: string | number): string {
  return String(segment).replaceAll('~', '~0').replaceAll('/', '~1');
}

function unescapeSegment(segment: string): string {
  return segment.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** Builds a pointer into the document body from unescaped segments. */
function pointer(...segments: readonly (string | number)[]): string {
  return segments.map((s) => `/${escapeSegment(s)}`).join('');
}

/** Builds a pointer into the `configuration` member. */
function at(...segments: readonly (string | number)[]): string {
  return pointer('configuration', ...segments);
}

function valueAt(root: unknown, path: string): unknown {
  if (path === '') return root;
  let current: unknown = root;
  for (const raw of path.slice(1).split('/')) {
    const key = unescapeSegment(raw);
    if (Array.isArray(current)) current = current[Number(key)];
    else if (isRecord(current)) current = current[key];
    else return undefined;
  }
  return current;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------
// Phase 1: structure (Ajv errors to pointer + rule message)
// ---------------------------------------------------------------------------------------------

/** The schema path suffix of the flow step union, discriminated by `type`. */
const STEP_UNION_SCHEMA_PATH_SUFFIX = '/step/anyOf';

/**
 * The schema path suffix of the element type of a list attribute: branch 0 is a type name
 * (string), branch 1 the canonical object form, as `EntityAttributeTypeSchema` declares them.
 */
const ELEMENT_TYPE_UNION_SCHEMA_PATH_SUFFIX = '/elementType/anyOf';

function structuralErrors(body: unknown, raw: readonly ErrorObject[]): ConfigurationError[] {
  const dropped = new Set<ErrorObject>();
  const replaced = new Map<ErrorObject, ConfigurationError>();
  for (const union of raw.filter((e) => e.keyword === 'anyOf')) {
    const branchPrefix = `${union.schemaPath}/`;
    const branchErrors = raw.filter(
      (e) =>
        e.schemaPath.startsWith(branchPrefix) &&
        (e.instancePath === union.instancePath || e.instancePath.startsWith(`${union.instancePath}/`)),
    );
    if (union.schemaPath.endsWith(ELEMENT_TYPE_UNION_SCHEMA_PATH_SUFFIX)) {
      // A string names a type, an object writes it in the canonical form: only that branch explains.
      const elementType = valueAt(body, union.instancePath);
      const branch = typeof elementType === 'string' ? 0 : isRecord(elementType) ? 1 : -1;
      const keep = `${branchPrefix}${branch}/`;
      for (const e of branchErrors) if (branch < 0 || !e.schemaPath.startsWith(keep)) dropped.add(e);
      if (branch >= 0) dropped.add(union);
      else
        replaced.set(union, {
          path: union.instancePath,
          message: `must be a type name (${ENTITY_SCALAR_TYPE_NAMES.join(', ')}) or an object { "typeName": "${PRIMITIVE_TYPE}", "primitive" }`,
        });
      continue;
    }
    if (!union.schemaPath.endsWith(STEP_UNION_SCHEMA_PATH_SUFFIX)) {
      for (const e of branchErrors) dropped.add(e);
      replaced.set(union, {
        path: union.instancePath,
        message: 'must be an object { seconds, nanos } or an RFC 3339 date-time string',
      });
      continue;
    }
    // A flow step: only the branch its `type` selects explains what is wrong.
    const step = valueAt(body, union.instancePath);
    const stepType = isRecord(step) ? step.type : undefined;
    const branch = (FLOW_STEP_TYPES as readonly unknown[]).indexOf(stepType);
    if (branch >= 0) {
      const keep = `${branchPrefix}${branch}/`;
      for (const e of branchErrors) if (!e.schemaPath.startsWith(keep)) dropped.add(e);
      dropped.add(union);
      continue;
    }
    for (const e of branchErrors) dropped.add(e);
    const allowed = `one of ${FLOW_STEP_TYPES.join(', ')}`;
    if (!isRecord(step)) replaced.set(union, { path: union.instancePath, message: 'must be an object' });
    else if (stepType === undefined)
      replaced.set(union, { path: `${union.instancePath}/type`, message: `is required (${allowed})` });
    else replaced.set(union, { path: `${union.instancePath}/type`, message: `must be ${allowed}` });
  }
  // An enum error already says what the value must be; a type error on the same value is noise.
  const enumPaths = new Set(raw.filter((e) => e.keyword === 'enum').map((e) => e.instancePath));
  const out: ConfigurationError[] = [];
  for (const e of raw) {
    if (dropped.has(e) || e.propertyName !== undefined) continue;
    if (e.keyword === 'type' && enumPaths.has(e.instancePath)) continue;
    out.push(replaced.get(e) ?? mapAjvError(e));
  }
  return out;
}

function mapAjvError(e: ErrorObject): ConfigurationError {
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required': {
      const path = `${e.instancePath}/${escapeSegment(String(params.missingProperty))}`;
      if (path === '/version') return { path, message: `is required; ${SUPPORTED_VERSIONS_TEXT}` };
      return { path, message: 'is required' };
    }
    case 'additionalProperties': {
      const path = `${e.instancePath}/${escapeSegment(String(params.additionalProperty))}`;
      if (e.instancePath === '/configuration') {
        return {
          path,
          message: `unknown member: not a configuration section (${CONFIGURATION_SECTIONS.join(', ')})`,
        };
      }
      return { path, message: 'unknown member' };
    }
    case 'propertyNames':
      return {
        path: `${e.instancePath}/${escapeSegment(String(params.propertyName))}`,
        message: 'member name must be a UUID',
      };
    case 'enum': {
      const allowed = Array.isArray(params.allowedValues) ? params.allowedValues.map(String) : [];
      if (e.instancePath === '/version')
        return { path: e.instancePath, message: `unsupported version; ${SUPPORTED_VERSIONS_TEXT}` };
      return { path: e.instancePath, message: `must be one of ${allowed.join(', ')}` };
    }
    case 'const':
      return { path: e.instancePath, message: `must be ${String(params.allowedValue)}` };
    case 'type':
      return { path: e.instancePath, message: `must be ${typeWithArticle(String(params.type))}` };
    case 'format':
      return { path: e.instancePath, message: formatMessage(String(params.format)) };
    case 'minLength':
      return {
        path: e.instancePath,
        message:
          params.limit === 1 ? 'must not be empty' : `must have at least ${String(params.limit)} characters`,
      };
    case 'minItems':
      return { path: e.instancePath, message: `must have at least ${String(params.limit)} item(s)` };
    case 'minimum':
    case 'maximum':
      return {
        path: e.instancePath,
        message: `must be ${String(params.comparison)} ${String(params.limit)}`,
      };
    default:
      return { path: e.instancePath, message: e.message ?? `violates rule ${e.keyword}` };
  }
}

function typeWithArticle(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function formatMessage(format: string): string {
  switch (format) {
    case 'date':
      return 'must be a real calendar day in the form YYYY-MM-DD';
    case 'date-time':
      return 'must be an RFC 3339 date-time';
    case 'uuid':
      return 'must be a UUID';
    default:
      return `must match format ${format}`;
  }
}

function dedupe(errors: readonly ConfigurationError[]): ConfigurationError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const key = `${e.path}\u0000${e.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function capped(errors: ConfigurationError[]): ConfigurationError[] {
  if (errors.length <= CONFIGURATION_ERRORS_MAX_COUNT) return errors;
  const more = errors.length - CONFIGURATION_ERRORS_MAX_COUNT;
  return [
    ...errors.slice(0, CONFIGURATION_ERRORS_MAX_COUNT),
    { path: '', message: `${more} further error(s) not listed (at most ${CONFIGURATION_ERRORS_MAX_COUNT})` },
  ];
}

// ---------------------------------------------------------------------------------------------
// Phase 2: semantic rules
// ---------------------------------------------------------------------------------------------
//
// The rules read the configuration as far as it is sound (`Readable`): a faulty or missing
// required member is `null`, and a rule skips exactly what it cannot read. A reference is checked
// against the names that could be read; a rule that needs a whole list (exactly one Input step,
// exactly one event_type attribute) says nothing while a member of that list is unreadable.

type ReadableConfiguration = Readable<Configuration>;
type ReadableFlow = Readable<Flow>;
type ReadableGraph = NonNullable<ReadableFlow['graph']>;
type ReadableMapping = Readable<Mapping>;

type Report = (path: string, message: string) => void;

/** A semantic rule: reads the configuration and reports what is wrong with it. */
type Rule = (c: ReadableConfiguration, report: Report) => void;

function semanticErrors(c: ReadableConfiguration): ConfigurationError[] {
  const errors: ConfigurationError[] = [];
  const report: Report = (path, message) => errors.push({ path, message });
  for (const rule of RULES) rule(c, report);
  return errors;
}

/** A list as a rule may read it: absent, unreadable (`null`), or with unreadable elements. */
type ReadableList<T> = readonly (T | null)[] | null | undefined;

/** The elements of a list that could be read, each with its index in the document. */
function readable<T>(items: ReadableList<T>): [T, number][] {
  const out: [T, number][] = [];
  items?.forEach((item, i) => {
    if (item !== null) out.push([item, i]);
  });
  return out;
}

/** The members of a map whose values could be read. */
function members<T>(map: Readonly<Record<string, T | null | undefined>> | null | undefined): [string, T][] {
  const out: [string, T][] = [];
  for (const [key, value] of Object.entries(map ?? {})) {
    if (value !== null && value !== undefined) out.push([key, value]);
  }
  return out;
}

/** Whether every element of a list, and the member `member` of each, could be read. */
function allReadable<T extends object>(items: ReadableList<T>, member: keyof T): boolean {
  return items !== null && (items ?? []).every((item) => item !== null && item[member] !== null);
}

/** A string member value, or undefined when it is absent or could not be read. */
function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/**
 * Reports every element whose key repeats an earlier one. `keyOf` returns undefined for elements
 * that have no key to compare (absent or unreadable).
 */
function checkUnique<T>(
  items: ReadableList<T>,
  keyOf: (item: T) => string | undefined,
  pathOf: (index: number) => string,
  describe: (key: string, firstPath: string) => string,
  report: Report,
): void {
  const first = new Map<string, number>();
  for (const [item, i] of readable(items)) {
    const key = keyOf(item);
    if (key === undefined) continue;
    const j = first.get(key);
    if (j === undefined) first.set(key, i);
    else report(pathOf(i), describe(key, pathOf(j)));
  }
}

function uniqueNames<T>(
  section: ConfigurationSectionName,
  items: ReadableList<T>,
  member: keyof T & string,
  report: Report,
): void {
  checkUnique(
    items,
    (item) => text(item[member]),
    (i) => at(section, i, member),
    (key, first) => `duplicate ${member} "${key}": must be unique within ${section} (first at ${first})`,
    report,
  );
}

/** The `member` values of the readable elements of a section, or null when the section is unreadable. */
function namesOf<T>(items: ReadableList<T>, member: keyof T): Set<string> | null {
  if (items === null) return null;
  const names = new Set<string>();
  for (const [item] of readable(items)) {
    const name = text(item[member]);
    if (name !== undefined) names.add(name);
  }
  return names;
}

/**
 * Reports every reference (pointer and value) that names no element of the target section.
 * Nothing is checked while the target section cannot be read, nor a reference whose value
 * could not be read.
 */
function checkReferences(
  references: readonly (readonly [path: string, value: unknown])[],
  names: ReadonlySet<string> | null,
  target: ConfigurationSectionName,
  targetMember: string,
  report: Report,
): void {
  if (names === null) return;
  for (const [path, raw] of references) {
    const value = text(raw);
    if (value !== undefined && !names.has(value)) {
      report(path, `must name an existing ${target} entry: no ${targetMember} "${value}"`);
    }
  }
}

const RULES: readonly Rule[] = [
  (c, r) => uniqueNames('accountLookups', c.accountLookups, 'postingCode', r),
  checkAccountingConfigurations,
  checkBusinessCalendars,
  checkBusinessEventDefinition,
  (c, r) => uniqueNames('businessEventTypes', c.businessEventTypes, 'name', r),
  checkDimensionSets,
  checkEntities,
  (c, r) => uniqueNames('fiscalCalendars', c.fiscalCalendars, 'name', r),
  checkFlowGraphs,
  checkFlowInputs,
  checkFlowInputMappings,
  checkFlowScriptMappings,
  checkFlowTargetMappings,
  checkFlowScripts,
  checkPublishedFlows,
  checkJournalDefinition,
  checkJournalTypes,
  checkNodeValues,
  checkNodes,
  checkNodeFieldValues,
  checkNodeFieldAttributes,
  checkNodeAccountingConfigurations,
  checkPostingComponentIdentifications,
  checkPostingComponents,
  checkPostingPatternFields,
];

// --- accountingConfigurations, businessCalendars, businessEventDefinition, dimensionSets --------

function checkAccountingConfigurations(c: ReadableConfiguration, report: Report): void {
  uniqueNames('accountingConfigurations', c.accountingConfigurations, 'name', report);
  const configurations = readable(c.accountingConfigurations);
  const targets = [
    ['businessCalendarName', 'businessCalendars', namesOf(c.businessCalendars, 'name')],
    ['dimensionSetName', 'dimensionSets', namesOf(c.dimensionSets, 'name')],
    ['fiscalCalendarName', 'fiscalCalendars', namesOf(c.fiscalCalendars, 'name')],
  ] as const;
  for (const [member, target, names] of targets) {
    checkReferences(
      configurations.map(([x, i]) => [at('accountingConfigurations', i, member), x[member]]),
      names,
      target,
      'name',
      report,
    );
  }
}

function checkBusinessCalendars(c: ReadableConfiguration, report: Report): void {
  uniqueNames('businessCalendars', c.businessCalendars, 'name', report);
  for (const [bc, i] of readable(c.businessCalendars)) {
    const from = text(bc.effectiveFrom);
    const to = text(bc.effectiveTo);
    if (from !== undefined && to !== undefined && to < from) {
      report(at('businessCalendars', i, 'effectiveTo'), 'must not be before effectiveFrom');
    }
  }
}

function checkBusinessEventDefinition(c: ReadableConfiguration, report: Report): void {
  const attributes = c.businessEventDefinition?.attributes;
  checkUnique(
    attributes,
    (a) => text(a.name),
    (i) => at('businessEventDefinition', 'attributes', i, 'name'),
    (name, first) => `duplicate attribute name "${name}" (first at ${first})`,
    report,
  );
  if (attributes === null || attributes === undefined || attributes.length === 0) return;
  const eventTypeIndexes = readable(attributes).flatMap(([a, i]) => (a.role === 'event_type' ? [i] : []));
  if (eventTypeIndexes.length === 0 && allReadable(attributes, 'role')) {
    report(
      at('businessEventDefinition', 'attributes'),
      'must contain exactly one attribute with role event_type',
    );
  }
  for (const i of eventTypeIndexes.slice(1)) {
    report(
      at('businessEventDefinition', 'attributes', i, 'role'),
      'must contain exactly one attribute with role event_type: this is a second one',
    );
  }
}

function checkDimensionSets(c: ReadableConfiguration, report: Report): void {
  uniqueNames('dimensionSets', c.dimensionSets, 'name', report);
  for (const [ds, i] of readable(c.dimensionSets)) {
    checkUnique(
      ds.attributes,
      (a) => a,
      (j) => at('dimensionSets', i, 'attributes', j),
      (a, first) => `duplicate attribute "${a}" (first at ${first})`,
      report,
    );
  }
}

// --- entities ----------------------------------------------------------------------------------

function entityKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

function checkEntities(c: ReadableConfiguration, report: Report): void {
  const entities = readable(c.entities);
  for (const [e, i] of entities) {
    if (e.namespace === LEDGER_NAMESPACE) {
      report(
        at('entities', i, 'namespace'),
        `namespace "${LEDGER_NAMESPACE}" is reserved for the built-in entities`,
      );
    }
  }
  checkUnique(
    c.entities,
    (e) => {
      const namespace = text(e.namespace);
      const name = text(e.name);
      return namespace === undefined || name === undefined ? undefined : entityKey(namespace, name);
    },
    (i) => at('entities', i, 'name'),
    (key, first) => `duplicate entity "${key}": must be unique per namespace (first at ${first})`,
    report,
  );
  for (const [e, i] of entities) {
    checkUnique(
      e.attributes,
      (a) => text(a.name),
      (j) => at('entities', i, 'attributes', j, 'name'),
      (name, first) => `duplicate attribute name "${name}" (first at ${first})`,
      report,
    );
    for (const [a, j] of readable(e.attributes)) {
      if (a.type !== null && a.type !== undefined) {
        checkAttributeType(a.type, at('entities', i, 'attributes', j, 'type'), report);
      }
    }
  }
}

/** `primitive` belongs to the canonical `PrimitiveType` form, `elementType` to `ListType`. */
function checkAttributeType(type: Readable<EntityAttributeType>, path: string, report: Report): void {
  const typeName = type.typeName;
  if (typeName === null || typeName === undefined) return;
  if (typeName === PRIMITIVE_TYPE && type.primitive === undefined) {
    report(
      `${path}/primitive`,
      `is required when typeName is ${PRIMITIVE_TYPE}; one of ${PRIMITIVE_TYPE_NAMES.join(', ')}`,
    );
  }
  if (typeName !== PRIMITIVE_TYPE && type.primitive !== undefined) {
    report(`${path}/primitive`, `is only allowed when typeName is ${PRIMITIVE_TYPE}`);
  }
  if (typeName !== LIST_TYPE && type.elementType !== undefined) {
    report(`${path}/elementType`, `is only allowed when typeName is ${LIST_TYPE}`);
  }
}

// --- flows -------------------------------------------------------------------------------------

/** The readable flows whose node map could be read, with their index. */
function flowGraphs(c: ReadableConfiguration): [ReadableFlow, ReadableGraph, number][] {
  const out: [ReadableFlow, ReadableGraph, number][] = [];
  for (const [flow, i] of readable(c.flows)) {
    const graph = flow.graph;
    if (graph !== null && graph !== undefined && graph.nodes !== null && graph.nodes !== undefined) {
      out.push([flow, graph, i]);
    }
  }
  return out;
}

/** Successor lists restricted to readable edges between existing nodes. */
function successors(graph: ReadableGraph): Map<string, string[]> {
  const nodes = graph.nodes ?? {};
  const next = new Map<string, string[]>(Object.keys(nodes).map((id) => [id, []]));
  for (const [from, tos] of members(graph.edges)) {
    const list = next.get(from);
    if (list === undefined) continue;
    for (const to of tos) if (to !== null && Object.hasOwn(nodes, to)) list.push(to);
  }
  return next;
}

/** Returns one cycle as a list of node ids (first id repeated at the end), or undefined. */
function findCycle(next: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  for (const start of next.keys()) {
    if (state.has(start)) continue;
    const stack: { id: string; child: number }[] = [{ id: start, child: 0 }];
    state.set(start, 'open');
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      if (top === undefined) break;
      const children = next.get(top.id) ?? [];
      const child = children[top.child];
      top.child += 1;
      if (child === undefined) {
        state.set(top.id, 'done');
        stack.pop();
      } else if (state.get(child) === 'open') {
        const from = stack.findIndex((f) => f.id === child);
        return [...stack.slice(from).map((f) => f.id), child];
      } else if (!state.has(child)) {
        state.set(child, 'open');
        stack.push({ id: child, child: 0 });
      }
    }
  }
  return undefined;
}

/** The readable Input steps of a graph, by node id. */
function inputSteps(graph: ReadableGraph): [string, Readable<InputStep>][] {
  const out: [string, Readable<InputStep>][] = [];
  for (const [id, node] of members(graph.nodes)) {
    const step = node.step;
    if (step?.type === 'Input') out.push([id, step]);
  }
  return out;
}

/** Whether the step of every node could be read (so its type is known). */
function allStepsReadable(graph: ReadableGraph): boolean {
  return Object.values(graph.nodes ?? {}).every(
    (node) => node !== null && node !== undefined && node.step != null,
  );
}

function checkFlowGraphs(c: ReadableConfiguration, report: Report): void {
  uniqueNames('flows', c.flows, 'name', report);
  for (const [, graph, i] of flowGraphs(c)) {
    const nodes = graph.nodes ?? {};
    for (const [from, tos] of members(graph.edges)) {
      if (!Object.hasOwn(nodes, from)) {
        report(at('flows', i, 'graph', 'edges', from), 'unknown node id: must be a key of graph.nodes');
      }
      tos.forEach((to, j) => {
        if (to !== null && !Object.hasOwn(nodes, to)) {
          report(
            at('flows', i, 'graph', 'edges', from, j),
            `unknown node id "${to}": must be a key of graph.nodes`,
          );
        }
      });
    }
    const cycle = findCycle(successors(graph));
    if (cycle !== undefined) {
      report(at('flows', i, 'graph', 'edges'), `must be acyclic: cycle ${cycle.join(' -> ')}`);
    }
    const inputs = inputSteps(graph);
    if (inputs.length === 0 && allStepsReadable(graph))
      report(at('flows', i, 'graph', 'nodes'), 'must contain exactly one Input step, found none');
    for (const [id] of inputs.slice(1)) {
      report(
        at('flows', i, 'graph', 'nodes', id, 'step', 'type'),
        `must contain exactly one Input step, found ${inputs.length}: this is an extra one`,
      );
    }
  }
}

/**
 * Field names of an ingestion target: an array when it exists, undefined when it does not, and
 * null when that cannot be told because the part of the configuration that defines it is
 * unreadable.
 */
function entityFields(
  c: ReadableConfiguration,
  namespace: string,
  name: string,
): string[] | undefined | null {
  const namesIn = <T extends { readonly name?: string | null }>(list: ReadableList<T>): string[] | null =>
    list === null ? null : readable(list).flatMap(([x]) => (typeof x.name === 'string' ? [x.name] : []));
  if (namespace === LEDGER_NAMESPACE) {
    if (name === 'businessEvent') {
      const definition = c.businessEventDefinition;
      return definition === null ? null : namesIn(definition?.attributes);
    }
    if (name === 'journal') {
      const definition = c.journalDefinition;
      return definition === null ? null : namesIn(definition?.fields);
    }
    return undefined;
  }
  if (c.entities === null) return null;
  const entity = entitiesByKey(c.entities).get(`${namespace}\u0000${name}`);
  return entity === undefined ? undefined : namesIn(entity.attributes);
}

type ReadableEntity = NonNullable<NonNullable<ReadableConfiguration['entities']>[number]>;

/** The readable entities by namespace and name (the first of a duplicate), built once per list. */
const entityIndexes = new WeakMap<object, Map<string, ReadableEntity>>();

/**
 * Looking every flow's input entity up in the list made the flow rules quadratic: 2,000 flows
 * and 4,000 entities (11 MB) took 3 s of the event loop.
 */
function entitiesByKey(
  entities: NonNullable<ReadableConfiguration['entities']> | undefined,
): Map<string, ReadableEntity> {
  if (entities === undefined) return new Map();
  let index = entityIndexes.get(entities);
  if (index === undefined) {
    index = new Map();
    for (const [entity] of readable(entities)) {
      if (typeof entity.namespace !== 'string' || typeof entity.name !== 'string') continue;
      const key = `${entity.namespace}\u0000${entity.name}`;
      if (!index.has(key)) index.set(key, entity);
    }
    entityIndexes.set(entities, index);
  }
  return index;
}

function checkFlowInputs(c: ReadableConfiguration, report: Report): void {
  for (const [, graph, i] of flowGraphs(c)) {
    for (const [id, step] of inputSteps(graph)) {
      const namespace = text(step.source?.namespace);
      const name = text(step.source?.name);
      if (namespace === undefined || name === undefined) continue;
      if (entityFields(c, namespace, name) === undefined) {
        const builtIns = LEDGER_ENTITY_NAMES.map((n) => `${LEDGER_NAMESPACE}/${n}`).join(', ');
        report(
          at('flows', i, 'graph', 'nodes', id, 'step', 'source'),
          `unknown entity "${entityKey(namespace, name)}": must be an entities entry or one of ${builtIns}`,
        );
      }
    }
  }
}

/** Ids of every node from which `id` can be reached. */
function ancestors(graph: ReadableGraph, id: string): Set<string> {
  const previous = new Map<string, string[]>();
  for (const [from, tos] of successors(graph)) {
    for (const to of tos) previous.set(to, [...(previous.get(to) ?? []), from]);
  }
  const seen = new Set<string>();
  const queue = [...(previous.get(id) ?? [])];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    if (seen.has(next)) continue;
    seen.add(next);
    queue.push(...(previous.get(next) ?? []));
  }
  return seen;
}

/** Calls `visit` for every readable mapping of every AccountingEngine step of the graph. */
function forEachMapping(
  graph: ReadableGraph,
  visit: (mapping: ReadableMapping, path: readonly (string | number)[], nodeId: string) => void,
): void {
  for (const [id, node] of members(graph.nodes)) {
    const step = node.step;
    if (step?.type !== 'AccountingEngine') continue;
    for (const [m, k] of readable(step.mapping)) {
      visit(m, ['graph', 'nodes', id, 'step', 'mapping', k], id);
    }
  }
}

/** Group INPUT: the first path segment is a field of the flow's input entity. */
function checkFlowInputMappings(c: ReadableConfiguration, report: Report): void {
  for (const [, graph, i] of flowGraphs(c)) {
    const inputs = inputSteps(graph);
    const source = inputs.length === 1 ? inputs[0]?.[1].source : undefined;
    const namespace = text(source?.namespace);
    const name = text(source?.name);
    if (namespace === undefined || name === undefined) continue;
    const fields = entityFields(c, namespace, name);
    if (fields === undefined || fields === null) continue;
    forEachMapping(graph, (m, path) => {
      const first = text(m.source?.path?.[0]);
      if (m.source?.group === 'INPUT' && first !== undefined && !fields.includes(first)) {
        report(
          at('flows', i, ...path, 'source', 'path', 0),
          `"${first}" is not an attribute of the input entity "${entityKey(namespace, name)}"`,
        );
      }
    });
  }
}

/** Group SCRIPT: the first path segment is published by a Script step upstream. */
function checkFlowScriptMappings(c: ReadableConfiguration, report: Report): void {
  for (const [, graph, i] of flowGraphs(c)) {
    const nodes = graph.nodes ?? {};
    const publishedByNode = new Map<string, Set<string>>();
    const publishedUpstreamOf = (id: string): Set<string> => {
      let published = publishedByNode.get(id);
      if (published === undefined) {
        published = new Set<string>();
        for (const upstream of ancestors(graph, id)) {
          const step = nodes[upstream]?.step;
          if (step?.type !== 'Script') continue;
          for (const [o] of readable(step.outputDefinition)) {
            const name = text(o.name);
            if (name !== undefined) published.add(name);
          }
        }
        publishedByNode.set(id, published);
      }
      return published;
    };
    forEachMapping(graph, (m, path, id) => {
      const first = text(m.source?.path?.[0]);
      if (m.source?.group !== 'SCRIPT' || first === undefined) return;
      if (!publishedUpstreamOf(id).has(first)) {
        report(
          at('flows', i, ...path, 'source', 'path', 0),
          `"${first}" is not in the outputDefinition of any Script step upstream of this step`,
        );
      }
    });
  }
}

/** Target: the first path segment is a business event attribute. */
function checkFlowTargetMappings(c: ReadableConfiguration, report: Report): void {
  const definition = c.businessEventDefinition;
  if (definition === null) return;
  const attributes = namesOf(definition?.attributes, 'name');
  if (attributes === null) return;
  for (const [, graph, i] of flowGraphs(c)) {
    forEachMapping(graph, (m, path) => {
      const first = text(m.target?.path?.[0]);
      if (first !== undefined && !attributes.has(first)) {
        report(
          at('flows', i, ...path, 'target', 'path', 0),
          `"${first}" is not a businessEventDefinition attribute`,
        );
      }
    });
  }
}

/** Scripts parse as ECMAScript 2022 and name no global that a flow script lacks. */
function checkFlowScripts(c: ReadableConfiguration, report: Report): void {
  // Copies of one flow share their scripts; each distinct text is parsed once.
  const problemsBySource = new Map<string, string[]>();
  for (const [, graph, i] of flowGraphs(c)) {
    for (const [id, node] of members(graph.nodes)) {
      const step = node.step;
      if (step?.type !== 'Script' || typeof step.script !== 'string') continue;
      let problems = problemsBySource.get(step.script);
      if (problems === undefined) {
        problems = flowScriptProblems(step.script);
        problemsBySource.set(step.script, problems);
      }
      for (const problem of problems) {
        report(at('flows', i, 'graph', 'nodes', id, 'step', 'script'), `the script ${problem}`);
      }
    }
  }
}

/** Ids of the nodes reachable from `start`, `start` included. */
function reachableFrom(next: ReadonlyMap<string, readonly string[]>, start: string): Set<string> {
  const seen = new Set<string>([start]);
  const queue = [start];
  for (let id = queue.pop(); id !== undefined; id = queue.pop()) {
    for (const to of next.get(id) ?? []) {
      if (!seen.has(to)) {
        seen.add(to);
        queue.push(to);
      }
    }
  }
  return seen;
}

/**
 * What a published flow must be to run (docs/reference.md, Flows): it reads an entity of the
 * `entities` section that no other published flow reads (business events and journals go to the
 * accounting engine directly), every step is reachable from its Input step, and it has an
 * AccountingEngine step, each followed by a JournalProcessor step that posts its journals.
 */
function checkPublishedFlows(c: ReadableConfiguration, report: Report): void {
  const readers = new Map<string, number>();
  for (const [flow, graph, i] of flowGraphs(c)) {
    if (flow.versionStatus !== 'Published' || !allStepsReadable(graph)) continue;
    const inputs = inputSteps(graph);
    const input = inputs.length === 1 ? inputs[0] : undefined;
    if (input === undefined) continue;
    const [inputId, step] = input;
    const namespace = text(step.source?.namespace);
    const name = text(step.source?.name);
    if (namespace !== undefined && name !== undefined) {
      const key = entityKey(namespace, name);
      const first = readers.get(key);
      if (namespace === LEDGER_NAMESPACE) {
        report(
          at('flows', i, 'graph', 'nodes', inputId, 'step', 'source'),
          `a published flow cannot read "${key}": business events and journals go to the accounting ` +
            'engine directly; a flow reads an entity of the entities section',
        );
      } else if (first !== undefined) {
        report(
          at('flows', i, 'versionStatus'),
          `a second published flow reads "${key}" (the first is ${at('flows', first)}): ` +
            'at most one published flow may read an entity',
        );
      } else {
        readers.set(key, i);
      }
    }
    const next = successors(graph);
    const reachable = reachableFrom(next, inputId);
    const nodes = graph.nodes ?? {};
    let engines = 0;
    for (const id of Object.keys(nodes)) {
      if (!reachable.has(id)) {
        report(
          at('flows', i, 'graph', 'nodes', id),
          'is not reachable from the Input step, so a published flow would never run it',
        );
        continue;
      }
      if (nodes[id]?.step?.type !== 'AccountingEngine') continue;
      engines += 1;
      const posted = [...reachableFrom(next, id)].some((d) => nodes[d]?.step?.type === 'JournalProcessor');
      if (!posted) {
        report(
          at('flows', i, 'graph', 'nodes', id, 'step'),
          'is followed by no JournalProcessor step, so its journals would never be posted',
        );
      }
    }
    if (engines === 0) {
      report(
        at('flows', i, 'graph', 'nodes'),
        'a published flow must have an AccountingEngine step reachable from its Input step',
      );
    }
  }
}

// --- journalDefinition, journalTypes ----------------------------------------------------------

function checkJournalDefinition(c: ReadableConfiguration, report: Report): void {
  const definition = c.journalDefinition;
  if (definition === null || definition === undefined) return;
  const fields = definition.fields;
  checkUnique(
    fields,
    (f) => text(f.name),
    (i) => at('journalDefinition', 'fields', i, 'name'),
    (name, first) => `duplicate field name "${name}" (first at ${first})`,
    report,
  );
  // Every role except `node` identifies one field of a journal line.
  checkUnique(
    fields,
    (f) => (typeof f.role !== 'string' || f.role === 'node' ? undefined : f.role),
    (i) => at('journalDefinition', 'fields', i, 'role'),
    (role, first) => `role ${role} must appear at most once (first at ${first})`,
    report,
  );
  const primaryKeys = definition.primaryKeys;
  const names = namesOf(fields, 'name');
  if (names !== null) {
    for (const [key, i] of readable(primaryKeys)) {
      if (!names.has(key)) {
        report(
          at('journalDefinition', 'primaryKeys', i),
          `must name a journalDefinition field: no field "${key}"`,
        );
      }
    }
  }
  checkUnique(
    primaryKeys,
    (k) => k,
    (i) => at('journalDefinition', 'primaryKeys', i),
    (k, first) => `duplicate primary key "${k}" (first at ${first})`,
    report,
  );
}

function checkJournalTypes(c: ReadableConfiguration, report: Report): void {
  uniqueNames('journalTypes', c.journalTypes, 'code', report);
  for (const [jt, i] of readable(c.journalTypes)) {
    const behavior = jt.behavior;
    if (behavior === null || behavior === undefined) continue;
    if (behavior === 'REVERSING' && jt.reversingDate === undefined) {
      report(at('journalTypes', i, 'reversingDate'), 'is required when behavior is REVERSING');
    }
    if (behavior !== 'REVERSING' && jt.reversingDate !== undefined) {
      report(at('journalTypes', i, 'reversingDate'), 'is only allowed when behavior is REVERSING');
    }
  }
}

// --- nodeValues, nodes -------------------------------------------------------------------------

function checkNodeValues(c: ReadableConfiguration, report: Report): void {
  uniqueNames('nodeValues', c.nodeValues, 'fieldName', report);
  for (const [nv, i] of readable(c.nodeValues)) {
    checkUnique(
      nv.values,
      (v) => v,
      (j) => at('nodeValues', i, 'values', j),
      (v, first) => `duplicate value "${v}" (first at ${first})`,
      report,
    );
  }
}

const validTimeZones = new Map<string, boolean>();

/** An IANA zone name as `Intl` knows it; offsets and lowercase spellings are not zone names. */
function isTimeZone(name: string): boolean {
  const known = validTimeZones.get(name);
  if (known !== undefined) return known;
  let valid = /^[A-Z][A-Za-z0-9_+-]*(\/[A-Za-z0-9][A-Za-z0-9_+-]*)*$/.test(name);
  if (valid) {
    try {
      new Intl.DateTimeFormat('en', { timeZone: name });
    } catch {
      valid = false;
    }
  }
  validTimeZones.set(name, valid);
  return valid;
}

/** A key equal for nodes with equal field values; undefined when a value could not be read. */
function nodeKey(
  fields: Readonly<Record<string, string | null | undefined>> | null | undefined,
): string | undefined {
  if (fields === null || fields === undefined) return undefined;
  const entries = Object.entries(fields);
  if (entries.some(([, value]) => typeof value !== 'string')) return undefined;
  return JSON.stringify(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function checkNodes(c: ReadableConfiguration, report: Report): void {
  const nodes = readable(c.nodes);
  for (const [node, i] of nodes) {
    const timeZone = text(node.timeZone);
    if (timeZone !== undefined && !isTimeZone(timeZone)) {
      report(at('nodes', i, 'timeZone'), `"${timeZone}" is not an IANA time-zone name`);
    }
  }
  checkUnique(
    c.nodes,
    (n) => nodeKey(n.fields),
    (i) => at('nodes', i, 'fields'),
    (_, first) => `duplicate node: the same field values as ${first}; nodes must be unique`,
    report,
  );
  for (const [node, i] of nodes) {
    checkUnique(
      node.nodeConfigs,
      (nc) => text(nc.accountingConfigName),
      (j) => at('nodes', i, 'nodeConfigs', j, 'accountingConfigName'),
      (name, first) => `duplicate accounting configuration "${name}" for this node (first at ${first})`,
      report,
    );
  }
}

function checkNodeFieldValues(c: ReadableConfiguration, report: Report): void {
  if (c.nodeValues === null) return;
  const allowed = new Map<string, Set<string>>();
  for (const [nv] of readable(c.nodeValues)) {
    const fieldName = text(nv.fieldName);
    if (fieldName !== undefined) allowed.set(fieldName, new Set(readable(nv.values).map(([v]) => v)));
  }
  for (const [node, i] of readable(c.nodes)) {
    for (const [field, value] of members(node.fields)) {
      const values = allowed.get(field);
      if (values === undefined) {
        report(
          at('nodes', i, 'fields', field),
          `unknown node field "${field}": must be a nodeValues fieldName`,
        );
      } else if (!values.has(value)) {
        report(
          at('nodes', i, 'fields', field),
          `value "${value}" is not among the nodeValues values of "${field}"`,
        );
      }
    }
  }
}

function checkNodeFieldAttributes(c: ReadableConfiguration, report: Report): void {
  const attributes = c.businessEventDefinition?.attributes;
  if (attributes === null) return;
  const nodeAttributes = readable(attributes).flatMap(([a]) =>
    a.role === 'node' && typeof a.name === 'string' ? [a.name] : [],
  );
  if (nodeAttributes.length === 0) return;
  for (const [node, i] of readable(c.nodes)) {
    const fields = node.fields;
    if (fields === null || fields === undefined) continue;
    for (const field of Object.keys(fields)) {
      if (!nodeAttributes.includes(field)) {
        report(
          at('nodes', i, 'fields', field),
          `"${field}" is not a businessEventDefinition attribute with role node (${nodeAttributes.join(', ')})`,
        );
      }
    }
    for (const name of nodeAttributes) {
      if (!Object.hasOwn(fields, name)) {
        report(
          at('nodes', i, 'fields'),
          `missing node field "${name}" (a businessEventDefinition attribute with role node)`,
        );
      }
    }
  }
}

function checkNodeAccountingConfigurations(c: ReadableConfiguration, report: Report): void {
  checkReferences(
    readable(c.nodes).flatMap(([node, i]) =>
      readable(node.nodeConfigs).map(
        ([nc, j]) =>
          [at('nodes', i, 'nodeConfigs', j, 'accountingConfigName'), nc.accountingConfigName] as const,
      ),
    ),
    namesOf(c.accountingConfigurations, 'name'),
    'accountingConfigurations',
    'name',
    report,
  );
}

// --- postingComponentIdentifications, postingComponents ---------------------------------------

function checkPostingComponentIdentifications(c: ReadableConfiguration, report: Report): void {
  const identifications = readable(c.postingComponentIdentifications);
  uniqueNames(
    'postingComponentIdentifications',
    c.postingComponentIdentifications,
    'businessEventTypeName',
    report,
  );
  checkReferences(
    identifications.map(([x, i]) => [
      at('postingComponentIdentifications', i, 'businessEventTypeName'),
      x.businessEventTypeName,
    ]),
    namesOf(c.businessEventTypes, 'name'),
    'businessEventTypes',
    'name',
    report,
  );
  checkReferences(
    identifications.flatMap(([x, i]) =>
      readable(x.postingComponents).map(
        ([ref, j]) =>
          [
            at('postingComponentIdentifications', i, 'postingComponents', j, 'postingComponentCode'),
            ref.postingComponentCode,
          ] as const,
      ),
    ),
    namesOf(c.postingComponents, 'code'),
    'postingComponents',
    'code',
    report,
  );
}

function checkPostingComponents(c: ReadableConfiguration, report: Report): void {
  const components = readable(c.postingComponents);
  uniqueNames('postingComponents', c.postingComponents, 'code', report);
  checkReferences(
    components.map(([x, i]) => [at('postingComponents', i, 'journalType'), x.journalType]),
    namesOf(c.journalTypes, 'code'),
    'journalTypes',
    'code',
    report,
  );
  checkReferences(
    components.map(([x, i]) => [at('postingComponents', i, 'accountingConfigName'), x.accountingConfigName]),
    namesOf(c.accountingConfigurations, 'name'),
    'accountingConfigurations',
    'name',
    report,
  );
  checkReferences(
    components.flatMap(([x, i]) =>
      readable(x.postingPatterns).map(
        ([p, j]) => [at('postingComponents', i, 'postingPatterns', j, 'postingCode'), p.postingCode] as const,
      ),
    ),
    namesOf(c.accountLookups, 'postingCode'),
    'accountLookups',
    'postingCode',
    report,
  );
}

/** The attribute type a posting pattern field must have. */
const PATTERN_FIELD_TYPES = {
  amountField: 'decimal',
  currencyField: 'text',
  postingDateField: 'date',
} as const;

function checkPostingPatternFields(c: ReadableConfiguration, report: Report): void {
  const definition = c.businessEventDefinition;
  if (definition === null || definition?.attributes === null) return;
  const attributes = new Map(
    readable(definition?.attributes).flatMap(([a]) =>
      typeof a.name === 'string' ? [[a.name, a] as const] : [],
    ),
  );
  for (const [pc, i] of readable(c.postingComponents)) {
    for (const [pattern, j] of readable(pc.postingPatterns)) {
      for (const [member, type] of Object.entries(PATTERN_FIELD_TYPES) as [
        keyof typeof PATTERN_FIELD_TYPES,
        string,
      ][]) {
        const name = text(pattern[member]);
        if (name === undefined) continue;
        const attribute = attributes.get(name);
        const path = at('postingComponents', i, 'postingPatterns', j, member);
        if (attribute === undefined)
          report(path, `must name a businessEventDefinition attribute: no attribute "${name}"`);
        else if (typeof attribute.type === 'string' && attribute.type !== type)
          report(path, `attribute "${name}" must be of type ${type}, not ${attribute.type}`);
      }
    }
  }
}
