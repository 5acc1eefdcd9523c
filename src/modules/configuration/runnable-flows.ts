/**
 * Which flows of a configuration run (docs/reference.md, Flows). Two modules read it: `entities`
 * (the records of an entity a running flow reads wait for processing) and `flows` (the run
 * plans). It lives here, beneath both, because `flows` imports `entities`: in `flows` it would
 * make `entities` import `flows`, an import cycle between modules (docs/architecture.md).
 */
import type { Configuration, Flow, InputStep } from './model.js';

/** The feature flag that turns flows on; absent counts as on (docs/reference.md, Flows). */
export const FLOW_FEATURE_FLAG = 'flow';

/** A flow that processes records, with the node id and step of its one Input step. */
export interface RunnableFlow {
  flow: Flow;
  /** Position in the `flows` section. */
  index: number;
  inputNodeId: string;
  input: InputStep;
}

/**
 * The flows that process records in a valid configuration: published ones, while the `flow`
 * feature flag is not off. Draft flows are stored and returned, never run. Upload validation
 * makes sure each has one Input step and that no two read the same entity.
 */
export function runnableFlows(configuration: Configuration): RunnableFlow[] {
  if (configuration.featureFlags[FLOW_FEATURE_FLAG] === false) return [];
  const out: RunnableFlow[] = [];
  configuration.flows.forEach((flow, index) => {
    if (flow.versionStatus !== 'Published') return;
    for (const [inputNodeId, node] of Object.entries(flow.graph.nodes)) {
      if (node.step.type === 'Input') {
        out.push({ flow, index, inputNodeId, input: node.step });
        break;
      }
    }
  });
  return out;
}
