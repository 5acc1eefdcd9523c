import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/storage/store.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { apiClient, eventually, startE2eServer } from '../helpers/server.js';
import { createTestDatabaseUrl, dropTestDatabase } from '../helpers/store.js';
import { expectBalancesKept } from '../storage/balances-oracle.js';

type Session = { ingestionId: string; processingStatus: string };

/**
 * Balances are kept in the transactions that write the lines (issue 22), so a process killed
 * (SIGKILL) in the middle of a backlog leaves them equal to the posted lines, and so does the
 * rest of the backlog processed after the restart.
 */
describe('balances kept across a killed process', () => {
  const urls: string[] = [];
  afterAll(async () => {
    for (const url of urls) await dropTestDatabase(url);
  });

  it('equal the posted lines after a kill in the middle of processing, a restart and the drain', async () => {
    const databaseUrl = await createTestDatabaseUrl({ file: true });
    urls.push(databaseUrl);
    const env = { BUSINESS_DATE: '2026-11-20' };
    let server = await startE2eServer(databaseUrl, env);
    let api = await apiClient(server.url);
    expect((await api('PUT', '/api/v1/configuration/bulk', realisticConfiguration())).status).toBe(200);
    const session = (
      await api('POST', '/api/v1/ingestions', { namespace: 'ledger', entity: 'businessEvent' })
    ).body as Session;
    const CHUNKS = 16;
    const PER_CHUNK = 1_000;
    const LANES = 4;
    let killed = false;
    const sender = async (lane: number) => {
      for (let c = lane; c < CHUNKS && !killed; c += LANES) {
        const data = Array.from({ length: PER_CHUNK }, (_, i) => {
          const n = c * PER_CHUNK + i;
          return businessEvent({
            eventType: ['LOAN_DISBURSEMENT', 'INTEREST_ACCRUAL', 'FEE_CHARGED'][n % 3],
            effectiveDate: ['2026-11-19', '2026-11-20', '2026-11-23'][n % 3 === 0 ? 1 : n % 3],
            amount: [`${n + 1}.5`, `${n + 1}.01`, `${n + 1}`, `0.${n % 1000}`][n % 4],
            currency: n % 5 === 0 ? 'USD' : 'EUR',
            ...(n % 2 === 0 ? { legalEntity: 'LF_US', branch: 'NYC' } : {}),
          });
        });
        try {
          await api('POST', `/api/v1/ingestions/${session.ingestionId}`, { data });
        } catch {
          // The connection died with the process: this chunk was in flight.
        }
      }
    };
    const senders = Array.from({ length: LANES }, (_, lane) => sender(lane));

    // Kill once some events are processed and at least a chunk's worth wait (as
    // test/e2e/durability.test.ts does), so the kill lands while the processor writes.
    const store = openStore(databaseUrl);
    try {
      const progress = async () => {
        const row = await store.db
          .selectNoFrom((eb) => [
            eb
              .selectFrom('records')
              .where('processing', '=', 1)
              .select(eb.fn.countAll().as('n'))
              .as('waiting'),
            eb.selectFrom('journals').select(eb.fn.countAll().as('n')).as('journals'),
          ])
          .executeTakeFirstOrThrow();
        return { waiting: Number(row.waiting), journals: Number(row.journals) };
      };
      await eventually(
        async () => {
          const now = await progress();
          return now.journals > 0 && now.waiting >= PER_CHUNK ? true : undefined;
        },
        150_000,
        5,
      );
      await server.kill();
      killed = true;
      await Promise.all(senders);
      expect((await progress()).waiting).toBeGreaterThan(0);
      await expectBalancesKept(store, ['2026-11-19', '2026-11-20']);
    } finally {
      await store.close();
    }

    server = await startE2eServer(databaseUrl, env);
    api = await apiClient(server.url);
    try {
      expect(
        (await api('PATCH', `/api/v1/ingestions/${session.ingestionId}`, { state: 'closed' })).status,
      ).toBe(200);
      await eventually(async () => {
        const answer = (await api('GET', `/api/v1/ingestions/${session.ingestionId}`)).body as Session;
        return answer.processingStatus === 'completed' ? answer : undefined;
      }, 150_000);
    } finally {
      await server.stop();
    }
    const after = openStore(databaseUrl);
    try {
      expect(await expectBalancesKept(after, ['2026-11-19', '2026-11-20', '2026-11-23'])).toBeGreaterThan(4);
    } finally {
      await after.close();
    }
  });
});
