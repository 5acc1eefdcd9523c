import { readFileSync } from 'node:fs';

/** A configuration document as the tests and the measuring script change it. */
export interface LargeConfiguration {
  version: string;
  configuration: Record<string, unknown[]>;
}

/**
 * The realistic example (`docs/examples/configuration.json`) with `copies` more entities and a
 * published flow reading each of the first half of them: valid, and about 2.8 KB a copy (2,800
 * copies make 7.8 MB). Free of vitest, so the measuring script in bench/ uses it too.
 */
export function largeConfiguration(copies: number): LargeConfiguration {
  const document = JSON.parse(
    readFileSync(new URL('../../docs/examples/configuration.json', import.meta.url), 'utf8'),
  ) as LargeConfiguration;
  const entities = document.configuration.entities ?? [];
  const flows = document.configuration.flows ?? [];
  const [entity] = entities;
  const [flow] = flows;
  for (let i = 0; i < copies; i += 1) entities.push({ ...structuredClone(entity as object), name: `e${i}` });
  // At most one published flow may read an entity, so each reads one of its own.
  for (let i = 0; i < copies / 2; i += 1) {
    const copy = structuredClone(flow) as {
      name: string;
      graph: { nodes: Record<string, { step: Record<string, unknown> }> };
    };
    copy.name = `f${i}`;
    for (const node of Object.values(copy.graph.nodes)) {
      if (node.step.type === 'Input') node.step.source = { namespace: 'loans', name: `e${i}` };
    }
    flows.push(copy);
  }
  return document;
}
