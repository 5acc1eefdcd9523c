/**
 * TypeBox schemas and static types of the Configuration Data document (docs/reference.md,
 * Configuration Data). The OpenAPI document is generated from these schemas, so every field
 * carries a description; `validate-structure.ts` compiles them with Ajv for the upload. Over 500
 * lines because it is one document's schema, mostly field descriptions, read top to bottom as
 * the document is.
 *
 * Required versus optional: a field is required when the service cannot interpret the element
 * without it (names, codes, cross-references, enumerations that drive accounting). Free text
 * (`description`, `label`), bookkeeping dates (`effectiveFrom`, `effectiveTo`), `source` and
 * numeric or boolean settings with a neutral default (`graceDays` 0, `graceHours` 0,
 * `businessDateShift` 0, `mandatory` false, `contextMapping` false, `amountSignage` AUTO,
 * `overridePostingDate` none, `active` true) are optional, because upstream serializers commonly
 * omit null or default members. Defaults are documented, not materialised: the stored document is
 * exactly what was uploaded, so a download returns the same content.
 *
 * Every object schema is closed (`additionalProperties: false`): unknown members are an error
 * (docs/reference.md, Conventions). Closed enumerations are the sets the product documents and the
 * accounting rules use; where the product's examples show only one value of an open set
 * (`temporalityType`, entity `type`, `source`) the field is a free non-empty string.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { JOURNAL_FIELD_ROLES, type JournalFieldRole } from './journal-roles.js';

/** The configuration format label this service writes. */
export const CONFIGURATION_FORMAT_VERSION = 'v20230211';

/** Every configuration format label an upload may carry. */
export const SUPPORTED_CONFIGURATION_VERSIONS = [CONFIGURATION_FORMAT_VERSION] as const;

/**
 * A closed string enumeration as a plain JSON Schema `enum`. A TypeBox union of literals would
 * become `anyOf` of `const`, whose Ajv errors are one per member; `enum` yields one error that
 * lists the allowed values.
 */
function stringEnum<const T extends readonly string[]>(values: T, description: string) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], description });
}

/** A non-empty string with a description. */
function name(description: string) {
  return Type.String({ minLength: 1, description });
}

/** A calendar day `YYYY-MM-DD`; the `date` format of ajv-formats rejects days like 2026-02-30. */
function day(description: string) {
  return Type.String({ format: 'date', description, examples: ['2026-01-01'] });
}

/** A map from free string keys to values of one schema (JSON object with arbitrary keys). */
function map<T extends TSchema>(value: T, description: string) {
  return Type.Record(Type.String(), value, { description });
}

const closed = { additionalProperties: false } as const;

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

// ---------------------------------------------------------------------------------------------
// accountLookups
// ---------------------------------------------------------------------------------------------

export const AccountLookupPatternSchema = Type.Object(
  { account: name('Account number or code a posting with this posting code goes to.') },
  { ...closed, description: 'One account candidate; the first pattern of a lookup is used.' },
);
export type AccountLookupPattern = Static<typeof AccountLookupPatternSchema>;

export const AccountLookupSchema = Type.Object(
  {
    accountLookupPatterns: Type.Array(AccountLookupPatternSchema, {
      description: 'Account candidates in order of preference.',
    }),
    postingCode: name('Posting code referenced by posting patterns; unique within the section.'),
  },
  { ...closed, description: 'Maps a posting code to the account it posts to.' },
);
export type AccountLookup = Static<typeof AccountLookupSchema>;

// ---------------------------------------------------------------------------------------------
// accountingConfigurations
// ---------------------------------------------------------------------------------------------

export const AccountingConfigurationSchema = Type.Object(
  {
    name: name('Accounting basis name (for example IFRS); unique within the section.'),
    description: Type.Optional(Type.String({ description: 'Free text.' })),
    businessCalendarName: name('Name of a `businessCalendars` entry.'),
    dimensionSetName: name('Name of a `dimensionSets` entry.'),
    fiscalCalendarName: name('Name of a `fiscalCalendars` entry.'),
  },
  { ...closed, description: 'An accounting basis with its calendars and dimensions.' },
);
export type AccountingConfiguration = Static<typeof AccountingConfigurationSchema>;

