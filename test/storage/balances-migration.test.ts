import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountingStore } from '../../src/storage/accounting/accounting-store.js';
import { migrateTo, migrateToLatest } from '../../src/storage/migrations/index.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { closedSessionRow, createTestDatabaseUrl, dropTestDatabase } from '../helpers/store.js';
import { expectBalancesKept } from './balances-oracle.js';

const ingestionId = `in_${'c'.repeat(32)}`;
const AT = '2026-11-20T10:00:00.000Z';
const NL = '{"branch":"AMS","legalEntity":"LF_NL"}';
const US = '{"branch":"NYC","legalEntity":"LF_US"}';

/** A journal row as the service stored it before migration 0012, with its two lines. */
function journal(
  n: number,
  options: {
    config: string;
    node: string;
    coreDate: string;
    posted: boolean;
    amount: string;
    currency: string;
  },
) {
  const journalId = `j-${n}`;
  const negated = options.amount.startsWith('-') ? options.amount.slice(1) : `-${options.amount}`;
  return {
    journal: {
      journal_id: journalId,
      ingestion_id: ingestionId,
      record_id: n,
      core_date: options.coreDate,
      original_core_date: null,
      journal_type: 'PERM',
      accounting_config: options.config,
      node: options.node,
      posted: options.posted ? 1 : 0,
      reverses: null,
      reversed_by: null,
      origin_journal_id: null,
      line_count: 2,
      created_at: AT,
    },
    lines: [
      [1, '1300', options.amount],
      [2, '2100', negated],
    ].map(([lineNo, account, amount]) => ({
      line_id: `${journalId}-${lineNo}`,
      journal_id: journalId,
      line_no: lineNo,
      account,
      amount,
      currency: options.currency,
      extras: '{}',
    })),
  };
}

/**
 * Migration 0012 fills the kept balances from the journals already stored: after it, they equal
 * the sums of the posted lines, as of every date, with the same decimal text; the unposted
 * journals count once posted. Runs on the dialect of TEST_DATABASE_URL.
 */
describe('migration 0012: balances kept, filled from the posted journals stored', () => {
  let url: string;
  let store: Store;
  beforeAll(async () => {
    url = await createTestDatabaseUrl();
    store = openStore(url);
    await migrateTo(store, '0011-admin-sign-ins');
    const db = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    await db.insertInto('ingestions').values(closedSessionRow(ingestionId, AT)).execute();
    const amounts = ['100.50', '-100.5', '7', '0.001', '123456789012345.67', '12.345', '-3', '0.00'];
    const journals = Array.from({ length: 40 }, (_, n) =>
      journal(n, {
        config: n % 3 === 0 ? 'LOCAL_GAAP' : 'IFRS',
        node: n % 4 === 0 ? US : NL,
        coreDate: `2026-11-${String(16 + (n % 8)).padStart(2, '0')}`,
        posted: n % 5 !== 0,
        amount: amounts[n % amounts.length] ?? '1',
        currency: n % 7 === 0 ? 'USD' : 'EUR',
      }),
    );
    await db
      .insertInto('journals')
      .values(journals.map((j) => j.journal))
      .execute();
    await db
      .insertInto('journal_lines')
      .values(journals.flatMap((j) => j.lines))
      .execute();
    await migrateToLatest(store);
  });
  afterAll(async () => {
    await store?.close();
    await dropTestDatabase(url);
  });

  it('fills the balances with the sums of the posted lines, as of every date', async () => {
    const dates = ['2026-11-15', '2026-11-16', '2026-11-19', '2026-11-23', '2026-11-30'];
    const filters = [{ accountingConfig: 'IFRS' }, { currency: 'USD' }, { account: '2100' }];
    expect(await expectBalancesKept(store, dates, filters)).toBeGreaterThan(4);
  });

  it('adds the journals posted after it', async () => {
    const accounting = createAccountingStore(store);
    // Each node with journals waiting for their date, once (a loose scan of the index).
    expect(await accounting.unpostedNodes()).toEqual([
      { branch: 'AMS', legalEntity: 'LF_NL' },
      { branch: 'NYC', legalEntity: 'LF_US' },
    ]);
    expect(await accounting.postDue({ legalEntity: 'LF_NL', branch: 'AMS' }, '2026-11-20')).toBeGreaterThan(
      0,
    );
    expect(await accounting.postDue({ legalEntity: 'LF_US', branch: 'NYC' }, '2026-11-30')).toBeGreaterThan(
      0,
    );
    await expectBalancesKept(store, ['2026-11-19', '2026-11-20', '2026-11-30']);
  });
});
