/**
 * Lookup tables of the accounting core, built once per configuration upload so that processing an
 * event is map lookups and decimal additions (docs/domain/accounting.md, The configuration it
 * reads). Cross references the upload validates are still resolved defensively here: an unresolved
 * one is kept as `undefined` and becomes a processing error naming the item when an event needs it,
 * never a crash.
 */
import type {
  AmountSignage,
  Configuration,
  DebitCredit,
  JournalDefinition,
  JournalFieldRole,
  JournalType,
  Node,
  PostingComponent,
  PostingComponentIdentification,
} from '../configuration/model.js';
import { createZoneClock, type ZoneClock } from './business-date.js';
import { DAY_MS, HOUR_MS } from './dates.js';
import { type FingerprintAttribute, fingerprintAttributesOf } from './event-fingerprint.js';
import type { PreparedJournalField } from './journal-field.js';
import { compileLineRecordPlan, type LineRecordPlan } from './line-record.js';
import {
  emptyOpenWindowMemo,
  type OpenWindowMemo,
  type PreparedFiscalCalendar,
  prepareFiscalCalendar,
} from './periods.js';

/** Name of the feature flag that lets a closed-period journal move to the first open day. */
export const POSTING_DATE_OVERRIDE_FLAG = 'posting-date-override';

/** A journal type as processing needs it. */
export interface PreparedJournalType {
  code: string;
  /** `REVERSING`: a reversal follows the journal (docs/domain/accounting.md, Reversals). */
  reversing: boolean;
  /** Days from the journal's core date to its reversal's (`NEXT_DAY` = 1). */
  reversalOffsetDays: number;
}

/** An accounting basis with its calendars. */
export interface PreparedAccountingConfig {
  name: string;
  businessCalendarName: string;
  /** `undefined` when the named fiscal calendar does not exist. */
  fiscalCalendar: PreparedFiscalCalendar | undefined;
}

/** The assignment of an accounting basis to a node (`nodeConfigs` entry). */
export interface PreparedNodeConfig {
  accountingConfigName: string;
  graceDays: number;
  graceHours: number;
  /** `graceDays` days plus `graceHours` hours, in milliseconds. */
  graceMs: number;
  /** `overridePostingDate` is set and not `none`. */
  overridePostingDate: boolean;
  /** The open periods at the last clock reading asked about; the one mutable part (a memo). */
  openWindow: OpenWindowMemo;
}

/** A subledger node. */
export interface PreparedNode {
  /** Canonical key of its field values; see {@link nodeKeyOf}. */
  key: string;
  fields: Readonly<Record<string, string>>;
  timeZone: string;
  /** `undefined` when `timeZone` is not a known IANA zone. */
  clock: ZoneClock | undefined;
  /** Node configs by accounting configuration name. */
  configs: ReadonlyMap<string, PreparedNodeConfig>;
}

/** A posting pattern with its account resolved. */
export interface PreparedPattern {
  amountField: string;
  currencyField: string;
  postingDateField: string;
  postingCode: string;
  signage: AmountSignage;
  side: DebitCredit;
  /** First account of the posting code's lookup; `undefined` is `no-account` when used. */
  account: string | undefined;
}

/** A posting component with its references resolved. */
export interface PreparedComponent {
  code: string;
  accountingConfigName: string;
  accountingConfig: PreparedAccountingConfig | undefined;
  journalTypeCode: string;
  journalType: PreparedJournalType | undefined;
  patterns: readonly PreparedPattern[];
}

/** A posting component code named by an identification, resolved or not. */
export interface ComponentReference {
  code: string;
  /** `undefined` when no `postingComponents` entry has the code. */
  component: PreparedComponent | undefined;
}

/** The journal definition as line building needs it. */
export interface PreparedJournalDefinition {
  /** Every field, in configured order; records are keyed by these names. */
  fields: readonly PreparedJournalField[];
  /** The first field with each role. */
  fieldByRole: ReadonlyMap<JournalFieldRole, string>;
  /** Names of the fields with role `node`. */
  nodeFields: readonly string[];
  /** The fields compiled for building line records (`line-record.ts`). */
  plan: LineRecordPlan;
}

/**
 * Everything processing reads, derived from one configuration. Treat as immutable; only the memos
 * of the last clock reading (`ZoneClock`, `openWindow`) change, and never what they compute.
 */