// ---------------------------------------------------------------------------------------------
// businessCalendars
// ---------------------------------------------------------------------------------------------

export const BusinessCalendarSchema = Type.Object(
  {
    name: name('Business calendar name; unique within the section.'),
    effectiveFrom: Type.Optional(day('First day the calendar applies.')),
    effectiveTo: Type.Optional(day('Last day the calendar applies; open-ended when omitted.')),
    status: Type.Optional(stringEnum(BUSINESS_CALENDAR_STATUSES, 'Calendar status; ACTIVE when omitted.')),
  },
  { ...closed, description: 'Working-day calendar (weekends are non-working).' },
);
export type BusinessCalendar = Static<typeof BusinessCalendarSchema>;

// ---------------------------------------------------------------------------------------------
// businessDateSettings (object)
// ---------------------------------------------------------------------------------------------

export const BusinessDateSettingsSchema = Type.Object(
  {
    businessDateShift: Type.Optional(
      Type.Integer({
        description: 'Days added to the local date of a node to get its business date; 0 when omitted.',
      }),
    ),
  },
  { ...closed, description: 'Instance-wide business date settings.' },
);
export type BusinessDateSettings = Static<typeof BusinessDateSettingsSchema>;

// ---------------------------------------------------------------------------------------------
// businessEventDefinition (object)
// ---------------------------------------------------------------------------------------------

export const BusinessEventAttributeSchema = Type.Object(
  {
    name: name('Attribute name; the field name of `ledger/businessEvent` records.'),
    label: Type.Optional(Type.String({ description: 'Human-readable label.' })),
    role: stringEnum(BUSINESS_EVENT_ATTRIBUTE_ROLES, 'What the attribute means to the accounting engine.'),
    source: Type.Optional(name('Where the value comes from (`input`).')),
    type: stringEnum(BUSINESS_EVENT_ATTRIBUTE_TYPES, 'Value type of the attribute.'),
  },
  { ...closed, description: 'One attribute of a business event.' },
);
export type BusinessEventAttribute = Static<typeof BusinessEventAttributeSchema>;

export const BusinessEventDefinitionSchema = Type.Object(
  {
    active: Type.Optional(
      Type.Boolean({ description: 'Whether the definition is in use; true when omitted.' }),
    ),
    effectiveFrom: Type.Optional(day('First day the definition applies.')),
    attributes: Type.Optional(
      Type.Array(BusinessEventAttributeSchema, {
        description: 'Fields of `ledger/businessEvent`; exactly one has role `event_type`.',
      }),
    ),
  },
  { ...closed, description: 'Structure of business events; `{}` when not configured.' },
);
export type BusinessEventDefinition = Static<typeof BusinessEventDefinitionSchema>;

// ---------------------------------------------------------------------------------------------
// businessEventTypes
// ---------------------------------------------------------------------------------------------

export const BusinessEventTypeSchema = Type.Object(
  {
    name: name('Event type name, the value of the `event_type` attribute; unique within the section.'),
    description: Type.Optional(Type.String({ description: 'Free text.' })),
  },
  { ...closed, description: 'A kind of business event.' },
);
export type BusinessEventType = Static<typeof BusinessEventTypeSchema>;

// ---------------------------------------------------------------------------------------------
// dimensionSets
// ---------------------------------------------------------------------------------------------

export const DimensionSetSchema = Type.Object(
  {
    name: name('Dimension set name; unique within the section.'),
    description: Type.Optional(Type.String({ description: 'Free text.' })),
    attributes: Type.Array(name('Field name.'), { description: 'Field names that form the dimensions.' }),
  },
  { ...closed, description: 'A set of reporting dimensions.' },
);
export type DimensionSet = Static<typeof DimensionSetSchema>;

// ---------------------------------------------------------------------------------------------
// entities
// ---------------------------------------------------------------------------------------------

