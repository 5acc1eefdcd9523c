import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AccountingProcessor,
  PROCESSING_CHUNK_ATTEMPTS_MAX,
  PROCESSING_RETRIES_IN_A_ROW_MAX,
} from '../../src/modules/accounting/processor.js';
import type { AccountingStore, ChunkOutcome, ClaimedChunk } from '../../src/modules/accounting/store.js';
import { createAccountingStore } from '../../src/storage/accounting/accounting-store.js';
import { StoreUnavailableError } from '../../src/storage/errors.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ingestClosedSession, uploadRealisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { TEST_DIALECT } from '../helpers/store.js';

/** The product code that marks the record a test's fault is about. */
const POISON = 'POISON';

const isPoisoned = (chunk: ClaimedChunk) => chunk.records.some((r) => r.data.productCode === POISON);

/**
 * Issue 20, point 1: whatever fails while a chunk is processed (a store that refuses a write, a
 * fault that may pass but does not) is recorded against the chunk's records as
 * `processing-failed`, the chunk ends processed, its session completes and later sessions are
 * processed; the queue never stalls.
 */
describe('a chunk whose processing fails', () => {
  let t: TestApp;
  let token: string;
  const reported: Error[] = [];
  beforeAll(async () => {
    t = await createTestApp({ businessDate: '2026-11-20' });
    token = await t.tokenFor(['bulk-operator']);
    await uploadRealisticConfiguration(t, token);
  });
  afterAll(async () => t?.close());

  /** A closed session of `ledger/entity` holding one chunk of `data`; its id. */
  function ingest(data: unknown[], entity = 'businessEvent'): Promise<string> {
    return ingestClosedSession(t, token, entity, data);
  }

  const get = async (url: string) => (await t.call(token, { method: 'GET', url })).json();

  /** A processor on `store`, which the test has wrapped with its fault. */
  const processorOn = (store: AccountingStore) =>
    new AccountingProcessor(store, t.services.snapshots, t.clock, {
      businessDatePinned: '2026-11-20',
      chunkRetryDelayMsMin: 1,
      onError: (error) => reported.push(error as Error),
    });

  /** The store, with `change` applied to what each chunk's work produced before it is written. */
  function withOutcome(
    change: (chunk: ClaimedChunk, outcome: ChunkOutcome) => ChunkOutcome,
  ): AccountingStore {
    const real = createAccountingStore(t.store);
    return {
      ...real,
      processNextChunk: (revision, at, work) =>
        real.processNextChunk(revision, at, async (chunk) => change(chunk, await work(chunk))),
    };
  }

  it('records a chunk the store refuses to write as processing-failed, once, and goes on', async () => {
    const failing = await ingest([businessEvent(), businessEvent({ productCode: POISON })]);
    const later = await ingest([businessEvent({ amount: '7.00' })]);
    // Every store refuses a journal without a journal type (a NOT NULL column).
    const refusing = withOutcome((chunk, outcome) =>
      isPoisoned(chunk)
        ? {
            ...outcome,
            journals: outcome.journals.map((j) => ({
              ...j,
              draft: { ...j.draft, journalType: null as unknown as string },
            })),
          }
        : outcome,
    );
    reported.length = 0;
    expect(await processorOn(refusing).drain()).toBe(3);
    // Refused at once: a store that refuses a write will refuse it again.
    expect(reported).toHaveLength(1);
    expect(reported[0]?.message).toContain('recorded as processing-failed');

    expect(await get(`/api/v1/ingestions/${failing}`)).toMatchObject({
      processingStatus: 'completed_with_errors',
    });
    const errors = await get(`/api/v1/processing-errors?ingestionId=${failing}`);
    expect(errors.totalSize).toBe(2);
    for (const error of errors.data) {
      expect(error).toMatchObject({
        code: 'processing-failed',
        namespace: 'ledger',
        entity: 'businessEvent',
      });
      expect(error.message).toContain('could not be processed');
    }
    expect(errors.data.map((e: { record: { productCode: string } }) => e.record.productCode)).toEqual([
      'MORTGAGE',
      POISON,
    ]);
    expect((await get(`/api/v1/journals?ingestionId=${failing}`)).totalSize).toBe(0);
    // The later session was processed as usual.
    expect(await get(`/api/v1/ingestions/${later}`)).toMatchObject({ processingStatus: 'completed' });
    expect((await get(`/api/v1/journals?ingestionId=${later}`)).totalSize).toBe(2);
    // The failure marks were written with the processed marks: recording them again finds nothing.
    expect(
      await createAccountingStore(t.store).failChunk({ ingestionId: failing, chunkSeq: 1 }, 'x', {
        code: 'processing-failed',
        message: 'again',
      }),
    ).toBe(0);
    expect((await get(`/api/v1/processing-errors?ingestionId=${failing}`)).totalSize).toBe(2);
  });

  it('tries a fault that may pass again, and processes the chunk when it passes', async () => {
    const flaky = await ingest([businessEvent({ productCode: POISON })]);
    let faults = 2;
    const unavailable = withOutcome((chunk, outcome) => {
      if (isPoisoned(chunk) && faults > 0) {
        faults -= 1;
        throw new StoreUnavailableError('the connection was lost');
      }
      return outcome;
    });
    reported.length = 0;
    expect(await processorOn(unavailable).drain()).toBe(1);
    expect(reported.map((e) => e.message)).toEqual([
      expect.stringContaining(`attempt 1 of ${PROCESSING_CHUNK_ATTEMPTS_MAX}`),
      expect.stringContaining(`attempt 2 of ${PROCESSING_CHUNK_ATTEMPTS_MAX}`),
    ]);
    expect(await get(`/api/v1/ingestions/${flaky}`)).toMatchObject({ processingStatus: 'completed' });
    expect((await get(`/api/v1/journals?ingestionId=${flaky}`)).totalSize).toBe(2);
  });

  it('records a fault that does not pass after the last attempt, and goes on', async () => {
    const broken = await ingest([businessEvent({ productCode: POISON })]);
    const later = await ingest([businessEvent()]);
    const unavailable = withOutcome((chunk, outcome) => {
      if (isPoisoned(chunk)) throw new StoreUnavailableError('postgres://ledger:s3cret@db/ledger is gone');
      return outcome;
    });
    reported.length = 0;
    expect(await processorOn(unavailable).drain()).toBe(2);
    expect(reported).toHaveLength(PROCESSING_CHUNK_ATTEMPTS_MAX);
    // What is logged says no more than what is stored: no password, no cause to serialize.
    for (const error of reported) {
      expect(error.message).toContain('is gone');
      expect(error.message).not.toContain('s3cret');
      expect(error.cause).toBeUndefined();
    }
    const errors = (await get(`/api/v1/processing-errors?ingestionId=${broken}`)).data;
    expect(errors).toHaveLength(1);
    expect(errors[0].code).toBe('processing-failed');
    expect(errors[0].message).toContain('is gone');
    expect(errors[0].message).not.toContain('s3cret');
    expect(await get(`/api/v1/ingestions/${later}`)).toMatchObject({ processingStatus: 'completed' });
  });

  it('gives a round up after too many answers in a row to try again', async () => {
    const real = createAccountingStore(t.store);
    let calls = 0;
    const alwaysStale: AccountingStore = {
      ...real,
      processNextChunk: async () => {
        calls += 1;
        return { kind: 'retry', reason: 'stale-configuration' };
      },
    };
    await expect(processorOn(alwaysStale).drain()).rejects.toThrow(/try again 16 times in a row/);
    expect(calls).toBe(PROCESSING_RETRIES_IN_A_ROW_MAX);
  });

  it('records a chunk whose text was stored before it was refused at ingestion', async () => {
    // What an older release accepted: a NUL in the origin journal id of a direct journal, which
    // PostgreSQL cannot take in a query or a column, so its chunk failed there for ever.
    const line = (account: string, amount: string) => ({
      coreDate: '2026-11-20',
      journalType: 'PERM',
      accountingConfig: 'IFRS',
      account,
      transactionAmount: amount,
      transactionCurrency: 'EUR',
      originJournalId: 'OLD-1',
      legalEntity: 'LF_NL',
      branch: 'AMS',
    });
    const old = await ingest([line('1300', '5.00'), line('2100', '-5.00')], 'journal');
    const later = await ingest([businessEvent()]);
    for (const [index, account, amount] of [
      [0, '1300', '5.00'],
      [1, '2100', '-5.00'],
    ] as const) {
      await t.store.db
        .updateTable('records')
        .set({ data: JSON.stringify({ ...line(account, amount), originJournalId: 'OLD\u00001' }) })
        .where('ingestion_id', '=', old)
        .where('record_index', '=', index)
        .execute();
    }
    expect(await t.services.processor.drain()).toBe(3);
    const errors = (await get(`/api/v1/processing-errors?ingestionId=${old}`)).data;
    // SQLite holds a NUL in text, so there the journal is booked.
    expect(errors.map((e: { code: string }) => e.code)).toEqual(
      TEST_DIALECT === 'postgres' ? ['processing-failed', 'processing-failed'] : [],
    );
    expect((await get(`/api/v1/ingestions/${old}`)).processingStatus).toMatch(/^completed/);
    expect(await get(`/api/v1/ingestions/${later}`)).toMatchObject({ processingStatus: 'completed' });
  });

  it('gives a chunk up when processing stops between two of its records: nothing written, failed or reported', async () => {
    // The processing thread reads the stop from memory it shares with the main thread, so a
    // stop on a loaded machine does not wait for the work of the chunk in progress.
    const session = await ingest([
      businessEvent({ amount: '1.00' }),
      businessEvent({ amount: '2.00' }),
      businessEvent({ amount: '3.00' }),
    ]);
    reported.length = 0;
    // The stop comes once the first record is done: the work reads it before the second.
    let reads = 0;
    const stopping = new AccountingProcessor(createAccountingStore(t.store), t.services.snapshots, t.clock, {
      businessDatePinned: '2026-11-20',
      onError: (error) => reported.push(error as Error),
      stopping: () => {
        reads += 1;
        return reads > 1;
      },
    });
    expect(await stopping.drain()).toBe(0);
    expect(reads).toBe(2);
    expect(reported).toEqual([]);
    expect(await get(`/api/v1/ingestions/${session}`)).toMatchObject({ processingStatus: 'pending' });
    expect((await get(`/api/v1/journals?ingestionId=${session}`)).totalSize).toBe(0);
    expect((await get(`/api/v1/processing-errors?ingestionId=${session}`)).totalSize).toBe(0);

    // The next start processes the chunk whole: LF_NL/AMS has both bases, two journals an event.
    expect(await processorOn(createAccountingStore(t.store)).drain()).toBe(3);
    expect(reported).toEqual([]);
    expect(await get(`/api/v1/ingestions/${session}`)).toMatchObject({ processingStatus: 'completed' });
    expect((await get(`/api/v1/journals?ingestionId=${session}`)).totalSize).toBe(6);
  });
});
