import { attributeTypeNameOf, elementTypeNameOf } from '../configuration/document.js';
import { isMandatorySenderRole, JOURNAL_ROLES } from '../configuration/journal-roles.js';
import {
  BUSINESS_EVENT_ENTITY_NAME,
  BUSINESS_EVENT_ROLLBACK_ENTITY_NAME,
  type BusinessEventAttribute,
  type BusinessEventAttributeRole,
  type Configuration,
  type Entity,
  JOURNAL_ENTITY_NAME,
  type JournalField,
  LEDGER_NAMESPACE,
} from '../configuration/model.js';
import { type EntityAttribute, type EntityDefinition, type FieldType, normalizeFieldType } from './entity.js';

/**
 * The ingestion targets of a configuration (docs/reference.md, Entities): user entities from
 * `entities`, and the ledger entities derived from `businessEventDefinition` (business events and
 * their rollbacks) and `journalDefinition`.
 *
 * Mandatory flags of the ledger entities (the configuration carries none; these are our choices,
 * also in docs/adr/0005-entity-validation.md):
 * - `ledger/businessEvent`: attributes with role `event_type`, `effective_date` or `node` are
 *   mandatory; role `attribute` is optional, including the amount, currency and posting date
 *   fields of posting patterns. Which attributes an event needs depends on its event type, so a
 *   missing one is a processing error of that event (docs/domain/accounting.md), not a rejected
 *   chunk.
 * - `ledger/businessEventRollback`: as `ledger/businessEvent`.
 * - `ledger/journal` (docs/domain/accounting.md, Direct journals): a field of a role the sender
 *   supplies is mandatory or optional as the journal roles table says (`JOURNAL_ROLES` in
 *   configuration/journal-roles.ts); fields without a role are optional; the fields of the roles
 *   the system fills are not fields of the entity at all.
 */

/** Business event roles whose attribute every event must carry. */
const MANDATORY_BUSINESS_EVENT_ROLES: ReadonlySet<BusinessEventAttributeRole> = new Set([
  'event_type',
  'effective_date',
  'node',
]);

/** `temporalityType` and `type` that the entity endpoints show for the two ledger entities. */
const LEDGER_TEMPORALITY_TYPE = 'Transaction';
const LEDGER_ENTITY_TYPE = 'SystemEntity';

function fieldTypeOf(typeName: string | undefined, where: string): FieldType {
  const type = typeName === undefined ? undefined : normalizeFieldType(typeName);
  if (type === undefined) {
    // The upload validation only admits known type names (configuration/validate.ts), so this is a bug.
    throw new Error(`${where} has type "${String(typeName)}", which is not a known field type.`);
  }
  return type;
}

function userEntityOf(entity: Entity): EntityDefinition {
  const label = `Entity ${entity.namespace}/${entity.name}`;
  return {
    namespace: entity.namespace,
    name: entity.name,
    description: entity.description ?? '',
    temporalityType: entity.temporalityType,
    type: entity.type,
    kind: 'user',
    attributes: entity.attributes.map((attribute) => {
      const where = `${label} attribute "${attribute.name}"`;
      // Canonical (`PrimitiveType` + `primitive`) and shorthand (`TEXT`) forms map alike.
      const type = fieldTypeOf(attributeTypeNameOf(attribute.type), where);
      const defined: EntityAttribute = {
        name: attribute.name,
        label: attribute.label ?? attribute.name,
        mandatory: attribute.mandatory ?? false,
        type,
      };
      if (type === 'LIST') defined.elementType = fieldTypeOf(elementTypeNameOf(attribute.type), where);
      return defined;
    }),
  };
}

function businessEventAttributeOf(attribute: BusinessEventAttribute): EntityAttribute {
  return {
    name: attribute.name,
    label: attribute.label ?? attribute.name,
    mandatory: MANDATORY_BUSINESS_EVENT_ROLES.has(attribute.role),
    type: fieldTypeOf(attribute.type, `Business event attribute "${attribute.name}"`),
    role: attribute.role,
  };
}

function journalAttributeOf(field: JournalField): EntityAttribute {
  const defined: EntityAttribute = {
    name: field.name,
    label: field.label ?? field.name,
    mandatory: field.role !== undefined && isMandatorySenderRole(field.role),
    type: fieldTypeOf(field.type, `Journal field "${field.name}"`),
  };
  if (field.role !== undefined) defined.role = field.role;
  return defined;
}

/**
 * Lists every ingestion target of a configuration: the user entities of `entities` in configured
 * order, then `ledger/businessEvent` and `ledger/businessEventRollback` (fields: the
 * `businessEventDefinition.attributes`) and
 * `ledger/journal` (fields: the `journalDefinition` fields whose role is not system-filled), each
 * with attributes in configured order and types normalized. A ledger entity is left out while its
 * definition is inactive (`active: false`) or has no attributes or fields, so that sessions cannot
 * target an unconfigured entity. Mandatory flags follow the module comment; a user attribute
 * without `mandatory` is optional and without `label` is labelled by its name. Pure; it expects a
 * configuration that passed the upload validation and throws only on a type name that validation
 * would have refused.
 */
export function entitiesOf(configuration: Configuration): EntityDefinition[] {
  const entities = configuration.entities.map(userEntityOf);
  const events = configuration.businessEventDefinition;
  if (events.active !== false && events.attributes !== undefined && events.attributes.length > 0) {
    entities.push({
      namespace: LEDGER_NAMESPACE,
      name: BUSINESS_EVENT_ENTITY_NAME,
      description: 'Business events; their fields are the attributes of businessEventDefinition.',
      temporalityType: LEDGER_TEMPORALITY_TYPE,
      type: LEDGER_ENTITY_TYPE,
      kind: 'businessEvent',
      attributes: events.attributes.map(businessEventAttributeOf),
    });
    // Same attributes, same validation: a rollback record is the event it rolls back, sent again
    // (docs/domain/accounting.md, Rollback of business events).
    entities.push({
      namespace: LEDGER_NAMESPACE,
      name: BUSINESS_EVENT_ROLLBACK_ENTITY_NAME,
      description:
        'Rollbacks of business events: each record repeats a business event processed before, and the journals that event produced are withdrawn by reversal journals.',
      temporalityType: LEDGER_TEMPORALITY_TYPE,
      type: LEDGER_ENTITY_TYPE,
      kind: 'businessEventRollback',
      attributes: events.attributes.map(businessEventAttributeOf),
    });
  }
  const journals = configuration.journalDefinition;
  if (journals.active !== false && journals.fields !== undefined && journals.fields.length > 0) {
    entities.push({
      namespace: LEDGER_NAMESPACE,
      name: JOURNAL_ENTITY_NAME,
      description:
        'Journal lines from an upstream system; their fields are the journalDefinition fields a sender supplies.',
      temporalityType: LEDGER_TEMPORALITY_TYPE,
      type: LEDGER_ENTITY_TYPE,
      kind: 'journal',
      attributes: journals.fields
        .filter((field) => field.role === undefined || JOURNAL_ROLES[field.role].supplier === 'sender')
        .map(journalAttributeOf),
    });
  }
  return entities;
}