export const PrimitiveTypeSchema = Type.Object(
  {
    typeName: Type.Literal(PRIMITIVE_TYPE, { description: 'Marks a primitive type.' }),
    primitive: stringEnum(PRIMITIVE_TYPE_NAMES, 'The primitive type.'),
  },
  { ...closed, description: 'A primitive type in the canonical form, as the product exports it.' },
);
export type PrimitiveType = Static<typeof PrimitiveTypeSchema>;

export const EntityAttributeTypeSchema = Type.Object(
  {
    typeName: stringEnum(
      ENTITY_TYPE_NAMES,
      `\`${PRIMITIVE_TYPE}\` (canonical; the type is in \`primitive\`), \`${LIST_TYPE}\` (a JSON array), or a primitive type name as shorthand (\`{ "typeName": "TEXT" }\`).`,
    ),
    primitive: Type.Optional(
      stringEnum(
        PRIMITIVE_TYPE_NAMES,
        `The primitive type; present exactly when typeName is \`${PRIMITIVE_TYPE}\`.`,
      ),
    ),
    elementType: Type.Optional(
      Type.Union([stringEnum(ENTITY_SCALAR_TYPE_NAMES, 'A primitive type name.'), PrimitiveTypeSchema], {
        description: `Type of every element of a \`${LIST_TYPE}\` field, as a name (\`TEXT\`) or in the canonical form; TEXT when omitted.`,
      }),
    ),
  },
  {
    ...closed,
    description:
      'Type of an entity attribute. Canonical form `{ "typeName": "PrimitiveType", "primitive": "TEXT" }`; the shorthand `{ "typeName": "TEXT" }` is accepted too. A download returns each type as it was uploaded.',
  },
);
export type EntityAttributeType = Static<typeof EntityAttributeTypeSchema>;

export const EntityAttributeSchema = Type.Object(
  {
    name: name('Field name; unique within the entity.'),
    label: Type.Optional(Type.String({ description: 'Human-readable label.' })),
    mandatory: Type.Optional(
      Type.Boolean({ description: 'Whether a record must carry a non-null value; false when omitted.' }),
    ),
    source: Type.Optional(name('Where the value comes from (`input`).')),
    type: EntityAttributeTypeSchema,
  },
  { ...closed, description: 'One field of a user entity.' },
);
export type EntityAttribute = Static<typeof EntityAttributeSchema>;

export const EntitySchema = Type.Object(
  {
    name: name('Entity name; unique within its namespace.'),
    description: Type.Optional(Type.String({ description: 'Free text.' })),
    namespace: name('Namespace of the entity; `ledger` is reserved for the built-in entities.'),
    temporalityType: name('Temporality of the records (for example `Transaction`).'),
    type: name('Kind of entity (for example `DefinedEntity`).'),
    attributes: Type.Array(EntityAttributeSchema, { description: 'Fields of the entity, in order.' }),
  },
  { ...closed, description: 'A user entity that data can be ingested into.' },
);
export type Entity = Static<typeof EntitySchema>;

// ---------------------------------------------------------------------------------------------
// featureFlags (object)
// ---------------------------------------------------------------------------------------------

export const FeatureFlagsSchema = map(
  Type.Boolean({ description: 'Whether the flag is on.' }),
  'Feature flag name (`posting-date-override`, `flow-assistant`, `extracts-in-bulk`, `flow`) to on/off.',
);
export type FeatureFlags = Static<typeof FeatureFlagsSchema>;

// ---------------------------------------------------------------------------------------------
// fiscalCalendars
// ---------------------------------------------------------------------------------------------

export const FiscalCalendarSchema = Type.Object(
  {
    name: name('Fiscal calendar name; unique within the section.'),
    type: stringEnum(FISCAL_CALENDAR_TYPES, 'Calendar kind; `gregorian` periods are calendar months.'),
    active: Type.Optional(
      Type.Boolean({ description: 'Whether the calendar is in use; true when omitted.' }),
    ),
    effectiveFrom: Type.Optional(day('First day the calendar applies.')),
    endOfFirstYear: day('Last day of the first fiscal year.'),
    startYear: Type.Integer({ description: 'Fiscal year number of the first year.' }),
  },
  { ...closed, description: 'Fiscal calendar that defines accounting periods.' },
);
export type FiscalCalendar = Static<typeof FiscalCalendarSchema>;

