import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/lib/clock.js';
import { type DeliverySchedule, EventDeliverer } from '../../src/modules/events/deliverer.js';
import { createSender } from '../../src/modules/events/sender.js';
import { createEventStore } from '../../src/storage/events/event-store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { eventually } from '../helpers/server.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/** Short delays, so retries and timeouts happen within a test; the clock is moved by hand. */
const SCHEDULE: DeliverySchedule = {
  attemptsMax: 3,
  retryDelayMsMin: 1_000,
  retryDelayMsMax: 4_000,
  timeoutMs: 300,
  pollMs: 60_000,
};

/** Issue 26: retries, timeouts, failure and flagging, redirects, pause, redelivery, address rules. */
describe('webhook delivery', () => {
  let t: TestApp;
  let admin: string;
  let receiver: WebhookReceiver;
  let subscriptionId: number;

  const api = async (method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: unknown) => {
    const response = await t.call(admin, {
      method,
      url,
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
    expect(response.statusCode, response.body).toBeLessThan(300);
    return response.json();
  };
  /** Records one `configuration.changed` event. */
  const emit = () => api('PUT', '/api/v1/configuration/bulk?keep=processing-data', realisticConfiguration());
  /** Rounds of the deliverer until nothing is in flight. */
  const round = async () => {
    t.services.deliverer.wake();
    await t.services.deliverer.idle();
  };
  const deliveries = async (status?: string) =>
    (
      await api(
        'GET',
        `/api/v1/event-deliveries/subscriptions/${subscriptionId}/deliveries${status === undefined ? '' : `?status=${status}`}`,
      )
    ).data as {
      id: number;
      status: string;
      attempts: number;
      lastStatusCode: number | null;
      lastError: string | null;
    }[];

  beforeAll(async () => {
    t = await createTestApp({ webhookAllowHttpLoopback: true, webhookSchedule: SCHEDULE });
    admin = await t.tokenFor(['admin']);
    receiver = await startReceiver();
    await api('POST', '/api/v1/event-deliveries/secrets');
    subscriptionId = (
      await api('POST', '/api/v1/event-deliveries/subscriptions', {
        url: receiver.url,
        eventTypes: ['configuration.changed'],
      })
    ).id;
    await round();
  });
  afterEach(() => {
    receiver.answer = () => ({ status: 204 });
    receiver.received.length = 0;
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('tries again after 500s and a timeout, with the same body and Idempotency-Key, until a 2xx', async () => {
    let calls = 0;
    receiver.answer = () => {
      calls += 1;
      if (calls === 1) return { status: 500 };
      if (calls === 2) return { status: 204, delayMs: 2_000 };
      return { status: 200 };
    };
    await emit();
    await round();
    expect(receiver.received).toHaveLength(1);
    // Not due before its backoff has passed.
    await round();
    expect(receiver.received).toHaveLength(1);
    for (let attempt = 2; attempt <= 3; attempt += 1) {
      t.clock.advance(SCHEDULE.retryDelayMsMax);
      await round();
      expect(receiver.received).toHaveLength(attempt);
    }
    const [first, ...rest] = receiver.received;
    for (const again of rest) {
      expect(again.body).toBe(first?.body);
      expect(again.headers['idempotency-key']).toBe(first?.headers['idempotency-key']);
    }
    const [latest] = await deliveries();
    expect(latest).toMatchObject({ status: 'delivered', attempts: 3, lastStatusCode: 200 });
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/webhook_delivery_attempts_total\{outcome="retry"\} 2/);
    expect(metrics.body).toMatch(/webhook_delivery_duration_seconds_count\{outcome="delivered"\}/);
  });

  it('fails a delivery after its last attempt and flags the subscription until a delivery succeeds', async () => {
    receiver.answer = () => ({ status: 503 });
    await emit();
    for (let attempt = 1; attempt <= SCHEDULE.attemptsMax; attempt += 1) {
      await round();
      t.clock.advance(SCHEDULE.retryDelayMsMax);
    }
    const [failed] = await deliveries();
    expect(failed).toMatchObject({ status: 'failed', attempts: 3, lastStatusCode: 503 });
    const flagged = await api('GET', `/api/v1/event-deliveries/subscriptions/${subscriptionId}`);
    expect(flagged).toMatchObject({ flagged: true });
    expect(flagged.flagReason).toContain(`delivery ${failed?.id}`);

    receiver.answer = () => ({ status: 204 });
    const again = await api('POST', `/api/v1/event-deliveries/deliveries/${failed?.id}/redeliver`);
    expect(again).toMatchObject({ status: 'pending', attempts: 0 });
    await round();
    expect(await api('GET', `/api/v1/event-deliveries/deliveries/${failed?.id}`)).toMatchObject({
      status: 'delivered',
      attempts: 1,
    });
    expect(await api('GET', `/api/v1/event-deliveries/subscriptions/${subscriptionId}`)).toMatchObject({
      flagged: false,
    });
  });

  it('does not follow a redirect', async () => {
    const elsewhere = await startReceiver();
    receiver.answer = () => ({ status: 302, headers: { location: elsewhere.url } });
    await emit();
    await round();
    const [latest] = await deliveries();
    expect(latest).toMatchObject({ status: 'pending', lastStatusCode: 302 });
    expect(latest?.lastError).toContain('redirects are not followed');
    expect(elsewhere.received).toHaveLength(0);
    await elsewhere.close();
    receiver.answer = () => ({ status: 204 });
    t.clock.advance(SCHEDULE.retryDelayMsMax);
    await round();
    expect((await deliveries())[0]).toMatchObject({ status: 'delivered' });
  });

  it('keeps the events of a paused subscription and sends them once it is resumed', async () => {
    await api('POST', `/api/v1/event-deliveries/subscriptions/${subscriptionId}/pause`);
    await emit();
    await round();
    expect(receiver.received).toHaveLength(0);
    expect(await deliveries('pending')).toHaveLength(1);
    await api('POST', `/api/v1/event-deliveries/subscriptions/${subscriptionId}/resume`);
    await round();
    expect(receiver.received).toHaveLength(1);
  });

  it('delivers again every event since a time, those from before the subscription included', async () => {
    const since = new Date(t.clock.now().getTime() - 60_000).toISOString();
    const late = await startReceiver();
    const second = await api('POST', '/api/v1/event-deliveries/subscriptions', {
      url: late.url,
      eventTypes: ['configuration.changed'],
    });
    const queued = await api('POST', `/api/v1/event-deliveries/subscriptions/${second.id}/redeliver`, {
      since,
    });
    expect(queued.events).toBeGreaterThanOrEqual(4);
    await eventually(async () => {
      await round();
      return late.received.length === queued.events ? true : undefined;
    });
    await late.close();
    await api('POST', `/api/v1/event-deliveries/subscriptions/${second.id}/pause`);
  });

  it('a hanging receiver holds only its own attempts', async () => {
    const hanging = await startReceiver();
    hanging.answer = () => ({ status: 204, delayMs: 5_000 });
    const slow = await api('POST', '/api/v1/event-deliveries/subscriptions', {
      url: hanging.url,
      eventTypes: ['configuration.changed'],
    });
    await emit();
    t.services.deliverer.wake();
    // The fast receiver has its event while the hanging one's attempt is still waiting.
    await eventually(async () => (receiver.received.length === 1 ? true : undefined), 2_000, 5);
    expect(hanging.received.length).toBeLessThanOrEqual(1);
    await t.services.deliverer.idle();
    const [timedOut] = (await api('GET', `/api/v1/event-deliveries/subscriptions/${slow.id}/deliveries`))
      .data;
    expect(timedOut).toMatchObject({ status: 'pending', lastStatusCode: null });
    expect(timedOut.lastError).toContain(`no answer within ${SCHEDULE.timeoutMs} ms`);
    await api('POST', `/api/v1/event-deliveries/subscriptions/${slow.id}/pause`);
    await hanging.close();
  });

  it('checks the address of every attempt: a host that resolves to loopback is refused when loopback is not allowed', async () => {
    const local = await api('POST', '/api/v1/event-deliveries/subscriptions', {
      url: receiver.url.replace('127.0.0.1', 'localhost'),
      eventTypes: ['configuration.changed'],
    });
    await api('POST', `/api/v1/event-deliveries/subscriptions/${subscriptionId}/pause`);
    // Another instance's deliverer, whose settings allow no loopback.
    const strict = new EventDeliverer(
      createEventStore(t.store),
      systemClock,
      createSender({ allowHttpLoopback: false }, SCHEDULE.timeoutMs),
      t.services.webhooks.signer(),
      (error) => {
        throw error;
      },
      SCHEDULE,
    );
    await emit();
    strict.wake();
    await strict.idle();
    await strict.close();
    expect(receiver.received).toHaveLength(0);
    const [refused] = (await api('GET', `/api/v1/event-deliveries/subscriptions/${local.id}/deliveries`))
      .data;
    expect(refused).toMatchObject({ status: 'failed', attempts: 1 });
    expect(refused.lastError).toContain('loopback');
  });
});
