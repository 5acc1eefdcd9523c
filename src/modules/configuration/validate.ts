/**
 * Validation of an uploaded Configuration Data document (contract 3). Two phases, in a stable
 * order: the structure and types of every member (Ajv, compiled once from the TypeBox model),
 * then the semantic rules of contract 3 (unique names, cross-references, flow graphs, time
 * zones). Every problem is reported at once, each with a JSON Pointer (RFC 6901) path.
 */
import { Ajv, type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import { CONFIGURATION_SECTIONS, type ConfigurationSectionName, emptyConfiguration } from './document.js';
import {
  type BusinessEventAttribute,
  type Configuration,
  type ConfigurationDocument,
  type ConfigurationUpload,
  ConfigurationUploadSchema,
  type Entity,
  FLOW_STEP_TYPES,
  type Flow,
  type FlowNode,
  LEDGER_ENTITY_NAMES,
  LEDGER_NAMESPACE,
  type Mapping,
  SUPPORTED_CONFIGURATION_VERSIONS,
} from './model.js';

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
 * Validates an upload body against the Configuration Data structure (seed 2.4, 2.5) and the rules
 * of contract 3. On success returns the document with every section present (an omitted section
 * is empty; field values are not otherwise defaulted, so a download returns what was uploaded).
 * On failure returns every problem found, in a stable order: structural errors first (Ajv order),
 * then semantic errors by section in seed order. Semantic rules run only on sections that are
 * structurally sound, and a rule that reads a broken section is skipped, so one fault is not
 * reported twice. Never throws for any JSON value; the returned document shares objects with
 * `body`, so the caller must not mutate `body` afterwards.
 */
export function validateConfigurationDocument(body: unknown): ConfigurationValidation {
  const structureOk = checkStructure(body);
  const errors = structureOk ? [] : structuralErrors(body, checkStructure.errors ?? []);
  const configurationInput = isRecord(body) ? body.configuration : undefined;
  if (isRecord(configurationInput)) {
    const broken = brokenSections(errors);
    const configuration: Configuration = { ...emptyConfiguration(), ...configurationInput };
    errors.push(...semanticErrors(configuration, broken));
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

/** The schema path suffix of the flow step union, discriminated by `type` (seed 2.5). */
const STEP_UNION_SCHEMA_PATH_SUFFIX = '/step/anyOf';

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

/** Sections with a structural error below them; semantic rules that read them are skipped. */
function brokenSections(errors: readonly ConfigurationError[]): Set<string> {
  const broken = new Set<string>();
  for (const { path } of errors) {
    const [, root, section] = path.split('/');
    if (root === 'configuration' && section !== undefined) broken.add(unescapeSegment(section));
  }
  return broken;
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
// Phase 2: semantic rules (contract 3)
// ---------------------------------------------------------------------------------------------

type Report = (path: string, message: string) => void;

/** A semantic rule and the sections it reads; it runs only when all of them are sound. */
interface Rule {
  readonly reads: readonly ConfigurationSectionName[];
  readonly check: (c: Configuration, report: Report) => void;
}

function semanticErrors(c: Configuration, broken: ReadonlySet<string>): ConfigurationError[] {
  const errors: ConfigurationError[] = [];
  const report: Report = (path, message) => errors.push({ path, message });
  for (const rule of RULES) {
    if (rule.reads.every((s) => !broken.has(s))) rule.check(c, report);
  }
  return errors;
}

/**
 * Reports every element whose key repeats an earlier one. `keyOf` returns undefined for elements
 * that have no key to compare.
 */
function checkUnique<T>(
  items: readonly T[],
  keyOf: (item: T) => string | undefined,
  pathOf: (index: number) => string,
  describe: (item: T, firstPath: string) => string,
  report: Report,
): void {
  const first = new Map<string, number>();
  items.forEach((item, i) => {
    const key = keyOf(item);
    if (key === undefined) return;
    const j = first.get(key);
    if (j === undefined) first.set(key, i);
    else report(pathOf(i), describe(item, pathOf(j)));
  });
}

function uniqueNames<T>(
  section: ConfigurationSectionName,
  items: readonly T[],
  member: keyof T & string,
  report: Report,
): void {
  checkUnique(
    items,
    (item) => String(item[member]),
    (i) => at(section, i, member),
    (item, first) =>
      `duplicate ${member} "${String(item[member])}": must be unique within ${section} (first at ${first})`,
    report,
  );
}

function unknownReference(value: string, section: string, member: string): string {
  return `must name an existing ${section} entry: no ${member} "${value}"`;
}

const RULES: readonly Rule[] = [
  {
    reads: ['accountLookups'],
    check: (c, r) => uniqueNames('accountLookups', c.accountLookups, 'postingCode', r),
  },
  {
    reads: ['accountingConfigurations'],
    check: (c, r) => uniqueNames('accountingConfigurations', c.accountingConfigurations, 'name', r),
  },
  referenceRule(
    'accountingConfigurations',
    'businessCalendars',
    'name',
    (c) =>
      c.accountingConfigurations.map((x, i) => [
        at('accountingConfigurations', i, 'businessCalendarName'),
        x.businessCalendarName,
      ]),
    (c) => c.businessCalendars.map((x) => x.name),
  ),
  referenceRule(
    'accountingConfigurations',
    'dimensionSets',
    'name',
    (c) =>
      c.accountingConfigurations.map((x, i) => [
        at('accountingConfigurations', i, 'dimensionSetName'),
        x.dimensionSetName,
      ]),
    (c) => c.dimensionSets.map((x) => x.name),
  ),
  referenceRule(
    'accountingConfigurations',
    'fiscalCalendars',
    'name',
    (c) =>
      c.accountingConfigurations.map((x, i) => [
        at('accountingConfigurations', i, 'fiscalCalendarName'),
        x.fiscalCalendarName,
      ]),
    (c) => c.fiscalCalendars.map((x) => x.name),
  ),
  { reads: ['businessCalendars'], check: checkBusinessCalendars },
  { reads: ['businessEventDefinition'], check: checkBusinessEventDefinition },
  {
    reads: ['businessEventTypes'],
    check: (c, r) => uniqueNames('businessEventTypes', c.businessEventTypes, 'name', r),
  },
  { reads: ['dimensionSets'], check: checkDimensionSets },
  { reads: ['entities'], check: checkEntities },
  {
    reads: ['fiscalCalendars'],
    check: (c, r) => uniqueNames('fiscalCalendars', c.fiscalCalendars, 'name', r),
  },
  { reads: ['flows'], check: checkFlowGraphs },
  { reads: ['flows', 'entities'], check: checkFlowInputs },
  {
    reads: ['flows', 'entities', 'businessEventDefinition', 'journalDefinition'],
    check: checkFlowInputMappings,
  },
  { reads: ['flows'], check: checkFlowScriptMappings },
  { reads: ['flows', 'businessEventDefinition'], check: checkFlowTargetMappings },
  { reads: ['journalDefinition'], check: checkJournalDefinition },
  { reads: ['journalTypes'], check: checkJournalTypes },
  { reads: ['nodeValues'], check: checkNodeValues },
  { reads: ['nodes'], check: checkNodes },
  { reads: ['nodes', 'nodeValues'], check: checkNodeFieldValues },
  { reads: ['nodes', 'businessEventDefinition'], check: checkNodeFieldAttributes },
  referenceRule(
    'nodes',
    'accountingConfigurations',
    'name',
    (c) =>
      c.nodes.flatMap((node, i) =>
        node.nodeConfigs.map(
          (nc, j) =>
            [at('nodes', i, 'nodeConfigs', j, 'accountingConfigName'), nc.accountingConfigName] as const,
        ),
      ),
    (c) => c.accountingConfigurations.map((x) => x.name),
  ),
  {
    reads: ['postingComponentIdentifications'],
    check: (c, r) =>
      uniqueNames(
        'postingComponentIdentifications',
        c.postingComponentIdentifications,
        'businessEventTypeName',
        r,
      ),
  },
  referenceRule(
    'postingComponentIdentifications',
    'businessEventTypes',
    'name',
    (c) =>
      c.postingComponentIdentifications.map((x, i) => [
        at('postingComponentIdentifications', i, 'businessEventTypeName'),
        x.businessEventTypeName,
      ]),
    (c) => c.businessEventTypes.map((x) => x.name),
  ),
  referenceRule(
    'postingComponentIdentifications',
    'postingComponents',
    'code',
    (c) =>
      c.postingComponentIdentifications.flatMap((x, i) =>
        x.postingComponents.map(
          (ref, j) =>
            [
              at('postingComponentIdentifications', i, 'postingComponents', j, 'postingComponentCode'),
              ref.postingComponentCode,
            ] as const,
        ),
      ),
    (c) => c.postingComponents.map((x) => x.code),
  ),
  {
    reads: ['postingComponents'],
    check: (c, r) => uniqueNames('postingComponents', c.postingComponents, 'code', r),
  },
  referenceRule(
    'postingComponents',
    'journalTypes',
    'code',
    (c) => c.postingComponents.map((x, i) => [at('postingComponents', i, 'journalType'), x.journalType]),
    (c) => c.journalTypes.map((x) => x.code),
  ),
  referenceRule(
    'postingComponents',
    'accountingConfigurations',
    'name',
    (c) =>
      c.postingComponents.map((x, i) => [
        at('postingComponents', i, 'accountingConfigName'),
        x.accountingConfigName,
      ]),
    (c) => c.accountingConfigurations.map((x) => x.name),
  ),
  referenceRule(
    'postingComponents',
    'accountLookups',
    'postingCode',
    (c) =>
      c.postingComponents.flatMap((x, i) =>
        x.postingPatterns.map(
          (p, j) => [at('postingComponents', i, 'postingPatterns', j, 'postingCode'), p.postingCode] as const,
        ),
      ),
    (c) => c.accountLookups.map((x) => x.postingCode),
  ),
  { reads: ['postingComponents', 'businessEventDefinition'], check: checkPostingPatternFields },
];

// --- accountingConfigurations, businessCalendars, businessEventDefinition, dimensionSets --------

/**
 * A rule that checks one reference member of every element of a section against the names of
 * another section; one rule per referenced section, so a broken target skips only its own rule.
 */
function referenceRule(
  section: ConfigurationSectionName,
  target: ConfigurationSectionName,
  targetMember: string,
  references: (c: Configuration) => readonly (readonly [path: string, value: string])[],
  targetNames: (c: Configuration) => readonly string[],
): Rule {
  return {
    reads: [section, target],
    check: (c, report) => {
      const names = new Set(targetNames(c));
      for (const [path, value] of references(c)) {
        if (!names.has(value)) report(path, unknownReference(value, target, targetMember));
      }
    },
  };
}

function checkBusinessCalendars(c: Configuration, report: Report): void {
  uniqueNames('businessCalendars', c.businessCalendars, 'name', report);
  c.businessCalendars.forEach((bc, i) => {
    if (bc.effectiveFrom !== undefined && bc.effectiveTo !== undefined && bc.effectiveTo < bc.effectiveFrom) {
      report(at('businessCalendars', i, 'effectiveTo'), 'must not be before effectiveFrom');
    }
  });
}

function checkBusinessEventDefinition(c: Configuration, report: Report): void {
  const attributes = c.businessEventDefinition.attributes ?? [];
  checkUnique(
    attributes,
    (a) => a.name,
    (i) => at('businessEventDefinition', 'attributes', i, 'name'),
    (a, first) => `duplicate attribute name "${a.name}" (first at ${first})`,
    report,
  );
  if (attributes.length === 0) return;
  const eventTypeIndexes = attributes.flatMap((a, i) => (a.role === 'event_type' ? [i] : []));
  if (eventTypeIndexes.length === 0) {
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

function checkDimensionSets(c: Configuration, report: Report): void {
  uniqueNames('dimensionSets', c.dimensionSets, 'name', report);
  c.dimensionSets.forEach((ds, i) => {
    checkUnique(
      ds.attributes,
      (a) => a,
      (j) => at('dimensionSets', i, 'attributes', j),
      (a, first) => `duplicate attribute "${a}" (first at ${first})`,
      report,
    );
  });
}

// --- entities ----------------------------------------------------------------------------------

function entityKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

function checkEntities(c: Configuration, report: Report): void {
  c.entities.forEach((e, i) => {
    if (e.namespace === LEDGER_NAMESPACE) {
      report(
        at('entities', i, 'namespace'),
        `namespace "${LEDGER_NAMESPACE}" is reserved for the built-in entities`,
      );
    }
  });
  checkUnique(
    c.entities,
    (e) => entityKey(e.namespace, e.name),
    (i) => at('entities', i, 'name'),
    (e, first) =>
      `duplicate entity "${entityKey(e.namespace, e.name)}": must be unique per namespace (first at ${first})`,
    report,
  );
  c.entities.forEach((e, i) => {
    checkUnique(
      e.attributes,
      (a) => a.name,
      (j) => at('entities', i, 'attributes', j, 'name'),
      (a, first) => `duplicate attribute name "${a.name}" (first at ${first})`,
      report,
    );
    e.attributes.forEach((a, j) => {
      if (a.type.elementType !== undefined && a.type.typeName !== 'ListType') {
        report(
          at('entities', i, 'attributes', j, 'type', 'elementType'),
          'is only allowed when typeName is ListType',
        );
      }
    });
  });
}

// --- flows -------------------------------------------------------------------------------------

/** Successor lists restricted to edges between existing nodes. */
function successors(flow: Flow): Map<string, string[]> {
  const nodes = flow.graph.nodes;
  const next = new Map<string, string[]>(Object.keys(nodes).map((id) => [id, []]));
  for (const [from, tos] of Object.entries(flow.graph.edges)) {
    const list = next.get(from);
    if (list === undefined) continue;
    for (const to of tos) if (Object.hasOwn(nodes, to)) list.push(to);
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

function inputSteps(flow: Flow): [string, FlowNode][] {
  return Object.entries(flow.graph.nodes).filter(([, n]) => n.step.type === 'Input');
}

function checkFlowGraphs(c: Configuration, report: Report): void {
  uniqueNames('flows', c.flows, 'name', report);
  c.flows.forEach((flow, i) => {
    const nodes = flow.graph.nodes;
    for (const [from, tos] of Object.entries(flow.graph.edges)) {
      if (!Object.hasOwn(nodes, from)) {
        report(at('flows', i, 'graph', 'edges', from), 'unknown node id: must be a key of graph.nodes');
      }
      tos.forEach((to, j) => {
        if (!Object.hasOwn(nodes, to)) {
          report(
            at('flows', i, 'graph', 'edges', from, j),
            `unknown node id "${to}": must be a key of graph.nodes`,
          );
        }
      });
    }
    const cycle = findCycle(successors(flow));
    if (cycle !== undefined) {
      report(at('flows', i, 'graph', 'edges'), `must be acyclic: cycle ${cycle.join(' -> ')}`);
    }
    const inputs = inputSteps(flow);
    if (inputs.length === 0)
      report(at('flows', i, 'graph', 'nodes'), 'must contain exactly one Input step, found none');
    for (const [id] of inputs.slice(1)) {
      report(
        at('flows', i, 'graph', 'nodes', id, 'step', 'type'),
        `must contain exactly one Input step, found ${inputs.length}: this is an extra one`,
      );
    }
  });
}

/** Field names of an ingestion target (contract 3.1), or undefined when it does not exist. */
function entityFields(c: Configuration, namespace: string, name: string): string[] | undefined {
  if (namespace === LEDGER_NAMESPACE) {
    if (name === 'businessEvent') return (c.businessEventDefinition.attributes ?? []).map((a) => a.name);
    if (name === 'journal') return (c.journalDefinition.fields ?? []).map((f) => f.name);
    return undefined;
  }
  const entity: Entity | undefined = c.entities.find((e) => e.namespace === namespace && e.name === name);
  return entity?.attributes.map((a) => a.name);
}

function checkFlowInputs(c: Configuration, report: Report): void {
  c.flows.forEach((flow, i) => {
    for (const [id, node] of inputSteps(flow)) {
      if (node.step.type !== 'Input') continue;
      const { namespace, name } = node.step.source;
      if (entityFields(c, namespace, name) === undefined) {
        const builtIns = LEDGER_ENTITY_NAMES.map((n) => `${LEDGER_NAMESPACE}/${n}`).join(', ');
        report(
          at('flows', i, 'graph', 'nodes', id, 'step', 'source'),
          `unknown entity "${entityKey(namespace, name)}": must be an entities entry or one of ${builtIns}`,
        );
      }
    }
  });
}

/** Ids of every node from which `id` can be reached. */
function ancestors(flow: Flow, id: string): Set<string> {
  const previous = new Map<string, string[]>();
  for (const [from, tos] of successors(flow)) {
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

/** Calls `visit` for every mapping of every AccountingEngine step of the flow. */
function forEachMapping(
  flow: Flow,
  visit: (mapping: Mapping, path: readonly (string | number)[], nodeId: string) => void,
): void {
  for (const [id, node] of Object.entries(flow.graph.nodes)) {
    if (node.step.type !== 'AccountingEngine') continue;
    node.step.mapping.forEach((m, k) => {
      visit(m, ['graph', 'nodes', id, 'step', 'mapping', k], id);
    });
  }
}

/** Group INPUT: the first path segment is a field of the flow's input entity (seed 2.5). */
function checkFlowInputMappings(c: Configuration, report: Report): void {
  c.flows.forEach((flow, i) => {
    const inputs = inputSteps(flow);
    const input = inputs.length === 1 ? inputs[0]?.[1].step : undefined;
    if (input?.type !== 'Input') return;
    const { namespace, name } = input.source;
    const fields = entityFields(c, namespace, name);
    if (fields === undefined) return;
    forEachMapping(flow, (m, path) => {
      const [first] = m.source.path;
      if (m.source.group === 'INPUT' && first !== undefined && !fields.includes(first)) {
        report(
          at('flows', i, ...path, 'source', 'path', 0),
          `"${first}" is not an attribute of the input entity "${entityKey(namespace, name)}"`,
        );
      }
    });
  });
}

/** Group SCRIPT: the first path segment is published by a Script step upstream (seed 2.5). */
function checkFlowScriptMappings(c: Configuration, report: Report): void {
  c.flows.forEach((flow, i) => {
    const publishedByNode = new Map<string, Set<string>>();
    const publishedUpstreamOf = (id: string): Set<string> => {
      let published = publishedByNode.get(id);
      if (published === undefined) {
        published = new Set<string>();
        for (const upstream of ancestors(flow, id)) {
          const step = flow.graph.nodes[upstream]?.step;
          if (step?.type === 'Script') for (const o of step.outputDefinition) published.add(o.name);
        }
        publishedByNode.set(id, published);
      }
      return published;
    };
    forEachMapping(flow, (m, path, id) => {
      const [first] = m.source.path;
      if (m.source.group !== 'SCRIPT' || first === undefined) return;
      if (!publishedUpstreamOf(id).has(first)) {
        report(
          at('flows', i, ...path, 'source', 'path', 0),
          `"${first}" is not in the outputDefinition of any Script step upstream of this step`,
        );
      }
    });
  });
}

/** Target: the first path segment is a business event attribute (accounting.md 6). */
function checkFlowTargetMappings(c: Configuration, report: Report): void {
  const attributes = new Set((c.businessEventDefinition.attributes ?? []).map((a) => a.name));
  c.flows.forEach((flow, i) => {
    forEachMapping(flow, (m, path) => {
      const [first] = m.target.path;
      if (first !== undefined && !attributes.has(first)) {
        report(
          at('flows', i, ...path, 'target', 'path', 0),
          `"${first}" is not a businessEventDefinition attribute`,
        );
      }
    });
  });
}

// --- journalDefinition, journalTypes ----------------------------------------------------------

function checkJournalDefinition(c: Configuration, report: Report): void {
  const fields = c.journalDefinition.fields ?? [];
  checkUnique(
    fields,
    (f) => f.name,
    (i) => at('journalDefinition', 'fields', i, 'name'),
    (f, first) => `duplicate field name "${f.name}" (first at ${first})`,
    report,
  );
  // Every role except `node` identifies one field of a journal line (accounting.md 2).
  checkUnique(
    fields,
    (f) => (f.role === undefined || f.role === 'node' ? undefined : f.role),
    (i) => at('journalDefinition', 'fields', i, 'role'),
    (f, first) => `role ${String(f.role)} must appear at most once (first at ${first})`,
    report,
  );
  const names = new Set(fields.map((f) => f.name));
  const primaryKeys = c.journalDefinition.primaryKeys ?? [];
  primaryKeys.forEach((key, i) => {
    if (!names.has(key)) {
      report(
        at('journalDefinition', 'primaryKeys', i),
        `must name a journalDefinition field: no field "${key}"`,
      );
    }
  });
  checkUnique(
    primaryKeys,
    (k) => k,
    (i) => at('journalDefinition', 'primaryKeys', i),
    (k, first) => `duplicate primary key "${k}" (first at ${first})`,
    report,
  );
}

function checkJournalTypes(c: Configuration, report: Report): void {
  uniqueNames('journalTypes', c.journalTypes, 'code', report);
  c.journalTypes.forEach((jt, i) => {
    if (jt.behavior === 'REVERSING' && jt.reversingDate === undefined) {
      report(at('journalTypes', i, 'reversingDate'), 'is required when behavior is REVERSING');
    }
    if (jt.behavior !== 'REVERSING' && jt.reversingDate !== undefined) {
      report(at('journalTypes', i, 'reversingDate'), 'is only allowed when behavior is REVERSING');
    }
  });
}

// --- nodeValues, nodes -------------------------------------------------------------------------

function checkNodeValues(c: Configuration, report: Report): void {
  uniqueNames('nodeValues', c.nodeValues, 'fieldName', report);
  c.nodeValues.forEach((nv, i) => {
    checkUnique(
      nv.values,
      (v) => v,
      (j) => at('nodeValues', i, 'values', j),
      (v, first) => `duplicate value "${v}" (first at ${first})`,
      report,
    );
  });
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

function nodeKey(fields: Readonly<Record<string, string>>): string {
  return JSON.stringify(Object.entries(fields).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function checkNodes(c: Configuration, report: Report): void {
  c.nodes.forEach((node, i) => {
    if (!isTimeZone(node.timeZone)) {
      report(at('nodes', i, 'timeZone'), `"${node.timeZone}" is not an IANA time-zone name`);
    }
  });
  checkUnique(
    c.nodes,
    (n) => nodeKey(n.fields),
    (i) => at('nodes', i, 'fields'),
    (_, first) => `duplicate node: the same field values as ${first}; nodes must be unique`,
    report,
  );
  c.nodes.forEach((node, i) => {
    checkUnique(
      node.nodeConfigs,
      (nc) => nc.accountingConfigName,
      (j) => at('nodes', i, 'nodeConfigs', j, 'accountingConfigName'),
      (nc, first) =>
        `duplicate accounting configuration "${nc.accountingConfigName}" for this node (first at ${first})`,
      report,
    );
  });
}

function checkNodeFieldValues(c: Configuration, report: Report): void {
  const allowed = new Map(c.nodeValues.map((nv) => [nv.fieldName, new Set(nv.values)]));
  c.nodes.forEach((node, i) => {
    for (const [field, value] of Object.entries(node.fields)) {
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
  });
}

function checkNodeFieldAttributes(c: Configuration, report: Report): void {
  const nodeAttributes = (c.businessEventDefinition.attributes ?? [])
    .filter((a: BusinessEventAttribute) => a.role === 'node')
    .map((a) => a.name);
  if (nodeAttributes.length === 0) return;
  c.nodes.forEach((node, i) => {
    for (const field of Object.keys(node.fields)) {
      if (!nodeAttributes.includes(field)) {
        report(
          at('nodes', i, 'fields', field),
          `"${field}" is not a businessEventDefinition attribute with role node (${nodeAttributes.join(', ')})`,
        );
      }
    }
    for (const name of nodeAttributes) {
      if (!Object.hasOwn(node.fields, name)) {
        report(
          at('nodes', i, 'fields'),
          `missing node field "${name}" (a businessEventDefinition attribute with role node)`,
        );
      }
    }
  });
}

// --- postingComponentIdentifications, postingComponents ---------------------------------------

/** The attribute type a posting pattern field must have (accounting.md 1.4). */
const PATTERN_FIELD_TYPES = {
  amountField: 'decimal',
  currencyField: 'text',
  postingDateField: 'date',
} as const;

function checkPostingPatternFields(c: Configuration, report: Report): void {
  const attributes = new Map((c.businessEventDefinition.attributes ?? []).map((a) => [a.name, a]));
  c.postingComponents.forEach((pc, i) => {
    pc.postingPatterns.forEach((pattern, j) => {
      for (const [member, type] of Object.entries(PATTERN_FIELD_TYPES) as [
        keyof typeof PATTERN_FIELD_TYPES,
        string,
      ][]) {
        const name = pattern[member];
        const attribute = attributes.get(name);
        const path = at('postingComponents', i, 'postingPatterns', j, member);
        if (attribute === undefined)
          report(path, `must name a businessEventDefinition attribute: no attribute "${name}"`);
        else if (attribute.type !== type)
          report(path, `attribute "${name}" must be of type ${type}, not ${attribute.type}`);
      }
    });
  });
}