// ---------------------------------------------------------------------------------------------
// flows
// ---------------------------------------------------------------------------------------------

export const EntityReferenceSchema = Type.Object(
  {
    namespace: name('Namespace of the entity (`ledger` for the built-in ones).'),
    name: name('Entity name.'),
  },
  { ...closed, description: 'Names an entity.' },
);
export type EntityReference = Static<typeof EntityReferenceSchema>;

export const InputStepSchema = Type.Object(
  {
    type: Type.Literal('Input', { description: 'Step type.' }),
    name: name('Step name.'),
    source: EntityReferenceSchema,
  },
  { ...closed, description: 'Feeds the flow with every accepted record of an entity.' },
);
export type InputStep = Static<typeof InputStepSchema>;

export const ScriptOutputSchema = Type.Object(
  {
    name: name('Name passed to `publish(name, value)`.'),
    type: Type.Object(
      {
        type: Type.Literal('Primitive', { description: 'Kind of output type.' }),
        primitive: stringEnum(PRIMITIVE_TYPE_NAMES, 'Primitive type of the value.'),
      },
      { ...closed, description: 'Type of the published value.' },
    ),
  },
  { ...closed, description: 'A value a script publishes.' },
);
export type ScriptOutput = Static<typeof ScriptOutputSchema>;

export const ScriptStepSchema = Type.Object(
  {
    type: Type.Literal('Script', { description: 'Step type.' }),
    name: name('Step name.'),
    script: Type.String({ description: 'Script text; reads `input` and calls `publish(name, value)`.' }),
    outputDefinition: Type.Array(ScriptOutputSchema, { description: 'Values the script publishes.' }),
  },
  { ...closed, description: 'Runs a script on each record.' },
);
export type ScriptStep = Static<typeof ScriptStepSchema>;

export const MappingSchema = Type.Object(
  {
    source: Type.Object(
      {
        group: stringEnum(MAPPING_SOURCE_GROUPS, '`INPUT` (the record) or `SCRIPT` (published values).'),
        path: Type.Array(name('Path segment.'), {
          minItems: 1,
          description: 'Path of the value in the group.',
        }),
      },
      { ...closed, description: 'Where the value comes from.' },
    ),
    target: Type.Object(
      {
        path: Type.Array(name('Path segment.'), {
          minItems: 1,
          description: 'Path in the business event; the first segment is an attribute name.',
        }),
      },
      { ...closed, description: 'Where the value goes.' },
    ),
    contextMapping: Type.Optional(
      Type.Boolean({ description: 'Whether the mapping sets flow context; false when omitted.' }),
    ),
  },
  { ...closed, description: 'Copies one value into the business event.' },
);
export type Mapping = Static<typeof MappingSchema>;

export const AccountingEngineStepSchema = Type.Object(
  {
    type: Type.Literal('AccountingEngine', { description: 'Step type.' }),
    name: name('Step name.'),
    mapping: Type.Array(MappingSchema, { description: 'How the business event is built.' }),
  },
  { ...closed, description: 'Builds a business event and runs the accounting engine on it.' },
);
export type AccountingEngineStep = Static<typeof AccountingEngineStepSchema>;

export const JournalProcessorStepSchema = Type.Object(
  {
    type: Type.Literal('JournalProcessor', { description: 'Step type.' }),
    name: name('Step name.'),
  },
  { ...closed, description: 'Posts the resulting journals.' },
);
export type JournalProcessorStep = Static<typeof JournalProcessorStepSchema>;

/** Discriminated by `type`; `validate.ts` reports only the errors of the branch `type` selects. */
export const FlowStepSchema = Type.Union(
  [InputStepSchema, ScriptStepSchema, AccountingEngineStepSchema, JournalProcessorStepSchema],
  { description: 'A flow step, discriminated by `type`.' },
);
export type FlowStep = Static<typeof FlowStepSchema>;

