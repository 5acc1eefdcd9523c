/**
 * The upload checks of the `entities` section: the ledger namespace is reserved, entities are
 * unique per namespace, attribute names are unique per entity, and an attribute type's members
 * fit its `typeName`.
 */
import { at } from './configuration-errors.js';
import {
  type EntityAttributeType,
  LEDGER_NAMESPACE,
  LIST_TYPE,
  PRIMITIVE_TYPE,
  PRIMITIVE_TYPE_NAMES,
} from './model.js';
import type { Readable } from './readable.js';
import {
  type ConfigurationCheck,
  checkUnique,
  type ReadableConfiguration,
  type Report,
  readable,
  text,
} from './semantic-check.js';

/** The checks of the entities section, in the order their problems are listed. */
export const ENTITY_CHECKS: readonly ConfigurationCheck[] = [{ section: 'entities', check: checkEntities }];

/**
 * An entity as the messages name it, `namespace/name`: the key `entityKey` of
 * `modules/entities` makes, written again because that module reads this one.
 */
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
