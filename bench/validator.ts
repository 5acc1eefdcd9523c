import { performance } from 'node:perf_hooks';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { EntityDefinition } from '../src/modules/entities/entity.js';
import { converterOf, decimalOfNumber, INVALID } from '../src/modules/entities/field-converters.js';
import type { FieldError } from '../src/modules/entities/field-error.js';
import { compileRecordValidator } from '../src/modules/entities/record-validator.js';
import { formatNumber, type RunContext, type Section, sectionHead, stampNow, table } from './report.js';

/**
 * The micro benchmark behind docs/adr/0005-entity-validation.md: the compiled closures of
 * `record-validator.ts` against Ajv plus the conversion pass Ajv would still need, on one core.
 */

/** Distinct parsed records per pass (ADR 0005: 100k). */
const RECORDS = 100_000;
/** Passes per approach; the first is a warm-up and the best of the rest is reported. */
const PASSES = 6;
/** ADR 0005: "well over 300k records per second for a ten-field entity on one core". */
const RECORDS_PER_SECOND_MIN = 300_000;
const MS_PER_SECOND = 1000;
const MILLION = 1_000_000;

/** The ADR's ten-field entity: every field type, a decimal as string and as number, a list. */
const ENTITY: EntityDefinition = {
  namespace: 'bench',
  name: 'tx',
  description: '',
  temporalityType: 'Transaction',
  type: 'DefinedEntity',
  kind: 'user',
  attributes: [
    { name: 'reference', label: '', mandatory: true, type: 'TEXT' },
    { name: 'bookingDate', label: '', mandatory: true, type: 'DATE' },
    { name: 'amount', label: '', mandatory: true, type: 'DECIMAL' },
    { name: 'fee', label: '', mandatory: false, type: 'DECIMAL' },
    { name: 'quantity', label: '', mandatory: true, type: 'INTEGER' },
    { name: 'settled', label: '', mandatory: true, type: 'BOOLEAN' },
    { name: 'customerId', label: '', mandatory: true, type: 'UUID' },
    { name: 'createdAt', label: '', mandatory: true, type: 'DATETIME' },
    { name: 'tags', label: '', mandatory: false, type: 'LIST', elementType: 'TEXT' },
    { name: 'comment', label: '', mandatory: false, type: 'TEXT' },
  ],
};

function recordOf(index: number): Record<string, unknown> {
  return {
    reference: `REF-${index}`,
    bookingDate: `2026-0${1 + (index % 9)}-${10 + (index % 18)}`,
    amount: `${index}.50`,
    fee: (index % 100) / 4,
    quantity: index % 2 ? index : String(index),
    settled: index % 3 === 0,
    customerId: `3f2b8c1e-7d4a-4f6b-9c2e-${String(100_000_000_000 + index)}`,
    createdAt: '2026-01-31T10:15:00.123Z',
    tags: ['a', 'b'],
    comment: index % 2 ? 'hello' : undefined,
  };
}

const DECIMAL_TEXT = { type: 'string', pattern: '^-?\\d+(\\.\\d+)?$' };