export const FlowNodeSchema = Type.Object(
  {
    x: Type.Number({ description: 'Horizontal position in the flow editor.' }),
    y: Type.Number({ description: 'Vertical position in the flow editor.' }),
    step: FlowStepSchema,
  },
  { ...closed, description: 'A node of the flow graph.' },
);
export type FlowNode = Static<typeof FlowNodeSchema>;

export const FlowGraphSchema = Type.Object(
  {
    edges: Type.Record(
      Type.String(),
      Type.Array(Type.String({ format: 'uuid', description: 'Id of a following node.' })),
      {
        description: 'Node id (UUID) to the ids of the nodes that follow it.',
        propertyNames: { format: 'uuid' },
      },
    ),
    nodes: Type.Record(Type.String(), FlowNodeSchema, {
      description: 'Node id (UUID) to the node.',
      propertyNames: { format: 'uuid' },
    }),
  },
  { ...closed, description: 'Directed acyclic graph of steps with exactly one Input step.' },
);
export type FlowGraph = Static<typeof FlowGraphSchema>;

export const FlowSchema = Type.Object(
  {
    name: name('Flow name; unique within the section.'),
    versionStatus: stringEnum(FLOW_VERSION_STATUSES, 'Only `Published` flows process records.'),
    graph: FlowGraphSchema,
  },
  { ...closed, description: 'A processing flow: a graph of steps that turns records into journals.' },
);
export type Flow = Static<typeof FlowSchema>;

// ---------------------------------------------------------------------------------------------
// journalDefinition (object)
// ---------------------------------------------------------------------------------------------

export const JournalFieldSchema = Type.Object(
  {
    name: name('Field name of journal lines; unique within the definition.'),
    label: Type.Optional(Type.String({ description: 'Human-readable label.' })),
    role: Type.Optional(
      stringEnum(
        JOURNAL_FIELD_ROLES,
        'What the field holds; a field without a role takes the BE attribute of the same name.',
      ),
    ),
    source: Type.Optional(name('Where the value comes from.')),
    type: stringEnum(JOURNAL_FIELD_TYPES, 'Value type of the field.'),
  },
  { ...closed, description: 'One field of a journal line.' },
);
export type JournalField = Static<typeof JournalFieldSchema>;

export const JournalDefinitionSchema = Type.Object(
  {
    active: Type.Optional(
      Type.Boolean({ description: 'Whether the definition is in use; true when omitted.' }),
    ),
    effectiveFrom: Type.Optional(day('First day the definition applies.')),
    fields: Type.Optional(
      Type.Array(JournalFieldSchema, { description: 'Fields of `ledger/journal` lines.' }),
    ),
    primaryKeys: Type.Optional(
      Type.Array(name('Field name.'), { description: 'Names of the fields that identify a line.' }),
    ),
  },
  { ...closed, description: 'Structure of journal lines; `{}` when not configured.' },
);
export type JournalDefinition = Static<typeof JournalDefinitionSchema>;

// ---------------------------------------------------------------------------------------------
// journalTypes
// ---------------------------------------------------------------------------------------------

export const JournalTypeSchema = Type.Object(
  {
    code: name('Journal type code; unique within the section.'),
    description: Type.Optional(Type.String({ description: 'Free text.' })),
    behavior: stringEnum(JOURNAL_TYPE_BEHAVIORS, 'Whether the journal stands or is reversed.'),
    reversingDate: Type.Optional(
      stringEnum(REVERSING_DATES, 'When the reversal is dated; present exactly for REVERSING types.'),
    ),
  },
  { ...closed, description: 'A journal type: whether its journals stand or are reversed.' },
);
export type JournalType = Static<typeof JournalTypeSchema>;

// ---------------------------------------------------------------------------------------------
// nodeValues, nodes
// ---------------------------------------------------------------------------------------------

