import { DAY_MS, formatIsoDate } from '../accounting/dates.js';
import { type BusinessClock, nodeBusinessDate } from '../accounting/node-business-date.js';
import type { PreparedAccounting, PreparedComponent, PreparedNode } from '../accounting/prepare.js';
import type { Configuration } from '../configuration/model.js';
import type { EntityAttribute, EntityDefinition, FieldType } from './entity.js';

/**
 * Example chunk bodies for an entity (`GET .../entities/{entity}/example`): records with every
 * attribute set to a valid value of its type, which the chunk endpoint accepts as they are and,
 * for the two ledger entities, which processing turns into journals.
 */

/** An example chunk body, exactly as the chunk endpoint accepts it. */
export interface ExampleChunk {
  chunkName: string;
  data: Record<string, unknown>[];
}

/**
 * Values of one example record by attribute name, taken from the configuration. A sample is used
 * where the attribute is TEXT (or a LIST of TEXT, as its one element) or DECIMAL (the chooser
 * gives decimal strings only for those).
 */
export type ExampleSamples = Readonly<Record<string, string>>;

/** What an example is built from: the date of its date attributes and one sample set per record. */
export interface ExamplePlan {
  /** `YYYY-MM-DD` of every DATE attribute, and the day of every DATETIME one. */
  date: string;
  /** One entry per record of the example, at least one. */
  records: readonly ExampleSamples[];
}

/** A stable UUID for examples, so that the example of an entity never changes between calls. */
export const EXAMPLE_UUID = '3f2b8c1e-7d4a-4f6b-9c2e-1a5d8e0f7b3c';
/** The time of day of DATETIME examples, in UTC. */
const EXAMPLE_TIME_OF_DAY = 'T10:15:00Z';
const EXAMPLE_CURRENCY = 'EUR';
const EXAMPLE_AMOUNT = '1234.50';
/** The origin journal id of the journal example; its lines are `-LINE-1` and `-LINE-2`. */
const EXAMPLE_ORIGIN_JOURNAL_ID = 'EXAMPLE-JOURNAL-1';

/** TEXT values used when the configuration offers none, by ledger role. */
const TEXT_BY_ROLE: Readonly<Record<string, string>> = {
  event_type: 'PAYMENT_RECEIVED',
  node: 'NODE-1',
  journalType: 'PERMANENT',
  accountingConfig: 'IFRS',
  account: '1000',
  transactionCurrency: EXAMPLE_CURRENCY,
  originJournalId: EXAMPLE_ORIGIN_JOURNAL_ID,
  originJournalLineId: `${EXAMPLE_ORIGIN_JOURNAL_ID}-LINE-1`,
};

const CURRENCY_NAME = /currency/i;

function textExample(attribute: EntityAttribute, samples: ExampleSamples): string {
  const sample = samples[attribute.name];
  if (sample !== undefined) return sample;
  const byRole = attribute.role === undefined ? undefined : TEXT_BY_ROLE[attribute.role];
  if (byRole !== undefined) return byRole;
  return CURRENCY_NAME.test(attribute.name) ? EXAMPLE_CURRENCY : `example ${attribute.name}`;
}

function exampleValueOf(
  type: FieldType,
  elementType: FieldType | undefined,
  attribute: EntityAttribute,
  samples: ExampleSamples,
  date: string,
): unknown {
  switch (type) {
    case 'TEXT':
      return textExample(attribute, samples);
    case 'DATE':
      return date;
    case 'DATETIME':
      return `${date}${EXAMPLE_TIME_OF_DAY}`;
    case 'INTEGER':
      return 1;
    case 'DECIMAL':
      return samples[attribute.name] ?? EXAMPLE_AMOUNT;
    case 'BOOLEAN':
      return true;
    case 'UUID':
      return EXAMPLE_UUID;
    case 'LIST':
      // The elements of a nested LIST are TEXT, as in field-converters.ts.
      return [exampleValueOf(elementType ?? 'TEXT', undefined, attribute, samples, date)];
  }
}

/**
 * Builds the example chunk of an entity: `chunkName` `example-<entity>` and one record per
 * sample set of the plan, each with every attribute, mandatory or not, in configured order, set
 * to a valid value of its type (decimals as strings such as `"1234.50"`, the plan's date, a
 * UUID, a list of one element). TEXT and DECIMAL values come from the record's samples when
 * given, TEXT ones else from the attribute's ledger role, else `example <name>`. Every record
 * passes structural validation (record-validator.ts) as it is. Pure; never throws.
 */