/** Ajv with the formats and a keyword for the 15-significant-digit rule of decimal numbers. */
function ajvValidatorOf() {
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats.default(ajv);
  ajv.addKeyword({
    keyword: 'decimalPrecision',
    type: 'number',
    schemaType: 'boolean',
    validate: (_schema: boolean, data: number) => decimalOfNumber(data) !== undefined,
    errors: false,
  });
  const decimal = { anyOf: [DECIMAL_TEXT, { type: 'number', decimalPrecision: true }] };
  return ajv.compile({
    type: 'object',
    properties: {
      reference: { type: 'string', minLength: 1 },
      bookingDate: { type: 'string', format: 'date' },
      amount: decimal,
      fee: decimal,
      quantity: {
        anyOf: [
          { type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
          { type: 'string', pattern: '^-?\\d+$' },
        ],
      },
      settled: { anyOf: [{ type: 'boolean' }, { enum: ['true', 'false'] }] },
      customerId: { type: 'string', format: 'uuid' },
      createdAt: { type: 'string', format: 'date-time' },
      tags: { type: 'array', items: { type: 'string' } },
      comment: { type: ['string', 'null'] },
    },
    required: ['reference', 'bookingDate', 'amount', 'quantity', 'settled', 'customerId', 'createdAt'],
    additionalProperties: false,
  });
}

/** Ajv, then the conversion pass (or, on failure, our per-field explanations) it still needs. */
function ajvWithConversion(): (record: unknown) => boolean {
  const validate = ajvValidatorOf();
  const converters = ENTITY.attributes.map((a) => ({
    name: a.name,
    converter: converterOf(a.type, a.elementType),
  }));
  return (record) => {
    const input = record as Record<string, unknown>;
    if (validate(record)) {
      const out: Record<string, unknown> = {};
      for (const { name, converter } of converters) {
        const value = input[name];
        if (value === undefined || value === null) continue;
        const converted = converter.convert(value);
        if (converted === INVALID) {
          converter.explain(name, value, []);
          return false;
        }
        out[name] = converted;
      }
      return true;
    }
    const errors: FieldError[] = [];
    const fields = new Set((validate.errors ?? []).map((e) => e.instancePath.split('/')[1] ?? ''));
    for (const { name, converter } of converters) {
      if (fields.has(name)) converter.explain(name, input[name], errors);
    }
    return false;
  };
}

/** Best records/s over the timed passes; every record must come out `expectValid`. */
function measure(check: (record: never) => boolean, data: readonly unknown[], expectValid: boolean): number {
  let bestMs = Number.POSITIVE_INFINITY;
  for (let pass = 0; pass < PASSES; pass += 1) {
    const startMs = performance.now();
    let valid = 0;
    for (const record of data) if (check(record as never)) valid += 1;
    const ms = performance.now() - startMs;
    if (valid !== (expectValid ? data.length : 0))
      throw new Error(`${valid} of ${data.length} records valid`);
    if (pass > 0) bestMs = Math.min(bestMs, ms);
  }
  return (data.length / bestMs) * MS_PER_SECOND;
}

const perSecond = (rate: number) => `${formatNumber(rate / MILLION, 2)} M/s`;

/** Runs the validator micro benchmark (no service, no storage). */
export async function runValidator(context: RunContext): Promise<Section[]> {
  const stamp = stampNow();
  const texts = Array.from({ length: RECORDS }, (_, index) => JSON.stringify(recordOf(index)));
  const valid = texts.map((text) => JSON.parse(text) as Record<string, unknown>);
  const bad = valid.map((record) => ({ ...record, bookingDate: '2026-02-30' }));
  const closures = compileRecordValidator(ENTITY);
  const viaClosures = (record: unknown) => closures.validate(record).ok;
  const viaAjv = ajvWithConversion();
  const ajvOnly = ajvValidatorOf();

  const closuresValid = measure(viaClosures, valid, true);
  const closuresBad = measure(viaClosures, bad, false);
  const ajvValid = measure(viaAjv, valid, true);
  const ajvBad = measure(viaAjv, bad, false);
  const ajvOnlyValid = measure((record) => ajvOnly(record), valid, true);
  const parse = measure((text: string) => typeof JSON.parse(text) === 'object', texts, true);

  const markdown = [
    ...sectionHead({
      title: 'Entity record validation (ADR 0005), one core',
      machine: context.machine,
      storage: 'none (in process)',
      command: context.command,
      stamp,
    }),
    ...table(
      ['approach', 'valid records', 'one failing field', 'target', 'verdict'],
      [
        [
          'compiled closures (`compileRecordValidator`), check and convert in one pass',
          perSecond(closuresValid),
          perSecond(closuresBad),
          `≥ ${perSecond(RECORDS_PER_SECOND_MIN)}`,
          Math.min(closuresValid, closuresBad) >= RECORDS_PER_SECOND_MIN ? 'met' : '**not met**',
        ],
        [
          'Ajv + ajv-formats (allErrors) + the conversion pass',
          perSecond(ajvValid),
          perSecond(ajvBad),
          '',
          '',
        ],
        ['Ajv alone, no conversion', perSecond(ajvOnlyValid), '', '', ''],
        ['`JSON.parse` of the same records, for scale', perSecond(parse), '', '', ''],
      ],
    ),
    '',
    `Method. ${formatNumber(RECORDS)} distinct parsed records of the ADR's ten-field entity (TEXT, DATE, DECIMAL as string, DECIMAL as number, INTEGER, BOOLEAN, UUID, DATETIME, LIST of TEXT, optional TEXT); the failing set has an impossible date in every record. Best of ${PASSES - 1} passes after a warm-up pass, in the benchmark process.`,
  ].join('\n');
  console.log(`\n${markdown}\n`);
  return [{ id: 'validator', markdown }];
}