export const NodeValueSchema = Type.Object(
  {
    fieldName: name('Node field name; unique within the section.'),
    values: Type.Array(name('Allowed value.'), { description: 'Values the node field may take.' }),
  },
  { ...closed, description: 'The allowed values of one node field.' },
);
export type NodeValue = Static<typeof NodeValueSchema>;

export const NodeConfigSchema = Type.Object(
  {
    accountingConfigName: name('Name of an `accountingConfigurations` entry active for the node.'),
    graceDays: Type.Optional(
      Type.Integer({ minimum: 0, description: 'Days the previous period stays open; 0 when omitted.' }),
    ),
    graceHours: Type.Optional(
      Type.Integer({ minimum: 0, description: 'Hours added to graceDays; 0 when omitted.' }),
    ),
    overridePostingDate: Type.Optional(
      stringEnum(
        OVERRIDE_POSTING_DATES,
        '`none` (closed period is an error) or `firstOpenPeriod` (move to the first open day); none when omitted.',
      ),
    ),
  },
  { ...closed, description: 'Assigns an accounting basis to a node.' },
);
export type NodeConfig = Static<typeof NodeConfigSchema>;

export const NodeSchema = Type.Object(
  {
    fields: map(name('Node field value.'), 'Node field name to its value; unique per node.'),
    timeZone: name('IANA time-zone name of the node (for example Europe/Amsterdam).'),
    nodeConfigs: Type.Array(NodeConfigSchema, { description: 'Accounting bases active for the node.' }),
  },
  { ...closed, description: 'A subledger node.' },
);
export type Node = Static<typeof NodeSchema>;

// ---------------------------------------------------------------------------------------------
// postingComponentIdentifications, postingComponents
// ---------------------------------------------------------------------------------------------

export const PostingComponentReferenceSchema = Type.Object(
  { postingComponentCode: name('Code of a `postingComponents` entry.') },
  { ...closed, description: 'Names a posting component.' },
);
export type PostingComponentReference = Static<typeof PostingComponentReferenceSchema>;

export const PostingComponentIdentificationSchema = Type.Object(
  {
    businessEventTypeName: name('Name of a `businessEventTypes` entry; unique within the section.'),
    postingComponents: Type.Array(PostingComponentReferenceSchema, {
      description: 'Posting components applied to events of this type.',
    }),
  },
  { ...closed, description: 'Which posting components an event type triggers.' },
);
export type PostingComponentIdentification = Static<typeof PostingComponentIdentificationSchema>;

export const PostingPatternSchema = Type.Object(
  {
    amountField: name('Business event attribute holding the amount.'),
    currencyField: name('Business event attribute holding the currency.'),
    postingCode: name('Posting code of an `accountLookups` entry.'),
    postingDateField: name('Business event attribute holding the posting date.'),
    amountSignage: Type.Optional(
      stringEnum(
        AMOUNT_SIGNAGES,
        'Sign handling: AUTO posts a negative amount as its absolute value on the other side; POS and NEG patterns apply only to positive or negative amounts; AUTO when omitted.',
      ),
    ),
    debitCredit: stringEnum(DEBIT_CREDIT_VALUES, 'Side the line posts to.'),
  },
  { ...closed, description: 'One journal line produced by a posting component.' },
);
export type PostingPattern = Static<typeof PostingPatternSchema>;

export const PostingComponentSchema = Type.Object(
  {
    code: name('Posting component code; unique within the section.'),
    description: Type.Optional(Type.String({ description: 'Free text.' })),
    accountingConfigName: name('Name of an `accountingConfigurations` entry.'),
    journalType: name('Code of a `journalTypes` entry.'),
    postingPatterns: Type.Array(PostingPatternSchema, { description: 'Lines the component produces.' }),
  },
  { ...closed, description: 'Turns a business event into journal lines for one accounting basis.' },
);
export type PostingComponent = Static<typeof PostingComponentSchema>;

// ---------------------------------------------------------------------------------------------
// configuration and document
// ---------------------------------------------------------------------------------------------

