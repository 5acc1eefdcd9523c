import type { EntityAttribute, EntityDefinition, FieldType } from './entity.js';

/**
 * Example chunk bodies for an entity (contract 3.1, `GET .../entities/{entity}/example`; seed
 * 4.6): one record with every attribute set to a valid value of its type, which the chunk
 * endpoint accepts as it is.
 */

/** An example chunk body, exactly as the chunk endpoint accepts it (contract 4.2). */
export interface ExampleChunk {
  chunkName: string;
  data: [Record<string, unknown>];
}

/**
 * Plausible TEXT values keyed by attribute name, for example the first configured business
 * event type for the `event_type` attribute (see `exampleSamplesOf` in from-configuration.ts).
 * A sample is used only where the attribute is TEXT, or a LIST of TEXT (as its one element).
 */
export type ExampleSamples = Readonly<Record<string, string>>;

/** A stable UUID for examples, so that the example of an entity never changes between calls. */
export const EXAMPLE_UUID = '3f2b8c1e-7d4a-4f6b-9c2e-1a5d8e0f7b3c';
const EXAMPLE_DATE = '2026-01-31';
const EXAMPLE_DATETIME = '2026-01-31T10:15:00Z';
const EXAMPLE_CURRENCY = 'EUR';

/** TEXT values that make the ledger entities' examples read like real ones, by seed role. */
const TEXT_BY_ROLE: Readonly<Record<string, string>> = {
  event_type: 'PAYMENT_RECEIVED',
  node: 'NODE-1',
  journalType: 'PERMANENT',
  accountingConfig: 'IFRS',
  account: '1000',
  transactionCurrency: EXAMPLE_CURRENCY,
  originJournalId: 'ORIGIN-JOURNAL-1',
  originJournalLineId: 'ORIGIN-JOURNAL-1-LINE-1',
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
): unknown {
  switch (type) {
    case 'TEXT':
      return textExample(attribute, samples);
    case 'DATE':
      return EXAMPLE_DATE;
    case 'DATETIME':
      return EXAMPLE_DATETIME;
    case 'INTEGER':
      return 1;
    case 'DECIMAL':
      return '1234.50';
    case 'BOOLEAN':
      return true;
    case 'UUID':
      return EXAMPLE_UUID;
    case 'LIST':
      // The elements of a nested LIST are TEXT, as in field-converters.ts.
      return [exampleValueOf(elementType ?? 'TEXT', undefined, attribute, samples)];
  }
}

/**
 * Builds the example chunk of an entity: `chunkName` `example-<entity>` and one record with every
 * attribute, mandatory or not, in configured order, set to a valid value of its type (decimals
 * as strings such as `"1234.50"`, a real date, a UUID, a list of one element). TEXT values come
 * from `samples` when given, else from the attribute's seed role, else `example <name>`. The
 * record passes structural validation (record-validator.ts) as it is; whether its values exist
 * in the configuration (an event type, a node) is checked only at processing, so a caller that
 * wants a processable example passes samples taken from the configuration. Pure; never throws.
 */
export function exampleChunk(entity: EntityDefinition, samples: ExampleSamples = {}): ExampleChunk {
  const record: Record<string, unknown> = {};
  for (const attribute of entity.attributes) {
    const value = exampleValueOf(attribute.type, attribute.elementType, attribute, samples);
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
  return { chunkName: `example-${entity.name}`, data: [record] };
}
