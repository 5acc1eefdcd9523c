import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/lib/errors.js';
import type { JournalDraft } from '../../src/modules/accounting/journal-draft.js';
import type { ChunkProcessing, ClaimedChunk } from '../../src/modules/accounting/store.js';
import { createAccountingStore } from '../../src/storage/accounting/accounting-store.js';
import { createIngestionStore } from '../../src/storage/ingestion-store.js';
import type { Store } from '../../src/storage/store.js';
import { chunkWriteOf, createTestStore, insertOpenSession } from '../helpers/store.js';

const AT = '2026-11-25T12:00:00.000Z';
/** No configuration is stored in these tests: its revision is 0. */
const REVISION = 0;

/** A journal of the record `recordId` with lines of these amounts, all in `currency`. */
function journalOf(
  recordId: number,
  amounts: string[],
  currency = 'EUR',
): { recordId: number; draft: JournalDraft } {
  const journalId = `00000000-0000-7000-8000-${String(recordId).padStart(12, '0')}`;
  return {
    recordId,
    draft: {
      journalId,
      coreDate: '2026-11-25',
      journalType: 'PERMANENT',
      accountingConfig: 'LOCAL_GAAP',
      node: { legalEntity: 'LF_NL' },
      ingestionId: 'in_a',
      status: 'posted',
      lines: amounts.map((amount, index) => ({
        lineId: `00000000-0000-7000-9000-${String(recordId * 100 + index).padStart(12, '0')}`,
        lineNo: index + 1,
        account: index % 2 === 0 ? '1000' : '4000',
        amount,
        currency,
        drCr: amount.startsWith('-') ? 'CR' : 'DR',
        extras: {},
      })),
    },
  };
}

/**
 * The invariants a processing write keeps whatever made its journals: a journal that does not
 * balance per currency, or session counters that would no longer reconcile, stop the write with
 * `invariant-broken`, and nothing of it is committed.
 */
describe('invariants asserted where journals are written', () => {
  let store: Store;
  let dispose: () => Promise<void>;
  beforeEach(async () => {
    ({ store, dispose } = await createTestStore());
    await insertOpenSession(store, 'in_a', 'ledger', 'businessEvent');
    const stored = await createIngestionStore(store).commitChunk({
      ...chunkWriteOf('in_a', 2, AT),
      revision: REVISION,
    });
    expect(stored.kind).toBe('stored');
  });
  afterEach(async () => dispose());

  /** Processes the waiting chunk with `journals` as what processing made of its records. */
  function processWith(
    journalsOf: (chunk: ClaimedChunk) => { recordId: number; draft: JournalDraft }[],
  ): Promise<ChunkProcessing> {
    return createAccountingStore(store).processNextChunk(REVISION, AT, (chunk) => ({
      journals: journalsOf(chunk),
      errors: [],
    }));
  }

  async function written(): Promise<{ journals: number; lines: number; waiting: number }> {
    const count = async (table: 'journals' | 'journal_lines') =>
      Number(
        (
          await store.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number | string>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const waiting = await store.db
      .selectFrom('records')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('processing', '=', 1)
      .executeTakeFirstOrThrow();
    return {
      journals: await count('journals'),
      lines: await count('journal_lines'),
      waiting: Number(waiting.n),
    };
  }

  function brokenRule(processed: ChunkProcessing): string {
    if (processed.kind !== 'failed') throw new Error(`expected a failed write, got ${processed.kind}`);
    expect(processed.transient).toBe(false);
    expect(processed.error).toBeInstanceOf(AppError);
    const error = processed.error as AppError;
    expect(error.code).toBe('invariant-broken');
    return error.message;
  }

  it('writes journals that balance in each currency, exact to the last digit', async () => {
    const processed = await processWith((chunk) =>
      chunk.records.map((r) =>
        journalOf(r.recordId, [
          '0.000000000000000001',
          '1234567890123.45',
          '-1234567890123.450000000000000001',
        ]),
      ),
    );
    expect(processed).toMatchObject({ kind: 'processed', records: 2 });
    expect(await written()).toEqual({ journals: 2, lines: 6, waiting: 0 });
  });

  it('stops a write with a journal off by a cent in one currency, and writes nothing of it', async () => {
    const processed = await processWith((chunk) => [
      journalOf(chunk.records[0]?.recordId ?? 0, ['10.00', '-10.00']),
      journalOf(chunk.records[1]?.recordId ?? 0, ['10.00', '-9.99']),
    ]);
    expect(brokenRule(processed)).toMatch(
      /^a journal balances in each currency: journal .* is off by 10000000000000000 units of 10\^-18 EUR$/,
    );
    expect(await written()).toEqual({ journals: 0, lines: 0, waiting: 2 });
  });

  it('stops a write with a journal balanced in total but not per currency', async () => {
    const processed = await processWith((chunk) => {
      const journal = journalOf(chunk.records[0]?.recordId ?? 0, ['10.00', '-10.00']);
      const [debit, credit] = journal.draft.lines;
      if (debit === undefined || credit === undefined) throw new Error('two lines');
      credit.currency = 'USD';
      return [journal];
    });
    expect(brokenRule(processed)).toMatch(/^a journal balances in each currency: .* EUR$/);
    expect(await written()).toEqual({ journals: 0, lines: 0, waiting: 2 });
  });

  it('stops a write with a journal without lines or with an amount that is not an exact decimal', async () => {
    const empty = await processWith((chunk) => [journalOf(chunk.records[0]?.recordId ?? 0, [])]);
    expect(brokenRule(empty)).toMatch(/^a journal has lines: /);
    const floating = await processWith((chunk) => [
      journalOf(chunk.records[0]?.recordId ?? 0, ['1e2', '-100']),
    ]);
    expect(brokenRule(floating)).toMatch(
      /^an amount is an exact decimal: line 1 of journal .* has amount "1e2"$/,
    );
    expect(await written()).toEqual({ journals: 0, lines: 0, waiting: 2 });
  });

  it('stops a write that would count more records processed than its session stored', async () => {
    // A counter that drifted (a fault elsewhere): processing must not build on it.
    await store.db
      .updateTable('ingestions')
      .set({ success_rows: 1 })
      .where('ingestion_id', '=', 'in_a')
      .execute();
    const processed = await processWith((chunk) =>
      chunk.records.map((r) => journalOf(r.recordId, ['5.00', '-5.00'])),
    );
    expect(brokenRule(processed)).toBe(
      "a session's counters reconcile: session in_a would count 2 records processed (0 of them failed) of 1 stored",
    );
    expect(await written()).toEqual({ journals: 0, lines: 0, waiting: 2 });
  });
});
