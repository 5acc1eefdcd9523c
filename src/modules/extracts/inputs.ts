/**
 * The rules of what a caller may send to manage and read extracts (docs/reference.md, Extracts),
 * written once: the REST schemas (`http/api/extract-configurations.ts`) are built from these
 * fragments, and the administration pages read their forms with the same ones. The rules that
 * join members (which filters a source takes, what an incremental or CSV extract needs) are the
 * service's (`service.ts`), which names the member at fault.
 */
import { Type } from '@sinclair/typebox';
import type { ExtractFormat, ExtractSource, ExtractState } from './store.js';

/** Longest configuration name and description, in code points. */
export const EXTRACT_NAME_LENGTH_MAX = 200;
export const EXTRACT_DESCRIPTION_LENGTH_MAX = 2000;
/** Most fields a configuration may name. */
export const EXTRACT_FIELDS_MAX = 200;
/** Most node fields a filter may name. */
export const EXTRACT_NODE_FIELDS_MAX = 20;
/** Longest filter value and field name. */
export const EXTRACT_VALUE_LENGTH_MAX = 200;

export const EXTRACT_SOURCES: readonly ExtractSource[] = [
  'posted-journals',
  'unposted-journals',
  'journal-lines',
  'processing-errors',
  'balances',
  'records',
];
export const EXTRACT_FORMATS: readonly ExtractFormat[] = ['jsonl', 'csv'];
export const EXTRACT_STATES: readonly ExtractState[] = ['Draft', 'Active', 'Inactive'];

/** The filters each source takes; any other is refused, naming it. */
export const FILTERS_OF_SOURCE: { readonly [S in ExtractSource]: readonly string[] } = {
  'posted-journals': ['accountingConfig', 'node'],
  'unposted-journals': ['accountingConfig', 'node'],
  'journal-lines': ['accountingConfig', 'node'],
  'processing-errors': ['namespace', 'entity', 'code'],
  balances: ['accountingConfig', 'node', 'asOf'],
  records: ['namespace', 'entity'],
};

const JOURNAL_FIELDS = [
  'journalId',
  'status',
  'coreDate',
  'originalCoreDate',
  'journalType',
  'accountingConfig',
  'ingestionId',
  'node',
  'reverses',
  'reversedBy',
  'withdrawnBy',
  'originJournalId',
  'lineCount',
  'createdAt',
  'revision',
];

/**
 * The fields of the sources whose rows have a fixed shape, in the order a CSV header gives them;
 * null for the sources whose fields come from the configuration (a journal line's fields are the
 * journal definition's, plus `drCr`; a record's those of its entity, plus `recordId`,
 * `ingestionId` and `createdAt`).
 */
export const FIELDS_OF_SOURCE: { readonly [S in ExtractSource]: readonly string[] | null } = {
  'posted-journals': JOURNAL_FIELDS,
  'unposted-journals': JOURNAL_FIELDS,
  'journal-lines': null,
  'processing-errors': [
    'errorId',
    'ingestionId',
    'recordId',
    'namespace',
    'entity',
    'code',
    'message',
    'state',
    'attempts',
    'createdAt',
    'revision',
    'record',
  ],
  balances: ['accountingConfig', 'node', 'account', 'currency', 'balance', 'asOf'],
  records: null,
};

const Value = Type.String({ minLength: 1, maxLength: EXTRACT_VALUE_LENGTH_MAX });
const FieldName = Type.String({
  minLength: 1,
  maxLength: EXTRACT_VALUE_LENGTH_MAX,
  pattern: '^[A-Za-z_][A-Za-z0-9_.-]*$',
});

export const ExtractSourceInput = Type.Union(
  EXTRACT_SOURCES.map((source) => Type.Literal(source)),
  {
    description:
      'What the extract reads: `posted-journals` (in the order they posted), `unposted-journals` (journals written unposted, in the order written), `journal-lines` (the lines of posted journals, in the order they posted), `processing-errors` (in the order recorded), `balances` (a snapshot, never incremental) or `records` (of one entity, in the order stored).',
  },
);
export const ExtractFormatInput = Type.Union(
  EXTRACT_FORMATS.map((format) => Type.Literal(format)),
  { description: 'JSON Lines (one JSON object per line) or CSV (RFC 4180, with a header line).' },
);
export const ExtractStateInput = Type.Union(EXTRACT_STATES.map((state) => Type.Literal(state)));

export const ExtractFiltersInput = Type.Object(
  {
    accountingConfig: Type.Optional({
      ...Value,
      description: 'Journals, lines and balances of this accounting configuration.',
    }),
    node: Type.Optional(
      Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', maxLength: 100 }), Value, {
        maxProperties: EXTRACT_NODE_FIELDS_MAX,
        description: 'Node field values the node must hold, every one.',
        examples: [{ region: 'EU' }],
      }),
    ),
    namespace: Type.Optional({ ...Value, description: 'Errors and records of this namespace.' }),
    entity: Type.Optional({ ...Value, description: 'Errors and records of this entity.' }),
    code: Type.Optional({ ...Value, description: 'Processing errors of this code.' }),
    asOf: Type.Optional(
      Type.String({
        format: 'date',
        description: 'Balances as of this day (core dates on or before it); absent, today.',
      }),
    ),
  },
  { additionalProperties: false, description: 'Which rows of the source are kept; each source takes some.' },
);

/** The body that creates a configuration. */
export const ExtractConfigurationInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: EXTRACT_NAME_LENGTH_MAX }),
    description: Type.Optional(Type.String({ maxLength: EXTRACT_DESCRIPTION_LENGTH_MAX })),
    source: ExtractSourceInput,
    filters: Type.Optional(ExtractFiltersInput),
    fields: Type.Optional(
      Type.Array(FieldName, {
        minItems: 1,
        maxItems: EXTRACT_FIELDS_MAX,
        uniqueItems: true,
        description: 'The fields of each row, in this order; absent, every field.',
      }),
    ),
    format: Type.Optional({ ...ExtractFormatInput, default: 'jsonl' }),
    incremental: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'When true, each read answers only what is new since the last acknowledged one (`increment`).',
      }),
    ),
  },
  { additionalProperties: false },
);

/** The body that changes a configuration: any member of the creation body, and the state. */
export const ExtractConfigurationChangeInput = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: EXTRACT_NAME_LENGTH_MAX })),
    description: Type.Optional(
      Type.Union([Type.String({ maxLength: EXTRACT_DESCRIPTION_LENGTH_MAX }), Type.Null()]),
    ),
    source: Type.Optional(ExtractSourceInput),
    filters: Type.Optional(ExtractFiltersInput),
    fields: Type.Optional(
      Type.Union([
        Type.Array(FieldName, { minItems: 1, maxItems: EXTRACT_FIELDS_MAX, uniqueItems: true }),
        Type.Null(),
      ]),
    ),
    format: Type.Optional(ExtractFormatInput),
    incremental: Type.Optional(Type.Boolean()),
    state: Type.Optional({
      ...ExtractStateInput,
      description:
        '`Active` from Draft or Inactive; `Inactive` from Active. Nothing goes back to Draft. Source, filters and `incremental` change only in Draft.',
    }),
  },
  { additionalProperties: false, minProperties: 1 },
);
