import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptedRecordsOf } from '../../src/modules/ingestion/store.js';
import { copyText, createBulkInsert } from '../../src/storage/bulk-insert.js';
import { createIngestionStore } from '../../src/storage/ingestion-store.js';
import type { Store } from '../../src/storage/store.js';
import { createTestStore, insertOpenSession } from '../helpers/store.js';

/** Text that the COPY format would read as syntax if it were written as it is. */
const HOSTILE_TEXTS = [
  'plain',
  '',
  'tab\there',
  'line\nbreak',
  'carriage\rreturn',
  'back\\slash',
  '\\N',
  '\\.',
  '\\\\t',
  'ünïcödé ✓ 𝄞',
  '{"json":"with \\"quotes\\" and \\\\ escapes"}',
];

describe('bulk insert', () => {
  let store: Store;
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    ({ store, dispose } = await createTestStore());
    await insertOpenSession(store, 'in_bulk', 'ledger', 'businessEvent');
  });
  afterAll(async () => dispose());

  it('stores every text exactly as given, syntax characters of either dialect included', async () => {
    const bulkInsert = createBulkInsert(store);
    await store.db.transaction().execute((trx) =>
      bulkInsert(
        trx,
        'record_errors',
        ['ingestion_id', 'chunk_seq', 'record_index', 'record', 'errors', 'created_at'],
        HOSTILE_TEXTS.map((text, index) => ['in_bulk', 1, index, text, `[${JSON.stringify(text)}]`, 'now']),
      ),
    );
    const rows = await store.db
      .selectFrom('record_errors')
      .select(['record_index', 'record', 'errors'])
      .where('ingestion_id', '=', 'in_bulk')
      .orderBy('record_index')
      .execute();
    expect(rows.map((r) => r.record)).toEqual(HOSTILE_TEXTS);
    expect(rows.map((r) => JSON.parse(r.errors) as string[])).toEqual(HOSTILE_TEXTS.map((t) => [t]));
  });

  it('stores nulls as nulls and numbers as numbers', async () => {
    const bulkInsert = createBulkInsert(store);
    await store.db
      .transaction()
      .execute((trx) =>
        bulkInsert(
          trx,
          'journals',
          [
            'journal_id',
            'ingestion_id',
            'record_id',
            'core_date',
            'original_core_date',
            'journal_type',
            'accounting_config',
            'node',
            'posted',
            'line_count',
            'created_at',
          ],
          [['j1', 'in_bulk', 9_007_199_254_740_991, '2026-01-02', null, 'PERM', 'IFRS', '{}', 1, 2, 'now']],
        ),
      );
    const row = await store.db
      .selectFrom('journals')
      .select(['record_id', 'original_core_date', 'posted', 'reverses'])
      .where('journal_id', '=', 'j1')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({
      record_id: 9_007_199_254_740_991,
      original_core_date: null,
      posted: 1,
      reverses: null,
    });
  });

  it('rolls back with the transaction and reports a broken reference', async () => {
    const bulkInsert = createBulkInsert(store);
    const failed = await store.db
      .transaction()
      .execute((trx) =>
        bulkInsert(
          trx,
          'record_errors',
          ['ingestion_id', 'chunk_seq', 'record_index', 'record', 'errors', 'created_at'],
          [['in_nobody', 1, 0, '{}', '[]', 'now']],
        ),
      )
      .then(
        () => undefined,
        (error: unknown) => error as { code?: string },
      );
    expect(failed?.code).toMatch(/^(23503|SQLITE_CONSTRAINT_FOREIGNKEY)$/);
  });
});

describe('the COPY text format', () => {
  it('writes null as \\N, separates fields by tabs and rows by new lines, and escapes syntax', () => {
    expect(
      copyText([
        ['a\tb', null, 12],
        ['c\\d', 'e\nf', ''],
      ]),
    ).toBe('a\\tb\t\\N\t12\nc\\\\d\te\\nf\t\n');
  });
});

describe("a chunk's write", () => {
  let store: Store;
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    ({ store, dispose } = await createTestStore());
    await insertOpenSession(store, 'in_texts', 'ledger', 'businessEvent');
  });
  afterAll(async () => dispose());

  it('stores its records and failed records exactly as serialised, line feeds in their values included', async () => {
    const accepted = acceptedRecordsOf(HOSTILE_TEXTS.map((text, i) => ({ index: 2 * i, value: { text } })));
    const failedKept = HOSTILE_TEXTS.map((text, i) => ({
      index: 2 * i + 1,
      record: { text },
      errors: [{ field: 'text', code: 'type', message: text }],
    }));
    const at = new Date().toISOString();
    const result = await createIngestionStore(store).commitChunk({
      ingestionId: 'in_texts',
      namespace: 'ledger',
      entity: 'businessEvent',
      chunkName: 'texts',
      idempotencyKey: null,
      bodySha256: null,
      accepted,
      failed: failedKept.slice(0, 2),
      failedOmitted: failedKept.length - 2,
      failedKept,
      totalRows: HOSTILE_TEXTS.length + failedKept.length,
      rejected: false,
      awaitsProcessing: false,
      reference: 'texts',
      at,
      nowMs: Date.parse(at),
      revision: 0,
    });
    expect(result.kind).toBe('stored');
    const records = await store.db
      .selectFrom('records')
      .select(['record_index', 'data'])
      .where('ingestion_id', '=', 'in_texts')
      .orderBy('record_id')
      .execute();
    expect(records).toEqual(
      HOSTILE_TEXTS.map((text, i) => ({ record_index: 2 * i, data: JSON.stringify({ text }) })),
    );
    const errors = await store.db
      .selectFrom('record_errors')
      .select(['record_index', 'record', 'errors'])
      .where('ingestion_id', '=', 'in_texts')
      .orderBy('record_index')
      .execute();
    expect(errors).toEqual(
      failedKept.map((f) => ({
        record_index: f.index,
        record: JSON.stringify(f.record),
        errors: JSON.stringify(f.errors),
      })),
    );
  });
});
