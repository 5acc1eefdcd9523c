import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices, type Services } from '../../src/composition/services.js';
import { systemClock } from '../../src/lib/clock.js';
import type { ExtractCursor } from '../../src/modules/extracts/service.js';
import { postDueJournals } from '../../src/storage/accounting/balances.js';
import { logWrittenJournals } from '../../src/storage/extract-journal-log.js';
import { migrateTo, migrateToLatest } from '../../src/storage/migrations/index.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { createTestDatabaseUrl, dropTestDatabase, insertOpenSession } from '../helpers/store.js';

const INGESTION_ID = `in_${'c'.repeat(32)}`;
const NODE = JSON.stringify({ legalEntity: 'NL01' });

function journal(journalId: string, posted: boolean) {
  return {
    journal_id: journalId,
    ingestion_id: INGESTION_ID,
    record_id: 1,
    core_date: posted ? '2026-03-01' : '2026-03-09',
    original_core_date: null,
    journal_type: 'PERM',
    accounting_config: 'IFRS',
    node: NODE,
    posted: posted ? 1 : 0,
    reverses: null,
    reversed_by: null,
    origin_journal_id: null,
    line_count: 0,
    created_at: '2026-03-01T10:00:00.000Z',
  };
}

/**
 * Migration 0023 gives the journals stored before it their positions: they are the first answer
 * of an incremental extract; a journal stored before it and posted after it enters the posted
 * extract when it posts; journals written after it follow.
 */
describe('migration 0023: extract positions of the journals stored before it', () => {
  let url: string;
  let store: Store;
  let services: Services;
  beforeAll(async () => {
    url = await createTestDatabaseUrl();
    store = openStore(url);
    await migrateTo(store, '0021-journal-withdrawal');
    await insertOpenSession(store, INGESTION_ID, 'ledger', 'businessEvent');
    await store.db
      .insertInto('journals')
      .values([journal('before-posted', true), journal('before-unposted', false)])
      .execute();
    await migrateToLatest(store);
    services = createServices(store, systemClock, {
      accessTokenTtlSeconds: 300,
      refreshTokenTtlSeconds: 1800,
      businessDate: undefined,
    });
  });
  afterAll(async () => {
    await services?.close();
    await store?.close();
    await dropTestDatabase(url);
  });

  const readAndAck = async (id: number): Promise<string[]> => {
    const ids: string[] = [];
    let after: ExtractCursor | undefined;
    do {
      const page = await services.extracts.page(id, after, 1);
      ids.push(...page.rows.map((row) => String(row.journalId)));
      after = page.next;
    } while (after !== undefined);
    await services.extracts.increment(id, { actor: { user: 'test@example.test' } });
    return ids;
  };

  it('answers the journals stored before first, then a posting and new journals once each', async () => {
    const { answer: made } = await services.extracts.create(
      {
        name: 'gl',
        description: null,
        source: 'posted-journals',
        filters: {},
        fields: ['journalId'],
        format: 'jsonl',
        incremental: true,
      },
      { actor: { user: 'test@example.test' } },
    );
    await services.extracts.update(made.id, { state: 'Active' }, { actor: { user: 'test@example.test' } });
    expect(await readAndAck(made.id)).toEqual(['before-posted']);
    await store.db
      .insertInto('journals')
      .values([journal('after-a', true), journal('after-b', true)])
      .execute();
    await logWrittenJournals(store.db, store.adapter, [
      ['after-a', 1],
      ['after-b', 1],
    ]);
    expect(await postDueJournals(store.db, store.adapter, NODE, '2026-03-09')).toBe(1);
    expect((await readAndAck(made.id)).sort()).toEqual(['after-a', 'after-b', 'before-unposted']);
    expect(await readAndAck(made.id)).toEqual([]);
  });
});
