import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/storage/store.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { apiClient, eventually, type ServerProcess, startE2eServer } from '../helpers/server.js';
import { createTestDatabaseUrl, dropTestDatabase, TEST_DIALECT } from '../helpers/store.js';
import { eventsOf, startReceiver } from '../helpers/webhook-receiver.js';

type Api = Awaited<ReturnType<typeof apiClient>>;

const ENV = { BUSINESS_DATE: '2026-11-20', WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true' };

/** Uploads the configuration, creates the secret and a subscription to `ingestion.closed`; its id. */
async function subscribe(api: Api, url: string): Promise<number> {
  expect((await api('PUT', '/api/v1/configuration/bulk', realisticConfiguration())).status).toBe(200);
  expect((await api('POST', '/api/v1/event-deliveries/secrets')).status).toBe(201);
  const created = await api('POST', '/api/v1/event-deliveries/subscriptions', {
    url,
    eventTypes: ['ingestion.closed'],
  });
  expect(created.status).toBe(201);
  return (created.body as { id: number }).id;
}

/** Opens and closes `count` sessions, each one `ingestion.closed` event; their ids. */
async function closeSessions(api: Api, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const opened = await api('POST', '/api/v1/ingestions', { namespace: 'loans', entity: 'loanTransaction' });
    const id = (opened.body as { ingestionId: string }).ingestionId;
    expect((await api('PATCH', `/api/v1/ingestions/${id}`, { state: 'closed' })).status).toBe(200);
    ids.push(id);
  }
  return ids;
}

/** Issue 26: no event lost across a SIGKILL, and one attempt per delivery with two instances. */
describe('webhooks across processes', () => {
  const urls: string[] = [];
  afterAll(async () => {
    for (const url of urls) await dropTestDatabase(url);
  });

  it('delivers every event committed before a SIGKILL once the service is back', async () => {
    const databaseUrl = await createTestDatabaseUrl({ file: true });
    urls.push(databaseUrl);
    const receiver = await startReceiver();
    let server = await startE2eServer(databaseUrl, ENV);
    try {
      let api = await apiClient(server.url);
      const subscription = await subscribe(api, receiver.url);
      // Paused, the events are committed and wait: none can be delivered before the kill.
      expect((await api('POST', `/api/v1/event-deliveries/subscriptions/${subscription}/pause`)).status).toBe(
        200,
      );
      const closed = await closeSessions(api, 20);
      await server.kill();
      expect(receiver.received).toHaveLength(0);
      server = await startE2eServer(databaseUrl, ENV);
      // A secret exists and WEBHOOK_SECRETS_KEY is unset: the start says how little the key protects.
      expect(server.output()).toContain('WEBHOOK_SECRETS_KEY is not set');
      api = await apiClient(server.url);
      expect(
        (await api('POST', `/api/v1/event-deliveries/subscriptions/${subscription}/resume`)).status,
      ).toBe(200);
      await eventually(async () => (receiver.received.length >= closed.length ? true : undefined));
      const delivered = eventsOf(receiver).map((e) => e.data.ingestionId);
      expect(new Set(delivered)).toEqual(new Set(closed));
      expect(delivered).toHaveLength(closed.length);
    } finally {
      await server.stop();
      await receiver.close();
    }
  });

  it.runIf(TEST_DIALECT === 'postgres')(
    'makes each attempt on one instance when two share one PostgreSQL',
    async () => {
      const databaseUrl = await createTestDatabaseUrl();
      urls.push(databaseUrl);
      const receiver = await startReceiver();
      const servers: ServerProcess[] = [];
      try {
        servers.push(
          ...(await Promise.all([startE2eServer(databaseUrl, ENV), startE2eServer(databaseUrl, ENV)])),
        );
        const [apiA, apiB] = await Promise.all(servers.map((s) => apiClient(s.url)));
        if (apiA === undefined || apiB === undefined) throw new Error('no instance');
        await subscribe(apiA, receiver.url);
        const closed = (await Promise.all([closeSessions(apiA, 100), closeSessions(apiB, 100)])).flat();
        await eventually(async () => (receiver.received.length >= closed.length ? true : undefined), 90_000);
        const store = openStore(databaseUrl);
        try {
          // The receiver has every event; an instance records an attempt's outcome just after its
          // answer arrives, so the last outcomes may be a moment behind.
          await eventually(async () => {
            const waiting = await store.db
              .selectFrom('event_deliveries')
              .select((eb) => eb.fn.countAll<string>().as('n'))
              .where('status', '!=', 'delivered')
              .executeTakeFirstOrThrow();
            return Number(waiting.n) === 0 ? true : undefined;
          }, 30_000);
          const attempts = await store.db
            .selectFrom('event_deliveries')
            .select((eb) => eb.fn.sum<string>('attempts').as('n'))
            .executeTakeFirstOrThrow();
          expect(Number(attempts.n)).toBe(closed.length);
        } finally {
          await store.close();
        }
        // Each event once: no instance repeated another's attempt.
        const ids = eventsOf(receiver).map((e) => e.event_id);
        expect(new Set(ids).size).toBe(closed.length);
        expect(ids).toHaveLength(closed.length);
        // Both instances sent some, and their counts add up to the attempts.
        const counts = await Promise.all(
          servers.map(async (s) => {
            const text = await (await fetch(`${s.url}/metrics`)).text();
            return Number(
              /webhook_delivery_attempts_total\{outcome="delivered"\} (\d+)/.exec(text)?.[1] ?? 0,
            );
          }),
        );
        expect(counts.reduce((a, b) => a + b, 0)).toBe(closed.length);
      } finally {
        await Promise.all(servers.map((s) => s.stop()));
        await receiver.close();
      }
    },
    240_000,
  );
});
