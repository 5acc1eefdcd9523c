import type { Services } from '../../composition/services.js';
import type { JournalFieldRole } from '../../modules/configuration/journal-roles.js';
import type { Configuration } from '../../modules/configuration/model.js';
import { type Html, html } from './html.js';

/**
 * The journal definition's fields as the data pages name them: by their labels, which the
 * configuration gives for people, rather than by the keys records use.
 */
export interface JournalFields {
  /** The label of a journal field, else of the business event attribute of that name, else the name. */
  label(name: string): string;
  /** The name of the first field with this role. */
  fieldOf(role: JournalFieldRole): string | undefined;
  /** The label of the first field with this role, else `fallback`. */
  labelOf(role: JournalFieldRole, fallback: string): string;
  /** The role of a field, if it has one. */
  roleOf(name: string): JournalFieldRole | undefined;
  /** Every field name, in configured order. */
  names: readonly string[];
  /** The names of the fields with role `node`, in configured order. */
  nodeFields: readonly string[];
}

/** The journal fields of a configuration; a field without a label is shown by its name. */
export function journalFieldsOf(configuration: Configuration): JournalFields {
  const fields = configuration.journalDefinition.fields ?? [];
  const labels = new Map<string, string>();
  for (const attribute of configuration.businessEventDefinition.attributes ?? []) {
    if (attribute.label !== undefined && attribute.label !== '') labels.set(attribute.name, attribute.label);
  }
  for (const field of fields) {
    if (field.label !== undefined && field.label !== '') labels.set(field.name, field.label);
  }
  const roles = new Map<string, JournalFieldRole>();
  const byRole = new Map<JournalFieldRole, string>();
  for (const field of fields) {
    if (field.role === undefined) continue;
    if (!roles.has(field.name)) roles.set(field.name, field.role);
    if (!byRole.has(field.role)) byRole.set(field.role, field.name);
  }
  const label = (name: string) => labels.get(name) ?? name;
  return {
    label,
    fieldOf: (role) => byRole.get(role),
    labelOf: (role, fallback) => {
      const name = byRole.get(role);
      return name === undefined ? fallback : label(name);
    },
    roleOf: (name) => roles.get(name),
    names: [...new Set(fields.map((field) => field.name))],
    nodeFields: [...new Set(fields.filter((field) => field.role === 'node').map((field) => field.name))],
  };
}

/** The journal fields of the current configuration, the one journals are read with. */
export async function currentJournalFields(services: Pick<Services, 'snapshots'>): Promise<JournalFields> {
  return journalFieldsOf((await services.snapshots.current()).stored.configuration);
}

/**
 * A node's field values by label, in the journal definition's order (fields it does not name
 * last, by name), each pair kept together so that a long node wraps between pairs.
 */
export function nodeHtml(node: Readonly<Record<string, string>>, fields: JournalFields): Html {
  const known = fields.nodeFields.filter((name) => Object.hasOwn(node, name));
  const others = Object.keys(node)
    .filter((name) => !known.includes(name))
    .sort();
  return html`<span class="node">${[...known, ...others].map(
    (name) => html`<span class="pair"><span class="muted">${fields.label(name)}</span> ${node[name]}</span>`,
  )}</span>`;
}