export interface PreparedAccounting {
  /** Name of the BE attribute with role `event_type`. */
  eventTypeAttribute: string | undefined;
  /** Names of the BE attributes with role `node`, sorted, each once. */
  nodeAttributes: readonly string[];
  /** Names of every BE attribute. */
  eventAttributes: ReadonlySet<string>;
  /** Every BE attribute in name order, as the event fingerprint reads them (event-fingerprint.ts). */
  fingerprintAttributes: readonly FingerprintAttribute[];
  eventTypes: ReadonlySet<string>;
  /** Node by {@link nodeKeyOf} of its fields. */
  nodesByKey: ReadonlyMap<string, PreparedNode>;
  /** Posting components to apply, by business event type name, in configured order. */
  componentsByEventType: ReadonlyMap<string, readonly ComponentReference[]>;
  accountingConfigs: ReadonlyMap<string, PreparedAccountingConfig>;
  journalTypes: ReadonlyMap<string, PreparedJournalType>;
  fiscalCalendars: ReadonlyMap<string, PreparedFiscalCalendar>;
  journalDefinition: PreparedJournalDefinition;
  /** `businessDateSettings.businessDateShift`, in days. */
  businessDateShiftDays: number;
  /** Feature flag `posting-date-override`. */
  postingDateOverride: boolean;
}

/**
 * The canonical key of a set of node field values: names sorted, each `name=value` pair separated
 * by control characters that no configured name or value contains in practice. Events, direct
 * journal lines and `nodes` entries are matched by this key (docs/domain/accounting.md, Nodes).
 */
export function nodeKeyOf(fields: Readonly<Record<string, string>>): string {
  return Object.keys(fields)
    .sort()
    .map((name) => `${name}\u0001${fields[name] ?? ''}`)
    .join('\u0000');
}

/** What the accounting module reads of a prepared configuration revision. */
export interface PreparedAccountingRevision {
  revision: number;
  accounting: PreparedAccounting;
}

/**
 * Builds the lookup tables of a configuration once per upload: event types, nodes by field
 * values, posting components by event type (with accounts, journal types and accounting
 * configurations resolved), journal types, accounting configurations, fiscal calendars, the roles
 * of business event attributes and journal definition fields, the business date shift and the
 * posting-date-override flag. Pure and total: it never throws; where a section names something
 * that does not exist, the first entry of a duplicated name wins and a dangling reference is left
 * `undefined` for the engine to report with a rule-named error.
 */
export function prepareAccounting(configuration: Configuration): PreparedAccounting {
  const attributes = configuration.businessEventDefinition.attributes ?? [];
  const eventTypeAttribute = attributes.find((attribute) => attribute.role === 'event_type')?.name;
  const nodeAttributes = [
    ...new Set(
      attributes.filter((attribute) => attribute.role === 'node').map((attribute) => attribute.name),
    ),
  ].sort();
  const fiscalCalendars = firstByKey(
    configuration.fiscalCalendars,
    (calendar) => calendar.name,
    prepareFiscalCalendar,
  );
  const accountingConfigs = firstByKey(
    configuration.accountingConfigurations,
    (config) => config.name,
    (config): PreparedAccountingConfig => ({
      name: config.name,
      businessCalendarName: config.businessCalendarName,
      fiscalCalendar: fiscalCalendars.get(config.fiscalCalendarName),
    }),
  );
  const journalTypes = firstByKey(configuration.journalTypes, (type) => type.code, prepareJournalType);
  const accountByPostingCode = firstByKey(
    configuration.accountLookups,
    (lookup) => lookup.postingCode,
    (lookup) => lookup.accountLookupPatterns[0]?.account,
  );
  const components = firstByKey(
    configuration.postingComponents,
    (component) => component.code,
    (component) => prepareComponent(component, accountingConfigs, journalTypes, accountByPostingCode),
  );
  const eventAttributes = new Set(attributes.map((attribute) => attribute.name));
  return {
    eventTypeAttribute,
    nodeAttributes,
    eventAttributes,
    fingerprintAttributes: fingerprintAttributesOf(attributes),
    eventTypes: new Set(configuration.businessEventTypes.map((type) => type.name)),
    nodesByKey: firstByKey(configuration.nodes, (node) => nodeKeyOf(node.fields), prepareNode),
    componentsByEventType: componentsByEventTypeOf(configuration.postingComponentIdentifications, components),
    accountingConfigs,
    journalTypes,
    fiscalCalendars,
    journalDefinition: prepareJournalDefinition(configuration.journalDefinition, eventAttributes),
    businessDateShiftDays: configuration.businessDateSettings.businessDateShift ?? 0,
    postingDateOverride: configuration.featureFlags[POSTING_DATE_OVERRIDE_FLAG] === true,
  };
}

