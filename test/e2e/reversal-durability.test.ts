import { statSync } from 'node:fs';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/storage/store.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { apiClient, eventually, type ServerProcess, startE2eServer } from '../helpers/server.js';
import { createTestDatabaseUrl, dropTestDatabase } from '../helpers/store.js';
import { expectBalancesKept } from '../storage/balances-oracle.js';

type Session = { ingestionId: string; processingStatus: string };

/** What a reversal left in the store: journals withdrawn, reversal journals, requests. */
async function reversalState(store: Store) {
  const count = async (query: Promise<{ n: unknown } | undefined>) => Number((await query)?.n ?? 0);
  return {
    withdrawn: await count(
      store.db
        .selectFrom('journals')
        .where('withdrawn_by', 'is not', null)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirst(),
    ),
    reversalJournals: await count(
      store.db
        .selectFrom('journals')
        .where('reversal_id', 'is not', null)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirst(),
    ),
    requests: await count(
      store.db
        .selectFrom('reversals')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirst(),
    ),
  };
}

/** Whether the service's reversal transaction has written (and not yet committed) journals. */
async function reversalUnderWay(store: Store, databaseUrl: string, walBytesBefore: number): Promise<boolean> {
  if (store.dialect === 'postgres') {
    // A write transaction of the service open for a while: only the reversal's lasts that long.
    const { rows } = await sql<{ n: string }>`
      select count(*) as n from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and backend_xid is not null
        and xact_start < now() - interval '300 milliseconds'`.execute(store.db);
    return Number(rows[0]?.n ?? 0) > 0;
  }
  // SQLite writes the pages of a large transaction to the WAL before it commits.
  return walBytes(databaseUrl) > walBytesBefore + 4 * 1024 * 1024;
}

function walBytes(databaseUrl: string): number {
  try {
    return statSync(`${databaseUrl.slice('sqlite:'.length)}-wal`).size;
  } catch {
    return 0;
  }
}

/**
 * Issue 24: a reversal whose service is killed (SIGKILL) in the middle of its transaction
 * leaves nothing of it: no journal withdrawn, no reversal journal, no request, the balances as
 * they were. After the restart the same request reverses everything once.
 */
describe('a reversal across a killed process', () => {
  const urls: string[] = [];
  afterAll(async () => {
    for (const url of urls) await dropTestDatabase(url);
  });

  it('leaves all or nothing after a kill in the middle of a large reversal, and reverses once after the restart', async () => {
    const databaseUrl = await createTestDatabaseUrl({ file: true });
    urls.push(databaseUrl);
    const env = { BUSINESS_DATE: '2026-11-20' };
    let server: ServerProcess = await startE2eServer(databaseUrl, env);
    let api = await apiClient(server.url);
    const store = openStore(databaseUrl);
    const CHUNKS = 15;
    const PER_CHUNK = 1_000;
    const TYPES = ['LOAN_DISBURSEMENT', 'INTEREST_ACCRUAL', 'FEE_CHARGED'];
    let ingestionId = '';
    let journals = 0;
    try {
      expect((await api('PUT', '/api/v1/configuration/bulk', realisticConfiguration())).status).toBe(200);
      const session = (
        await api('POST', '/api/v1/ingestions', { namespace: 'ledger', entity: 'businessEvent' })
      ).body as Session;
      ingestionId = session.ingestionId;
      for (let c = 0; c < CHUNKS; c += 1) {
        const data = Array.from({ length: PER_CHUNK }, (_, i) =>
          businessEvent({ eventType: TYPES[i % 3], amount: `${c * PER_CHUNK + i + 1}.25` }),
        );
        expect((await api('POST', `/api/v1/ingestions/${ingestionId}`, { data })).status).toBe(201);
      }
      await api('PATCH', `/api/v1/ingestions/${ingestionId}`, { state: 'closed' });
      await eventually(async () => {
        const view = (await api('GET', `/api/v1/ingestions/${ingestionId}`)).body as Session;
        return view.processingStatus === 'completed' ? true : undefined;
      }, 120_000);
      journals = (
        (await api('GET', `/api/v1/journals?ingestionId=${ingestionId}&limit=1`)).body as {
          totalSize: number;
        }
      ).totalSize;
      expect(journals).toBeGreaterThan(35_000);

      const walBefore = walBytes(databaseUrl);
      const answered = api('POST', '/api/v1/reversals', {
        selection: { ingestionId },
        reason: 'killed',
      }).then(
        () => true,
        () => false,
      );
      await eventually(
        async () => ((await reversalUnderWay(store, databaseUrl, walBefore)) ? true : undefined),
        30_000,
        5,
      );
      await server.kill();
      // The request was cut off: it never answered.
      expect(await answered).toBe(false);
    } catch (error) {
      await server.kill();
      await store.close();
      throw error;
    }

    const killed = await reversalState(store);
    expect(killed).toEqual({ withdrawn: 0, reversalJournals: 0, requests: 0 });
    await expectBalancesKept(store, ['2026-11-20']);

    server = await startE2eServer(databaseUrl, env);
    api = await apiClient(server.url);
    try {
      const again = await api('POST', '/api/v1/reversals', {
        selection: { ingestionId },
        reason: 'after restart',
      });
      expect(again.status).toBe(201);
      expect(again.body).toMatchObject({ journals, alreadyReversed: 0 });
      expect(await reversalState(store)).toEqual({
        withdrawn: journals,
        reversalJournals: journals,
        requests: 1,
      });
      await expectBalancesKept(store, ['2026-11-20']);
      const balances = (await api('GET', '/api/v1/balances')).body as { data: { balance: string }[] };
      for (const b of balances.data) expect(Number(b.balance)).toBe(0);
    } finally {
      await server.stop();
      await store.close();
    }
  }, 240_000);
});
