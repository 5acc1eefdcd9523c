/**
 * The upload checks of `nodeValues` and `nodes`: unique field names and values, real IANA time
 * zones, unique nodes, node fields that are nodeValues fields with allowed values and exactly
 * the node-role attributes of the business event definition, and node configurations that name
 * an accounting configuration.
 */
import { at } from './configuration-errors.js';
import {
  type ConfigurationCheck,
  checkReferences,
  checkUnique,
  members,
  namesOf,
  type ReadableConfiguration,
  type Report,
  readable,
  text,
  uniqueNames,
} from './semantic-check.js';

/** The checks of the node sections, in the order their problems are listed. */
export const NODE_CHECKS: readonly ConfigurationCheck[] = [
  { section: 'nodeValues', check: checkNodeValues },
  { section: 'nodes', check: checkNodes },
  { section: 'nodes', check: checkNodeFieldValues },
  { section: 'nodes', check: checkNodeFieldAttributes },
  { section: 'nodes', check: checkNodeAccountingConfigurations },
];

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
