import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/storage/store.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import {
  apiClient,
  E2E_CLIENT_ID,
  E2E_CLIENT_SECRET,
  eventually,
  startE2eServer,
} from '../helpers/server.js';
import { createTestDatabaseUrl, dropTestDatabase, insertOpenSession } from '../helpers/store.js';

type Execution = { id: number; latestStatus: string; totalRuns: number; recordCount: number };

const INGESTION_ID = 'in_00000000000000000000000000000e25';
const RECORDS = 200_000;
const BATCH = 1000;

/**
 * An asynchronous extraction whose service is killed (SIGKILL) while it makes the file goes on
 * from its last stored run after a restart, and its file holds every row once, in order
 * (issue 25).
 */
describe('asynchronous extraction across a killed process', () => {
  const urls: string[] = [];
  afterAll(async () => {
    for (const url of urls) await dropTestDatabase(url);
  });

  it('resumes after a kill in the middle of an execution and completes a file with every row once', async () => {
    const databaseUrl = await createTestDatabaseUrl({ file: true });
    urls.push(databaseUrl);
    const env = { BUSINESS_DATE: '2026-11-20' };
    let server = await startE2eServer(databaseUrl, env);
    let api = await apiClient(server.url);
    const store = openStore(databaseUrl);
    try {
      const document = realisticConfiguration();
      (document.configuration.featureFlags as Record<string, boolean>)['extracts-in-bulk'] = true;
      expect((await api('PUT', '/api/v1/configuration/bulk', document)).status).toBe(200);
      // Stored records that nothing processes: the source of a long extract, written quickly.
      await insertOpenSession(store, INGESTION_ID, 'loans', 'loanTransaction');
      const at = new Date().toISOString();
      for (let b = 0; b < RECORDS / BATCH; b += 1)
        await store.db
          .insertInto('records')
          .values(
            Array.from({ length: BATCH }, (_, i) => ({
              ingestion_id: INGESTION_ID,
              chunk_seq: b + 1,
              record_index: i,
              namespace: 'loans',
              entity: 'loanTransaction',
              data: JSON.stringify({ n: b * BATCH + i }),
              processing: 0,
              created_at: at,
            })),
          )
          .execute();
      const created = await api('POST', '/api/v1/extraction-configurations', {
        name: 'all records',
        source: 'records',
        filters: { namespace: 'loans', entity: 'loanTransaction' },
        fields: ['n'],
      });
      const configId = (created.body as { id: number }).id;
      expect(
        (await api('PATCH', `/api/v1/extraction-configurations/${configId}`, { state: 'Active' })).status,
      ).toBe(200);
      const started = await api('POST', `/api/v1/extraction-configurations/${configId}/executions`);
      expect(started.status).toBe(202);
      const executionId = (started.body as Execution).id;

      // Killed once the first runs are stored and before the last.
      await eventually(
        async () => {
          const view = (await api('GET', `/api/v1/extraction-executions/${executionId}`)).body as Execution;
          return view.totalRuns >= 1 ? true : undefined;
        },
        150_000,
        5,
      );
      await server.kill();
      const left = await store.db
        .selectFrom('extraction_executions')
        .select(['status', 'runs', 'records'])
        .where('id', '=', executionId)
        .executeTakeFirstOrThrow();
      expect(left.status).toBe('running');
      expect(Number(left.runs)).toBeGreaterThanOrEqual(1);
      expect(Number(left.records)).toBeLessThan(RECORDS);

      server = await startE2eServer(databaseUrl, env);
      api = await apiClient(server.url);
      const done = await eventually(
        async () => {
          const view = (await api('GET', `/api/v1/extraction-executions/${executionId}`)).body as Execution;
          return view.latestStatus === 'completed' ? view : undefined;
        },
        90_000,
        200,
      );
      expect(done.recordCount).toBe(RECORDS);
      const file = await fetch(`${server.url}/api/v1/extraction-executions/${executionId}/file`, {
        headers: { authorization: (await tokenHeader(server.url)) ?? '' },
      });
      const lines = (await file.text()).split('\n').filter((line) => line !== '');
      expect(lines).toHaveLength(RECORDS);
      const numbers = lines.map((line) => (JSON.parse(line) as { n: number }).n);
      expect(numbers).toEqual(Array.from({ length: RECORDS }, (_, i) => i));
    } finally {
      await store.close();
      await server.stop();
    }
  }, 240_000);
});

/** A bearer header of the e2e credential, for a download read as text. */
async function tokenHeader(url: string): Promise<string | undefined> {
  const response = await fetch(`${url}/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: E2E_CLIENT_ID,
      client_secret: E2E_CLIENT_SECRET,
    }),
  });
  const { access_token: token } = (await response.json()) as { access_token?: string };
  return token === undefined ? undefined : `Bearer ${token}`;
}
