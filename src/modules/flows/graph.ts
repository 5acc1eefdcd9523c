/**
 * The one walk of a flow graph, shared by the upload check (`upload-checks.ts`: cycles,
 * reachability, what Script steps publish upstream of a mapping) and the run plans (`plan.ts`:
 * the order steps run in, the Script steps upstream of an engine). Both read the graph as a
 * successor map built by {@link successors}, so they agree on which edges count. Every walk is
 * iterative, so a long chain of steps cannot overflow the stack.
 */
import type { FlowGraph } from '../configuration/model.js';
import type { Readable } from '../configuration/readable.js';

/** The successors of every node of a graph, by node id. */
export type Successors = ReadonlyMap<string, readonly string[]>;

/**
 * The successor lists of a graph as far as it could be read: an entry for every node, holding
 * the edges from it that could be read and that lead to an existing node, in document order.
 * Edges from or to an unknown node id count for nothing (the upload check reports them). A
 * valid `FlowGraph` is read in full.
 */
export function successors(graph: Readable<FlowGraph>): Map<string, string[]> {
  const nodes = graph.nodes ?? {};
  const next = new Map<string, string[]>(Object.keys(nodes).map((id) => [id, []]));
  for (const [from, tos] of Object.entries(graph.edges ?? {})) {
    const list = next.get(from);
    if (list === undefined || tos === null || tos === undefined) continue;
    for (const to of tos) if (to !== null && Object.hasOwn(nodes, to)) list.push(to);
  }
  return next;
}

/** Returns one cycle as a list of node ids (first id repeated at the end), or undefined. */
export function findCycle(next: Successors): string[] | undefined {
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

/** Ids of the nodes reachable from `start`, `start` included. */
export function reachableFrom(next: Successors, start: string): Set<string> {
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
 * The nodes reachable from `start` in topological order (each after every node before it).
 * Expects an acyclic graph, as the upload check makes sure.
 */
export function orderFrom(next: Successors, start: string): string[] {
  // Depth-first post-order, reversed: a node comes before everything that follows it.
  const order: string[] = [];
  const seen = new Set<string>([start]);
  const stack: { id: string; child: number }[] = [{ id: start, child: 0 }];
  for (let top = stack.at(-1); top !== undefined; top = stack.at(-1)) {
    const child = next.get(top.id)?.[top.child];
    top.child += 1;
    if (child === undefined) {
      order.push(top.id);
      stack.pop();
    } else if (!seen.has(child)) {
      seen.add(child);
      stack.push({ id: child, child: 0 });
    }
  }
  return order.reverse();
}

/** Ids of the nodes from which `id` can be reached (`id` itself only on a cycle). */
export function ancestors(next: Successors, id: string): Set<string> {
  const previous = new Map<string, string[]>();
  for (const [from, tos] of next) {
    for (const to of tos) {
      const list = previous.get(to);
      if (list === undefined) previous.set(to, [from]);
      else list.push(from);
    }
  }
  const seen = new Set<string>();
  const queue = [...(previous.get(id) ?? [])];
  for (let node = queue.pop(); node !== undefined; node = queue.pop()) {
    if (seen.has(node)) continue;
    seen.add(node);
    queue.push(...(previous.get(node) ?? []));
  }
  return seen;
}
