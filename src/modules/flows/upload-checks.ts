/**
 * The upload checks of the `flows` section (docs/reference.md, Flows), which the composition
 * root hands to the upload with the configuration module's own (`validateConfigurationDocument`):
 * unique flow names; graphs whose edges name their nodes, without a cycle, with exactly one
 * Input step reading a known entity; mappings whose INPUT paths name a field of that entity,
 * whose SCRIPT paths name a value a Script step upstream publishes, and whose targets name a
 * business event attribute; scripts that could run (`flow-scripts.ts`); and what a published flow
 * must be to run. The graph walks are those of the run plans (`graph.ts`).
 */
import { at } from '../configuration/configuration-errors.js';
import {
  type Flow,
  type InputStep,
  LEDGER_ENTITY_NAMES,
  LEDGER_NAMESPACE,
  type Mapping,
} from '../configuration/model.js';
import type { Readable } from '../configuration/readable.js';
import {
  type ConfigurationCheck,
  members,
  namesOf,
  type ReadableConfiguration,
  type ReadableList,
  type Report,
  readable,
  text,
  uniqueNames,
} from '../configuration/semantic-check.js';
import { entityKey } from '../entities/prepared-entity.js';
import { flowScriptProblems } from './flow-scripts.js';
import { ancestors, findCycle, reachableFrom, successors } from './graph.js';

/** The checks of the flows section, in the order their problems are listed. */
export const FLOW_CHECKS: readonly ConfigurationCheck[] = [
  { section: 'flows', check: checkFlowGraphs },
  { section: 'flows', check: checkFlowInputs },
  { section: 'flows', check: checkFlowInputMappings },
  { section: 'flows', check: checkFlowScriptMappings },
  { section: 'flows', check: checkFlowTargetMappings },
  { section: 'flows', check: checkFlowScripts },
  { section: 'flows', check: checkPublishedFlows },
];

type ReadableFlow = Readable<Flow>;
type ReadableGraph = NonNullable<ReadableFlow['graph']>;
type ReadableMapping = Readable<Mapping>;

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
    const next = successors(graph);
    const publishedByNode = new Map<string, Set<string>>();
    const publishedUpstreamOf = (id: string): Set<string> => {
      let published = publishedByNode.get(id);
      if (published === undefined) {
        published = new Set<string>();
        for (const upstream of ancestors(next, id)) {
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