/** Section schemas in the order of the product's own export; also the canonical output order. */
const sections = {
  accountLookups: Type.Array(AccountLookupSchema, { description: 'Posting code to account.' }),
  accountingConfigurations: Type.Array(AccountingConfigurationSchema, { description: 'Accounting bases.' }),
  businessCalendars: Type.Array(BusinessCalendarSchema, { description: 'Working-day calendars.' }),
  businessDateSettings: BusinessDateSettingsSchema,
  businessEventDefinition: BusinessEventDefinitionSchema,
  businessEventTypes: Type.Array(BusinessEventTypeSchema, { description: 'Kinds of business events.' }),
  dimensionSets: Type.Array(DimensionSetSchema, { description: 'Reporting dimension sets.' }),
  entities: Type.Array(EntitySchema, { description: 'User entities.' }),
  featureFlags: FeatureFlagsSchema,
  fiscalCalendars: Type.Array(FiscalCalendarSchema, { description: 'Fiscal calendars.' }),
  flows: Type.Array(FlowSchema, { description: 'Processing flows.' }),
  journalDefinition: JournalDefinitionSchema,
  journalTypes: Type.Array(JournalTypeSchema, { description: 'Journal types.' }),
  nodeValues: Type.Array(NodeValueSchema, { description: 'Allowed values of node fields.' }),
  nodes: Type.Array(NodeSchema, { description: 'Subledger nodes.' }),
  postingComponentIdentifications: Type.Array(PostingComponentIdentificationSchema, {
    description: 'Event type to posting components.',
  }),
  postingComponents: Type.Array(PostingComponentSchema, { description: 'Posting components.' }),
};

/** The whole configuration as stored and downloaded: every section present (possibly empty). */
export const ConfigurationSchema = Type.Object(sections, {
  ...closed,
  description: 'All sections of the Configuration Data.',
});
export type Configuration = Static<typeof ConfigurationSchema>;

/** The configuration as uploaded: a missing section means an empty one; unknown sections fail. */
export const ConfigurationInputSchema = Type.Partial(ConfigurationSchema, {
  ...closed,
  description: 'Sections of the Configuration Data; an omitted section is empty.',
});
export type ConfigurationInput = Static<typeof ConfigurationInputSchema>;

export const DownloadTimeSchema = Type.Union(
  [
    Type.Object(
      {
        seconds: Type.Integer({ description: 'Seconds since 1970-01-01T00:00:00Z.' }),
        nanos: Type.Integer({
          minimum: 0,
          maximum: 999_999_999,
          description: 'Nanoseconds within the second.',
        }),
      },
      { ...closed, description: 'Timestamp as seconds and nanos.' },
    ),
    Type.String({ format: 'date-time', description: 'RFC 3339 timestamp (accepted on upload).' }),
  ],
  { description: 'Time of the download.' },
);
export type DownloadTime = Static<typeof DownloadTimeSchema>;

const versionSchema = stringEnum(
  SUPPORTED_CONFIGURATION_VERSIONS,
  `Configuration format label; supported: ${SUPPORTED_CONFIGURATION_VERSIONS.join(', ')}.`,
);

/** The downloaded document (`GET`): every section present. */
export const ConfigurationDocumentSchema = Type.Object(
  {
    configuration: ConfigurationSchema,
    downloadTime: Type.Optional(DownloadTimeSchema),
    downloadedBy: Type.Optional(Type.String({ description: 'E-mail address of the user who downloaded.' })),
    version: versionSchema,
  },
  { ...closed, description: 'Configuration Data document as downloaded; every section present.' },
);
export type ConfigurationDocument = Static<typeof ConfigurationDocumentSchema>;

/** The uploaded document (`PUT`): like the download, but sections may be omitted. */
export const ConfigurationUploadSchema = Type.Object(
  {
    configuration: ConfigurationInputSchema,
    downloadTime: Type.Optional(DownloadTimeSchema),
    downloadedBy: Type.Optional(Type.String({ description: 'E-mail address of the user who downloaded.' })),
    version: versionSchema,
  },
  { ...closed, description: 'Configuration Data document as uploaded; omitted sections are empty.' },
);
export type ConfigurationUpload = Static<typeof ConfigurationUploadSchema>;
