/**
 * TypeBox schemas and static types of the Configuration Data document (docs/reference.md,
 * Configuration Data). The OpenAPI document is generated from these schemas, so every field
 * carries a description; `validate-structure.ts` compiles them with Ajv for the upload. The
 * document's words (format label, enumerations, ledger entity names) are in `vocabulary.ts`, the
 * `entities` and `flows` sections in `entity-schemas.ts` and `flow-schemas.ts`, the small pieces
 * every schema is built from in `schema-parts.ts`; this file has the other sections and the
 * document, and re-exports the rest, so that one import names the whole model.
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
import { type Static, Type } from '@sinclair/typebox';
import { EntitySchema } from './entity-schemas.js';
import { FlowSchema } from './flow-schemas.js';
import { JOURNAL_FIELD_ROLES } from './journal-roles.js';
import { closed, day, map, name, stringEnum } from './schema-parts.js';
import {
  AMOUNT_SIGNAGES,
  BUSINESS_CALENDAR_STATUSES,
  BUSINESS_EVENT_ATTRIBUTE_ROLES,
  BUSINESS_EVENT_ATTRIBUTE_TYPES,
  DEBIT_CREDIT_VALUES,
  FISCAL_CALENDAR_TYPES,
  JOURNAL_FIELD_TYPES,
  JOURNAL_TYPE_BEHAVIORS,
  OVERRIDE_POSTING_DATES,
  REVERSING_DATES,
  SUPPORTED_CONFIGURATION_VERSIONS,
} from './vocabulary.js';

export * from './entity-schemas.js';
export * from './flow-schemas.js';
export * from './vocabulary.js';

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
