/**
 * The flows of a configuration revision compiled into run plans, once per revision
 * (docs/reference.md, Flows): for each entity a published flow reads, its Script steps in graph
 * order with a validator of what each may publish, and its AccountingEngine steps with their
 * mappings and the Script steps upstream of each. Only flows that run are planned: published
 * ones while the `flow` feature flag is on.
 */
import type { Configuration, Flow, PrimitiveTypeName } from '../configuration/model.js';
import { runnableFlows } from '../configuration/runnable-flows.js';
import type { FieldType } from '../entities/entity.js';
import { entityKey } from '../entities/prepared-entity.js';
import { compileRecordValidator, type RecordValidator } from '../entities/record-validator.js';
import { ancestors, orderFrom, successors } from './graph.js';

/** A Script step: its source and what it may publish. */
export interface ScriptPlan {
  /** Unique within the revision: flow index and node id. */
  key: string;
  stepName: string;
  source: string;
  /** Checks and converts the published values, as a record of the step's `outputDefinition`. */
  outputs: RecordValidator;
}

/** One mapping entry of an AccountingEngine step. */
export interface MappingPlan {
  /** `SCRIPT`: the values published upstream; `INPUT`: the record. */
  fromScript: boolean;
  sourcePath: readonly string[];
  targetPath: readonly string[];
}

/** An AccountingEngine step: how it builds its business event. */
export interface EnginePlan {
  stepName: string;
  mapping: readonly MappingPlan[];
  /** Indexes into {@link FlowPlan.scripts} of the Script steps upstream of this step, in order. */
  upstreamScripts: readonly number[];
}

/** The run plan of one published flow. */
export interface FlowPlan {
  name: string;
  /** The Script steps reachable from the Input step, each after the steps before it. */
  scripts: readonly ScriptPlan[];
  /** The AccountingEngine steps reachable from the Input step, in graph order. */
  engines: readonly EnginePlan[];
}

/** What the flows module reads of a prepared configuration revision. */
export interface PreparedFlows {
  revision: number;
  /** The plan of the flow that reads each entity, keyed by `entityKey(namespace, name)`. */
  flows: ReadonlyMap<string, FlowPlan>;
}

/** Published types a script output may have, as field types. */
const OUTPUT_FIELD_TYPES: Record<PrimitiveTypeName, FieldType> = {
  TEXT: 'TEXT',
  DATE: 'DATE',
  DATETIME: 'DATETIME',
  INTEGER: 'INTEGER',
  DECIMAL: 'DECIMAL',
  AMOUNT: 'DECIMAL',
  BOOLEAN: 'BOOLEAN',
  UUID: 'UUID',
};

/**
 * Plans every flow that runs in `configuration`, keyed by the entity it reads. Pure; expects a
 * configuration that passed upload validation (one Input step per flow, an acyclic graph).
 */
export function prepareFlows(configuration: Configuration): Map<string, FlowPlan> {
  const plans = new Map<string, FlowPlan>();
  for (const { flow, index, inputNodeId, input } of runnableFlows(configuration)) {
    plans.set(entityKey(input.source.namespace, input.source.name), planFlow(flow, index, inputNodeId));
  }
  return plans;
}

function planFlow(flow: Flow, index: number, inputNodeId: string): FlowPlan {
  const next = successors(flow.graph);
  const order = orderFrom(next, inputNodeId);
  const scripts: ScriptPlan[] = [];
  const scriptIndexByNode = new Map<string, number>();
  const engines: EnginePlan[] = [];
  for (const id of order) {
    const step = flow.graph.nodes[id]?.step;
    if (step?.type === 'Script') {
      scriptIndexByNode.set(id, scripts.length);
      scripts.push({
        key: `${index}/${id}`,
        stepName: step.name,
        source: step.script,
        outputs: compileRecordValidator({
          namespace: 'flow',
          name: step.name,
          description: `Values published by step "${step.name}" of flow "${flow.name}".`,
          temporalityType: 'Transaction',
          type: 'ScriptOutput',
          kind: 'user',
          attributes: step.outputDefinition.map((output) => ({
            name: output.name,
            label: output.name,
            mandatory: false,
            type: OUTPUT_FIELD_TYPES[output.type.primitive],
          })),
        }),
      });
    } else if (step?.type === 'AccountingEngine') {
      const upstream = ancestors(next, id);
      engines.push({
        stepName: step.name,
        mapping: step.mapping.map((m) => ({
          fromScript: m.source.group === 'SCRIPT',
          sourcePath: m.source.path,
          targetPath: m.target.path,
        })),
        upstreamScripts: order
          .filter((n) => upstream.has(n) && scriptIndexByNode.has(n))
          .map((n) => scriptIndexByNode.get(n) ?? -1),
      });
    }
  }
  return { name: flow.name, scripts, engines };
}