export function exampleChunk(entity: EntityDefinition, plan: ExamplePlan): ExampleChunk {
  const sampleSets = plan.records.length === 0 ? [{}] : plan.records;
  const data = sampleSets.map((samples) => {
    const record: Record<string, unknown> = {};
    for (const attribute of entity.attributes) {
      const value = exampleValueOf(attribute.type, attribute.elementType, attribute, samples, plan.date);
      if (attribute.name === '__proto__') {
        Object.defineProperty(record, attribute.name, {
          value,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      } else {
        record[attribute.name] = value;
      }
    }
    return record;
  });
  return { chunkName: `example-${entity.name}`, data };
}

/** Whether processing can post a component on a node without a configuration error. */
function componentPostsOn(component: PreparedComponent, node: PreparedNode): boolean {
  return (
    node.configs.has(component.accountingConfigName) &&
    component.accountingConfig?.fiscalCalendar !== undefined &&
    component.journalType !== undefined &&
    component.patterns.length > 0 &&
    component.patterns.every((pattern) => pattern.account !== undefined)
  );
}

/**
 * The first event type (configured order) with posting components, all of them defined, and
 * the first node with a known time zone on which at least one of them applies and every one
 * that applies posts without a configuration error.
 */
function processableEvent(
  accounting: PreparedAccounting,
): { eventType: string; node: PreparedNode; components: PreparedComponent[] } | undefined {
  for (const eventType of accounting.eventTypes) {
    const references = accounting.componentsByEventType.get(eventType) ?? [];
    const components = references.flatMap((reference) =>
      reference.component === undefined ? [] : [reference.component],
    );
    if (components.length === 0 || components.length < references.length) continue;
    for (const node of accounting.nodesByKey.values()) {
      if (node.clock === undefined) continue;
      const applying = components.filter((component) => node.configs.has(component.accountingConfigName));
      if (applying.length > 0 && applying.every((component) => componentPostsOn(component, node))) {
        return { eventType, node, components: applying };
      }
    }
  }
  return undefined;
}

/** The first node with a known time zone and an accounting configuration with a fiscal calendar. */
function processableJournalNode(
  accounting: PreparedAccounting,
): { node: PreparedNode; accountingConfig: string } | undefined {
  for (const node of accounting.nodesByKey.values()) {
    if (node.clock === undefined) continue;
    for (const name of node.configs.keys()) {
      if (accounting.accountingConfigs.get(name)?.fiscalCalendar !== undefined) {
        return { node, accountingConfig: name };
      }
    }
  }
  return undefined;
}

/** The date of the service when no node gives one: `BUSINESS_DATE` if pinned, else today in UTC. */
function serviceDate(clock: BusinessClock): string {
  return clock.businessDatePinned ?? formatIsoDate(Math.floor(clock.now.getTime() / DAY_MS));
}

function businessEventPlan(accounting: PreparedAccounting, clock: BusinessClock): ExamplePlan {
  const chosen = processableEvent(accounting);
  if (chosen === undefined) return { date: serviceDate(clock), records: [{}] };
  const samples: Record<string, string> = { ...chosen.node.fields };
  if (accounting.eventTypeAttribute !== undefined) samples[accounting.eventTypeAttribute] = chosen.eventType;
  for (const component of chosen.components) {
    for (const pattern of component.patterns) samples[pattern.currencyField] = EXAMPLE_CURRENCY;
  }
  return {
    date: nodeBusinessDate(accounting, chosen.node.fields, clock) ?? serviceDate(clock),
    records: [samples],
  };
}

function journalPlan(
  configuration: Configuration,
  accounting: PreparedAccounting,
  entity: EntityDefinition,
  clock: BusinessClock,
): ExamplePlan {
  const chosen = processableJournalNode(accounting);
  const journalTypes = [...accounting.journalTypes.values()];
  const journalType = (journalTypes.find((type) => !type.reversing) ?? journalTypes[0])?.code;
  const accounts = [
    ...new Set(
      configuration.accountLookups.flatMap((lookup) =>
        lookup.accountLookupPatterns.map((pattern) => pattern.account),
      ),
    ),
  ];
  // A balanced pair: the same amount debited (positive) on one account and credited (negative)
  // on another, in one currency, on one node, accounting configuration, journal type and date.
  const lines = [
    { account: accounts[0], amount: EXAMPLE_AMOUNT },
    { account: accounts[1] ?? accounts[0], amount: `-${EXAMPLE_AMOUNT}` },
  ];
  const records = lines.map((line, index) => {
    const samples: Record<string, string> = {};
    const byRole: Record<string, string | undefined> = {
      journalType,
      accountingConfig: chosen?.accountingConfig,
      account: line.account,
      transactionAmount: line.amount,
      transactionCurrency: EXAMPLE_CURRENCY,
      originJournalId: EXAMPLE_ORIGIN_JOURNAL_ID,
      originJournalLineId: `${EXAMPLE_ORIGIN_JOURNAL_ID}-LINE-${index + 1}`,
    };
    for (const attribute of entity.attributes) {
      const value =
        attribute.role === 'node'
          ? chosen?.node.fields[attribute.name]
          : attribute.role === undefined
            ? undefined
            : byRole[attribute.role];
      if (value !== undefined) samples[attribute.name] = value;
    }
    return samples;
  });
  const date = chosen === undefined ? undefined : nodeBusinessDate(accounting, chosen.node.fields, clock);
  return { date: date ?? serviceDate(clock), records };
}

/**
 * Chooses what makes the example of an entity processable as well as valid. For
 * `ledger/businessEvent`: an event type that has posting components, a node on which they post
 * (its field values), `EUR` for the currency fields of their posting patterns, and the node's
 * business date for every date. For `ledger/journal`: two lines of one origin journal, on the
 * first node with an accounting configuration assigned, the first permanent journal type (else
 * the first), two configured accounts, the same amount debited and credited in `EUR`, at the
 * node's business date. A user entity gets the service's date (`BUSINESS_DATE` or today in
 * UTC) and no samples. Where the configuration lacks an item, that value falls back to a
 * plausible one and the example stays valid, though processing may then refuse it. Pure.
 */
export function examplePlanOf(
  configuration: Configuration,
  accounting: PreparedAccounting,
  entity: EntityDefinition,
  clock: BusinessClock,
): ExamplePlan {
  switch (entity.kind) {
    case 'businessEvent':
    case 'businessEventRollback':
      return businessEventPlan(accounting, clock);
    case 'journal':
      return journalPlan(configuration, accounting, entity, clock);
    case 'user':
      return { date: serviceDate(clock), records: [{}] };
  }
}
