/**
 * The changes of a configuration that could break the data stored under the one before it
 * (docs/adr/0018-keep-data-safety.md): what an upload that keeps the processing data must ask
 * the store about. Safe whatever is stored: a new entity, a new optional attribute, a mandatory
 * flag loosened, and every change outside the entities and the journal definition's fields
 * (rules, lookups, flows, calendars...), since stored records are re-read under the new rules
 * only when they are processed. Risky, and blocking only when stored data is concerned:
 * - an entity removed (or a ledger entity switched off): any stored record of it;
 * - an attribute removed or retyped: a stored record of its entity with a value for it;
 * - an attribute made mandatory: a stored record of its entity without a value;
 * - a new mandatory attribute: any stored record of its entity;
 * - a journal definition field removed, retyped or given another role: any stored journal when a
 *   column of the journal holds the field, else a stored line whose record has a value for it
 *   (journal lines are read back through the current definition, `accounting/line-record.ts`).
 */
import { isColumnRole } from '../configuration/journal-roles.js';
import type { StoredDataRisk } from '../configuration/keep-data.js';
import type { Configuration, JournalField } from '../configuration/model.js';
import type { EntityAttribute, EntityDefinition } from './entity.js';
import { entitiesOf } from './from-configuration.js';

/** Where an entity and its attributes are in a configuration, as JSON Pointers. */
interface Place {
  entity: string;
  attribute(name: string): string;
}

function indexPath(base: string, names: readonly string[], name: string): string {
  const i = names.indexOf(name);
  return i < 0 ? base : `${base}/${i}`;
}

function placeOf(configuration: Configuration, entity: EntityDefinition): Place {
  if (entity.kind === 'businessEvent' || entity.kind === 'businessEventRollback') {
    const names = (configuration.businessEventDefinition.attributes ?? []).map((a) => a.name);
    return {
      entity: '/businessEventDefinition',
      attribute: (name) => indexPath('/businessEventDefinition/attributes', names, name),
    };
  }
  if (entity.kind === 'journal') {
    const names = (configuration.journalDefinition.fields ?? []).map((f) => f.name);
    return {
      entity: '/journalDefinition',
      attribute: (name) => indexPath('/journalDefinition/fields', names, name),
    };
  }
  const i = configuration.entities.findIndex(
    (e) => e.namespace === entity.namespace && e.name === entity.name,
  );
  const names = (configuration.entities[i]?.attributes ?? []).map((a) => a.name);
  return {
    entity: `/entities/${i}`,
    attribute: (name) => indexPath(`/entities/${i}/attributes`, names, name),
  };
}

function typeOf(attribute: EntityAttribute): string {
  return attribute.type === 'LIST' ? `LIST of ${attribute.elementType ?? 'TEXT'}` : attribute.type;
}

function keyOf(entity: Pick<EntityDefinition, 'namespace' | 'name'>): string {
  return `${entity.namespace}/${entity.name}`;
}

function entityRisks(stored: Configuration, candidate: Configuration): StoredDataRisk[] {
  const risks: StoredDataRisk[] = [];
  const after = new Map(entitiesOf(candidate).map((e) => [keyOf(e), e]));
  for (const before of entitiesOf(stored)) {
    const label = keyOf(before);
    const records = { namespace: before.namespace, entity: before.name };
    const now = after.get(label);
    if (now === undefined) {
      risks.push({
        path: placeOf(stored, before).entity,
        reason: `entity ${label} is removed while records of it are stored`,
        test: { kind: 'records', ...records },
      });
      continue;
    }
    const place = placeOf(candidate, now);
    const attributes = new Map(now.attributes.map((a) => [a.name, a]));
    for (const old of before.attributes) {
      const attribute = attributes.get(old.name);
      const test = { ...records, attribute: old.name };
      if (attribute === undefined) {
        risks.push({
          path: placeOf(stored, before).attribute(old.name),
          reason: `attribute ${old.name} of ${label} is removed while stored records have values for it`,
          test: { kind: 'records-with', ...test },
        });
      } else if (typeOf(attribute) !== typeOf(old)) {
        risks.push({
          path: `${place.attribute(old.name)}/type`,
          reason: `attribute ${old.name} of ${label} changes type from ${typeOf(old)} to ${typeOf(attribute)} while stored records have values for it`,
          test: { kind: 'records-with', ...test },
        });
      } else if (attribute.mandatory && !old.mandatory) {
        risks.push({
          path: `${place.attribute(old.name)}/mandatory`,
          reason: `attribute ${old.name} of ${label} becomes mandatory while stored records have no value for it`,
          test: { kind: 'records-without', ...test },
        });
      }
    }
    const known = new Set(before.attributes.map((a) => a.name));
    for (const attribute of now.attributes) {
      if (known.has(attribute.name) || !attribute.mandatory) continue;
      risks.push({
        path: place.attribute(attribute.name),
        reason: `attribute ${attribute.name} of ${label} is new and mandatory while records of ${label} are stored`,
        test: { kind: 'records', ...records },
      });
    }
  }
  return risks;
}

function journalFieldRisks(stored: Configuration, candidate: Configuration): StoredDataRisk[] {
  const risks: StoredDataRisk[] = [];
  const fields = candidate.journalDefinition.fields ?? [];
  const now = new Map(fields.map((f, i) => [f.name, { field: f, i }]));
  for (const [i, old] of (stored.journalDefinition.fields ?? []).entries()) {
    const found = now.get(old.name);
    let path: string;
    let change: string;
    if (found === undefined) {
      path = `/journalDefinition/fields/${i}`;
      change = 'is removed';
    } else if (found.field.type !== old.type) {
      path = `/journalDefinition/fields/${found.i}/type`;
      change = `changes type from ${old.type} to ${found.field.type}`;
    } else if (found.field.role !== old.role) {
      path = `/journalDefinition/fields/${found.i}/role`;
      change = `changes role from ${old.role ?? 'none'} to ${found.field.role ?? 'none'}`;
    } else continue;
    risks.push(journalFieldRisk(old, path, change));
  }
  return risks;
}

function journalFieldRisk(old: JournalField, path: string, change: string): StoredDataRisk {
  const name = `journal field ${old.name}`;
  if (old.role !== undefined && isColumnRole(old.role)) {
    return { path, reason: `${name} ${change} while stored journals use it`, test: { kind: 'journals' } };
  }
  return {
    path,
    reason: `${name} ${change} while stored journal lines have values for it`,
    test: { kind: 'lines-with', field: old.name },
  };
}

/**
 * The risky changes from `stored` to `candidate` (see the header), each with the JSON Pointer of
 * the change and the test that tells whether the stored data forbids it. Direct journal records
 * are records of `ledger/journal` and count as entity records. Pure; expects two configurations
 * that passed the upload checks.
 */
export function storedDataRisksOf(stored: Configuration, candidate: Configuration): StoredDataRisk[] {
  return [...entityRisks(stored, candidate), ...journalFieldRisks(stored, candidate)];
}
