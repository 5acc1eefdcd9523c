import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { apiClient, eventually, type ServerProcess, startE2eServer } from '../helpers/server.js';
import { createTestDatabaseUrl, dropTestDatabase, TEST_DIALECT } from '../helpers/store.js';

type Api = Awaited<ReturnType<typeof apiClient>>;
type Answer = { journals: number; alreadyReversed: number; reversalId: string };

/** Issue 24: a journal is reversed at most once however many instances share one PostgreSQL. */
describe.runIf(TEST_DIALECT === 'postgres')(
  'reversals through two service processes on one PostgreSQL',
  () => {
    let databaseUrl: string;
    let a: ServerProcess;
    let b: ServerProcess;
    let apiA: Api;
    let apiB: Api;

    beforeAll(async () => {
      databaseUrl = await createTestDatabaseUrl();
      const env = { BUSINESS_DATE: '2026-11-20' };
      [a, b] = await Promise.all([startE2eServer(databaseUrl, env), startE2eServer(databaseUrl, env)]);
      [apiA, apiB] = await Promise.all([apiClient(a.url), apiClient(b.url)]);
      expect((await apiA('PUT', '/api/v1/configuration/bulk', realisticConfiguration())).status).toBe(200);
    });
    afterAll(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
      await dropTestDatabase(databaseUrl);
    });

    /** A closed session of `count` events, processed; returns its id and journals. */
    async function postedSession(count: number): Promise<{ ingestionId: string; journals: number }> {
      const { ingestionId } = (
        await apiA('POST', '/api/v1/ingestions', { namespace: 'ledger', entity: 'businessEvent' })
      ).body as { ingestionId: string };
      const data = Array.from({ length: count }, (_, i) =>
        businessEvent({
          eventType: ['LOAN_DISBURSEMENT', 'INTEREST_ACCRUAL'][i % 2],
          amount: `${i + 1}.50`,
        }),
      );
      expect((await apiA('POST', `/api/v1/ingestions/${ingestionId}`, { data })).status).toBe(201);
      await apiA('PATCH', `/api/v1/ingestions/${ingestionId}`, { state: 'closed' });
      await eventually(async () => {
        const view = (await apiB('GET', `/api/v1/ingestions/${ingestionId}`)).body as {
          processingStatus: string;
        };
        return view.processingStatus === 'completed' ? true : undefined;
      }, 150_000);
      const page = (await apiB('GET', `/api/v1/journals?ingestionId=${ingestionId}&limit=1`)).body as {
        totalSize: number;
      };
      return { ingestionId, journals: page.totalSize };
    }

    it('two identical requests through both instances at once: one reverses every journal, the other finds them reversed', async () => {
      const { ingestionId, journals } = await postedSession(2_000);
      const body = { selection: { ingestionId }, reason: 'sent twice' };
      const answers = await Promise.all([
        apiA('POST', '/api/v1/reversals', body),
        apiB('POST', '/api/v1/reversals', body),
      ]);
      const bodies = answers.map((x) => x.body as Answer).sort((x, y) => x.journals - y.journals);
      expect(answers.map((x) => x.status).sort()).toEqual([200, 201]);
      expect(bodies.map((x) => [x.journals, x.alreadyReversed])).toEqual([
        [0, journals],
        [journals, 0],
      ]);
      const after = (await apiA('GET', `/api/v1/journals?ingestionId=${ingestionId}&limit=1`)).body as {
        totalSize: number;
      };
      expect(after.totalSize).toBe(journals * 2);
    });

    it('the same idempotency key through both instances at once: one reversal, one answer', async () => {
      const { ingestionId, journals } = await postedSession(500);
      const body = { selection: { ingestionId }, reason: 'retried' };
      const answers = await Promise.all(
        [apiA, apiB, apiA, apiB].map((api) =>
          api('POST', '/api/v1/reversals', body, { 'idempotency-key': 'once' }),
        ),
      );
      expect(answers.map((x) => x.status)).toEqual([201, 201, 201, 201]);
      expect(new Set(answers.map((x) => JSON.stringify(x.body))).size).toBe(1);
      expect((answers[0]?.body as Answer | undefined)?.journals).toBe(journals);
      const list = (await apiB('GET', '/api/v1/reversals?limit=1000')).body as {
        data: { selection: unknown }[];
      };
      expect(
        list.data.filter((r) => JSON.stringify(r.selection) === JSON.stringify({ ingestionId })),
      ).toHaveLength(1);
    });
  },
);
