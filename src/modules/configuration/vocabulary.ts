/**
 * The words of the Configuration Data document (docs/reference.md, Configuration Data): its
 * format label, the closed enumerations its fields take, and the names of the built-in ledger
 * entities. The schemas (`model.ts`, which re-exports all of it) and the accounting rules read
 * them from here.
 */
import type { JournalFieldRole } from './journal-roles.js';

/** The configuration format label this service writes. */
export const CONFIGURATION_FORMAT_VERSION = 'v20230211';

/** Every configuration format label an upload may carry. */
export const SUPPORTED_CONFIGURATION_VERSIONS = [CONFIGURATION_FORMAT_VERSION] as const;

// ---------------------------------------------------------------------------------------------
// Enumerations
// ---------------------------------------------------------------------------------------------

export const JOURNAL_TYPE_BEHAVIORS = ['PERMANENT', 'REVERSING'] as const;
export type JournalTypeBehavior = (typeof JOURNAL_TYPE_BEHAVIORS)[number];

export const REVERSING_DATES = ['NEXT_DAY'] as const;

export const DEBIT_CREDIT_VALUES = ['DR', 'CR'] as const;
export type DebitCredit = (typeof DEBIT_CREDIT_VALUES)[number];

/**
 * AUTO flips a negative amount, POS/NEG patterns apply to one sign only
 * (docs/domain/accounting.md).
 */
export const AMOUNT_SIGNAGES = ['AUTO', 'POS', 'NEG'] as const;
export type AmountSignage = (typeof AMOUNT_SIGNAGES)[number];

export const BUSINESS_EVENT_ATTRIBUTE_ROLES = ['event_type', 'effective_date', 'attribute', 'node'] as const;
export type BusinessEventAttributeRole = (typeof BUSINESS_EVENT_ATTRIBUTE_ROLES)[number];

export const BUSINESS_EVENT_ATTRIBUTE_TYPES = ['text', 'date', 'decimal'] as const;
export type BusinessEventAttributeType = (typeof BUSINESS_EVENT_ATTRIBUTE_TYPES)[number];

export type { JournalFieldRole };

export const JOURNAL_FIELD_TYPES = ['date', 'text', 'amount', 'uuid', 'integer'] as const;
export type JournalFieldType = (typeof JOURNAL_FIELD_TYPES)[number];

export const BUSINESS_CALENDAR_STATUSES = ['ACTIVE', 'INACTIVE'] as const;

export const FISCAL_CALENDAR_TYPES = ['gregorian'] as const;

export const FLOW_VERSION_STATUSES = ['Draft', 'Published'] as const;
export type FlowVersionStatus = (typeof FLOW_VERSION_STATUSES)[number];

/**
 * `none` keeps a journal in a closed period an error; `firstOpenPeriod` moves its core date to the
 * first day of the earliest open period, with flag `posting-date-override`
 * (docs/domain/accounting.md, Posting date override).
 */
export const OVERRIDE_POSTING_DATES = ['none', 'firstOpenPeriod'] as const;
export type OverridePostingDate = (typeof OVERRIDE_POSTING_DATES)[number];

/**
 * The primitive types of the product's own export (`{ "typeName": "PrimitiveType", "primitive":
 * "TEXT" }`), also the primitives a flow script may publish.
 */
export const PRIMITIVE_TYPE_NAMES = [
  'TEXT',
  'DATE',
  'DATETIME',
  'INTEGER',
  'DECIMAL',
  'AMOUNT',
  'BOOLEAN',
  'UUID',
] as const;
export type PrimitiveTypeName = (typeof PRIMITIVE_TYPE_NAMES)[number];

/** The `typeName` of a scalar attribute type in the product's canonical form. */
export const PRIMITIVE_TYPE = 'PrimitiveType';

/** The `typeName` of a list attribute type. */
export const LIST_TYPE = 'ListType';

/**
 * Scalar type names of the shorthand form `{ "typeName": "TEXT" }`: the primitives in upper case
 * and the lower-case spellings that business event and journal fields use.
 */
export const ENTITY_SCALAR_TYPE_NAMES = [
  'TEXT',
  'text',
  'DATE',
  'date',
  'DATETIME',
  'INTEGER',
  'integer',
  'DECIMAL',
  'decimal',
  'AMOUNT',
  'amount',
  'BOOLEAN',
  'UUID',
  'uuid',
] as const;
export type EntityScalarTypeName = (typeof ENTITY_SCALAR_TYPE_NAMES)[number];

/** Every `typeName` of an entity attribute: the canonical two first, then the shorthand names. */
export const ENTITY_TYPE_NAMES = [PRIMITIVE_TYPE, LIST_TYPE, ...ENTITY_SCALAR_TYPE_NAMES] as const;
export type EntityTypeName = (typeof ENTITY_TYPE_NAMES)[number];

export const FLOW_STEP_TYPES = ['Input', 'Script', 'AccountingEngine', 'JournalProcessor'] as const;
export type FlowStepType = (typeof FLOW_STEP_TYPES)[number];

export const MAPPING_SOURCE_GROUPS = ['INPUT', 'SCRIPT'] as const;
export type MappingSourceGroup = (typeof MAPPING_SOURCE_GROUPS)[number];

/**
 * The namespace of the built-in entities `businessEvent` and `journal` (docs/reference.md,
 * Entities).
 */
export const LEDGER_NAMESPACE = 'ledger';
export const LEDGER_ENTITY_NAMES = ['businessEvent', 'journal'] as const;

/** Name of the ledger entity whose fields are `businessEventDefinition.attributes`. */
export const BUSINESS_EVENT_ENTITY_NAME: (typeof LEDGER_ENTITY_NAMES)[0] = LEDGER_ENTITY_NAMES[0];

/** Name of the ledger entity whose fields are the sender-supplied `journalDefinition.fields`. */
export const JOURNAL_ENTITY_NAME: (typeof LEDGER_ENTITY_NAMES)[1] = LEDGER_ENTITY_NAMES[1];

/**
 * Name of the ledger entity that rolls business events back (docs/domain/accounting.md, Rollback
 * of business events): its fields are those of `ledger/businessEvent`, and each record withdraws
 * the journals of an identical event processed before. Not in {@link LEDGER_ENTITY_NAMES}, the
 * built-in entities a flow may read: a rollback record is never an input of a flow, it names the
 * event a flow built.
 */
export const BUSINESS_EVENT_ROLLBACK_ENTITY_NAME = 'businessEventRollback';
