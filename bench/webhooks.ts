import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { EVENT_TYPES } from '../src/modules/events/types.js';
import { recordEvent } from '../src/storage/events/outbox.js';
import { openStore } from '../src/storage/store.js';
import { fullChunks, TRADE_ENTITY, TRADE_NAMESPACE, tradeRecord } from './data.js';
import { recordsPerSecond } from './ingestion.js';
import {
  DIALECT_TITLE,
  formatNumber,
  type RunContext,
  type Section,
  sectionHead,
  stampNow,
  table,
  verdictOf,
} from './report.js';
import {
  type BenchService,
  closeSession,
  type Dialect,
  expectStatus,
  openSession,
  postChunks,
  uploadBenchConfiguration,
  withService,
} from './service.js';

/** Issue 26: events delivered to a local receiver, and the rate they must reach. */
const EVENTS = 10_000;
const DELIVERIES_PER_SECOND_MIN = 1_000;
const DELIVERIES_PER_SECOND_GOAL = 2_000;
/** Ingestion with an active subscription keeps at least 90 % of its speed without one. */
const INGESTION_RATIO_MIN = 0.9;
const INGESTION_RATIO_GOAL = 1.0;
const EVENTS_PER_TRANSACTION = 1_000;
const CHUNKS = 24;
const CLIENTS = 4;
const ROUNDS = 3;
const DEADLINE_MS = 120_000;
const MS_PER_SECOND = 1000;

/** A receiver on loopback that answers 204 at once and counts what it got. */
async function startReceiver(): Promise<{ url: string; count(): number; close(): Promise<void> }> {
  let received = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received += 1;
      response.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    count: () => received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One session of trade chunks sent by `CLIENTS` clients, then closed: records per second. */
async function ingestOnce(service: BenchService): Promise<number> {
  const bodies = fullChunks(CHUNKS, tradeRecord);
  const ingestionId = await openSession(service, TRADE_NAMESPACE, TRADE_ENTITY);
  const timing = await postChunks(service, ingestionId, bodies, CLIENTS);
  await closeSession(service, ingestionId);
  return recordsPerSecond({
    records: timing.records,
    bytes: timing.bytes,
    ms: timing.endMs - timing.startMs,
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

interface Measured {
  storage: string;
  withoutRate: number;
  withRate: number;
  deliveredMs: number;
}

async function measure(service: BenchService): Promise<Measured> {
  const receiver = await startReceiver();
  try {
    await uploadBenchConfiguration(service);
    expectStatus(await service.request('POST', '/api/v1/event-deliveries/secrets'), 201, 'POST secrets');
    const created = await service.request('POST', '/api/v1/event-deliveries/subscriptions', {
      url: receiver.url,
      eventTypes: EVENT_TYPES,
    });
    expectStatus(created, 201, 'POST subscriptions');
    const id = (created.body as { id: number }).id;
    // Rounds alternate without and with the active subscription, so both see the same machine.
    const without: number[] = [];
    const withSubscription: number[] = [];
    await ingestOnce(service);
    for (let round = 0; round < ROUNDS; round += 1) {
      expectStatus(
        await service.request('POST', `/api/v1/event-deliveries/subscriptions/${id}/pause`),
        200,
        'pause',
      );
      without.push(await ingestOnce(service));
      expectStatus(
        await service.request('POST', `/api/v1/event-deliveries/subscriptions/${id}/resume`),
        200,
        'resume',
      );
      withSubscription.push(await ingestOnce(service));
      console.log(
        `webhooks ${service.dialect} round ${round + 1}: ingestion ${formatNumber(without.at(-1) ?? 0)} records/s without, ${formatNumber(withSubscription.at(-1) ?? 0)} with an active subscription`,
      );
    }
    // The events of the rounds are delivered before the 10,000 are recorded.
    const deadline = Date.now() + DEADLINE_MS;
    while (receiver.count() < 2 * ROUNDS + 2 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const before = receiver.count();
    // The 10,000 events go into the outbox as the service's own transactions write them.
    const store = openStore(service.databaseUrl);
    const at = new Date().toISOString();
    try {
      for (let written = 0; written < EVENTS; written += EVENTS_PER_TRANSACTION)
        await store.db.transaction().execute(async (trx) => {
          for (let i = 0; i < EVENTS_PER_TRANSACTION; i += 1)
            await recordEvent(
              trx,
              'configuration.changed',
              {
                revision: written + i,
                version: 'bench',
                actor: 'bench',
                processingData: 'kept',
                deleted: {},
              },
              at,
            );
        });
    } finally {
      await store.close();
    }
    const startMs = performance.now();
    while (receiver.count() < before + EVENTS) {
      if (Date.now() > deadline)
        throw new Error(`${receiver.count() - before} of ${EVENTS} events delivered in time`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return {
      storage: service.storage,
      withoutRate: median(without),
      withRate: median(withSubscription),
      deliveredMs: performance.now() - startMs,
    };
  } finally {
    await receiver.close();
  }
}

/**
 * `npm run bench -- webhooks`: ingestion speed with and without an active subscription to every
 * event type (rounds alternate), then 10,000 events recorded in the outbox and delivered to a
 * receiver on loopback, from the commit of the last to the last answered.
 */
export async function runWebhooks(context: RunContext, dialects: readonly Dialect[]): Promise<Section[]> {
  const sections: Section[] = [];
  for (const dialect of dialects) {
    const stamp = stampNow();
    const measured = await withService(dialect, measure, { WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true' });
    const rate = (EVENTS / measured.deliveredMs) * MS_PER_SECOND;
    const ratio = measured.withRate / measured.withoutRate;
    console.log(
      `webhooks ${dialect}: ${formatNumber(rate)} deliveries/s; ingestion with a subscription at ${formatNumber(ratio * 100, 1)} % of without`,
    );
    const markdown = [
      ...sectionHead({
        title: `Webhook deliveries (${DIALECT_TITLE[dialect]})`,
        machine: context.machine,
        storage: measured.storage,
        command: context.command,
        stamp,
      }),
      ...table(
        ['measure', 'result', 'target', 'verdict'],
        [
          [
            `${formatNumber(EVENTS)} events delivered to a loopback receiver`,
            `${formatNumber(rate)} deliveries/s (${formatNumber(measured.deliveredMs / MS_PER_SECOND, 1)} s)`,
            `≥ ${formatNumber(DELIVERIES_PER_SECOND_MIN)}/s`,
            verdictOf(rate, DELIVERIES_PER_SECOND_MIN, DELIVERIES_PER_SECOND_GOAL),
          ],
          [
            'ingestion without / with an active subscription (median of rounds)',
            `${formatNumber(measured.withoutRate)} / ${formatNumber(measured.withRate)} records/s (${formatNumber(ratio * 100, 1)} %)`,
            `≥ ${INGESTION_RATIO_MIN * 100} %`,
            verdictOf(ratio, INGESTION_RATIO_MIN, INGESTION_RATIO_GOAL),
          ],
        ],
      ),
    ];
    sections.push({ id: `webhooks-${dialect}`, markdown: markdown.join('\n') });
  }
  return sections;
}