/**
 * The prepared value of each item, by the item's key: the first item of a duplicated key wins, and
 * an item that prepares to `undefined` (nothing usable) leaves its key to a later item.
 */
function firstByKey<T, V>(
  items: readonly T[],
  keyOf: (item: T) => string,
  prepare: (item: T) => V | undefined,
): Map<string, V> {
  const byKey = new Map<string, V>();
  for (const item of items) {
    const key = keyOf(item);
    if (byKey.has(key)) continue;
    const prepared = prepare(item);
    if (prepared !== undefined) byKey.set(key, prepared);
  }
  return byKey;
}

/** A journal type as processing reads it. */
function prepareJournalType(type: JournalType): PreparedJournalType {
  // NEXT_DAY is the only reversing date the configuration allows; a REVERSING type without one
  // reverses on the next day too (choice).
  return { code: type.code, reversing: type.behavior === 'REVERSING', reversalOffsetDays: 1 };
}

/**
 * The posting components each business event type applies, in configured order: the lists of
 * identifications naming one type are joined, and a code without a component is kept unresolved.
 */
function componentsByEventTypeOf(
  identifications: readonly PostingComponentIdentification[],
  components: ReadonlyMap<string, PreparedComponent>,
): Map<string, ComponentReference[]> {
  const byEventType = new Map<string, ComponentReference[]>();
  for (const identification of identifications) {
    const list = byEventType.get(identification.businessEventTypeName) ?? [];
    for (const { postingComponentCode: code } of identification.postingComponents) {
      list.push({ code, component: components.get(code) });
    }
    byEventType.set(identification.businessEventTypeName, list);
  }
  return byEventType;
}

/**
 * The journal definition's fields in configured order, which of them copy a business event
 * attribute of their name (no role, and an attribute of the name exists), and the first field of
 * each role.
 */
function prepareJournalDefinition(
  definition: JournalDefinition,
  eventAttributes: ReadonlySet<string>,
): PreparedJournalDefinition {
  const fields = (definition.fields ?? []).map(
    (field): PreparedJournalField => ({
      name: field.name,
      role: field.role,
      copiesEventAttribute: field.role === undefined && eventAttributes.has(field.name),
    }),
  );
  const fieldByRole = new Map<JournalFieldRole, string>();
  for (const field of fields) {
    if (field.role !== undefined && !fieldByRole.has(field.role)) fieldByRole.set(field.role, field.name);
  }
  return {
    fields,
    fieldByRole,
    nodeFields: fields.filter((field) => field.role === 'node').map((field) => field.name),
    plan: compileLineRecordPlan(fields),
  };
}

function prepareComponent(
  component: PostingComponent,
  accountingConfigs: ReadonlyMap<string, PreparedAccountingConfig>,
  journalTypes: ReadonlyMap<string, PreparedJournalType>,
  accountByPostingCode: ReadonlyMap<string, string>,
): PreparedComponent {
  return {
    code: component.code,
    accountingConfigName: component.accountingConfigName,
    accountingConfig: accountingConfigs.get(component.accountingConfigName),
    journalTypeCode: component.journalType,
    journalType: journalTypes.get(component.journalType),
    patterns: component.postingPatterns.map((pattern) => ({
      amountField: pattern.amountField,
      currencyField: pattern.currencyField,
      postingDateField: pattern.postingDateField,
      postingCode: pattern.postingCode,
      signage: pattern.amountSignage ?? 'AUTO',
      side: pattern.debitCredit,
      account: accountByPostingCode.get(pattern.postingCode),
    })),
  };
}

function prepareNode(node: Node): PreparedNode {
  const configs = new Map<string, PreparedNodeConfig>();
  for (const config of node.nodeConfigs) {
    if (configs.has(config.accountingConfigName)) continue;
    const graceDays = config.graceDays ?? 0;
    const graceHours = config.graceHours ?? 0;
    configs.set(config.accountingConfigName, {
      accountingConfigName: config.accountingConfigName,
      graceDays,
      graceHours,
      graceMs: graceDays * DAY_MS + graceHours * HOUR_MS,
      overridePostingDate: (config.overridePostingDate ?? 'none') !== 'none',
      openWindow: emptyOpenWindowMemo(),
    });
  }
  // Frozen: every journal of the node carries this one object (journal-assembly.ts).
  const fields = Object.freeze({ ...node.fields });
  return {
    key: nodeKeyOf(fields),
    fields,
    timeZone: node.timeZone,
    clock: createZoneClock(node.timeZone),
    configs,
  };
}
