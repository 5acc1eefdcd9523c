import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestDigest } from '../../src/lib/idempotency.js';
import { migrateTo, migrateToLatest } from '../../src/storage/migrations/index.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { closedSessionRow, createTestDatabaseUrl, dropTestDatabase } from '../helpers/store.js';

const ingestionId = `in_${'c'.repeat(32)}`;
const at = '2026-11-20T10:00:00.000Z';

/** A reversal request row; `key` its idempotency key. */
function reversal(id: string, clientId: string, key: string | null) {
  return {
    id,
    reason: 'wrong feed',
    selection: JSON.stringify({ ingestionId }),
    posting_date: null,
    created_by: 'someone@example.test',
    client_id: clientId,
    created_at: at,
    revision: 1,
    idempotency_key: key,
    request_digest: 'd',
    journals: 0,
    lines: 0,
    already_reversed: 0,
    not_reversible: 0,
    details: '{}',
  };
}

/**
 * Migration 0022 adds the reversal requests and the request of each reversal journal over a
 * store that already holds journals: those are no reversal journals (`reversal_id` null), and an
 * idempotency key is unique per client. Runs on the dialect of TEST_DATABASE_URL.
 */
describe('migration 0022: reversal requests', () => {
  let url: string;
  let store: Store;
  beforeAll(async () => {
    url = await createTestDatabaseUrl();
    store = openStore(url);
    await migrateTo(store, '0021-journal-withdrawal');
    const db = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    await db.insertInto('ingestions').values(closedSessionRow(ingestionId, at)).execute();
    await db
      .insertInto('journals')
      .values({
        journal_id: 'j-before',
        ingestion_id: ingestionId,
        record_id: 1,
        core_date: '2026-11-20',
        original_core_date: null,
        journal_type: 'PERM',
        accounting_config: 'IFRS',
        node: '{"legalEntity":"NL01"}',
        posted: 1,
        reverses: null,
        reversed_by: null,
        origin_journal_id: 'ORIGIN-1',
        line_count: 2,
        created_at: at,
      })
      .execute();
    await migrateTo(store, '0022-reversals');
  });
  afterAll(async () => {
    await store?.close();
    if (url !== undefined) await dropTestDatabase(url);
  });

  it('keeps the journals stored before as journals of no reversal request', async () => {
    const rows = await store.db
      .selectFrom('journals')
      .select(['journal_id', 'reversal_id', 'withdrawn_by'])
      .where('origin_journal_id', '=', 'ORIGIN-1')
      .execute();
    expect(rows).toEqual([{ journal_id: 'j-before', reversal_id: null, withdrawn_by: null }]);
    expect(
      await store.db.selectFrom('journals').select('journal_id').where('reversal_id', '=', 'r-1').execute(),
    ).toEqual([]);
  });

  it('refuses a second request under one client and key, and takes requests without a key or of another client', async () => {
    await store.db
      .insertInto('reversals')
      .values(reversal('r-1', 'client-a', 'k'))
      .execute();
    await expect(
      store.db
        .insertInto('reversals')
        .values(reversal('r-2', 'client-a', 'k'))
        .execute(),
    ).rejects.toThrow(/unique/i);
    await store.db
      .insertInto('reversals')
      .values([
        reversal('r-3', 'client-b', 'k'),
        reversal('r-4', 'client-a', null),
        reversal('r-5', 'client-a', null),
      ])
      .execute();
    const ids = await store.db.selectFrom('reversals').select('id').orderBy('id').execute();
    expect(ids.map((r) => r.id)).toEqual(['r-1', 'r-3', 'r-4', 'r-5']);
  });
});

/**
 * Migration 0035 moves the idempotency keys of the reversals made before into the change runner's
 * kept answers, as the runner keeps them, and drops the reversal row's own key and digest.
 */
describe('migration 0035: reversal keys kept as the change runner keeps answers', () => {
  let url: string;
  let store: Store;
  beforeAll(async () => {
    url = await createTestDatabaseUrl();
    store = openStore(url);
    await migrateTo(store, '0034-change-answers');
    const db = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    await db
      .insertInto('reversals')
      .values([
        reversal('r-1', 'client-a', 'k'),
        { ...reversal('r-2', 'client-b', 'k'), posting_date: '2026-11-30' },
        reversal('r-3', 'client-a', null),
      ])
      .execute();
    await migrateToLatest(store);
  });
  afterAll(async () => {
    await store?.close();
    if (url !== undefined) await dropTestDatabase(url);
  });

  it('keeps each key as the answer of its reversal, under its client, with the digest of its request', async () => {
    const kept = await store.db.selectFrom('change_answers').selectAll().orderBy('client_id').execute();
    const request = { selection: { ingestionId }, reason: 'wrong feed' };
    expect(kept).toEqual([
      {
        client_id: 'client-a',
        idempotency_key: 'k',
        action: 'journals.reverse',
        digest: requestDigest({ action: 'journals.reverse', request }),
        answer: JSON.stringify({ reversalId: 'r-1' }),
        created_at: at,
      },
      {
        client_id: 'client-b',
        idempotency_key: 'k',
        action: 'journals.reverse',
        digest: requestDigest({
          action: 'journals.reverse',
          request: { ...request, postingDate: '2026-11-30' },
        }),
        answer: JSON.stringify({ reversalId: 'r-2' }),
        created_at: at,
      },
    ]);
  });

  it('drops the key and the digest from the reversals, keeping every reversal', async () => {
    const rows = await store.db.selectFrom('reversals').selectAll().orderBy('id').execute();
    expect(rows.map((r) => r.id)).toEqual(['r-1', 'r-2', 'r-3']);
    for (const row of rows) {
      expect(row).not.toHaveProperty('idempotency_key');
      expect(row).not.toHaveProperty('request_digest');
    }
  });
});
