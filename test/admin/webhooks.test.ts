import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { type Signed, signIn, userWith } from './helpers.js';

/** Webhooks in the administration interface (issue 26). */
describe('webhooks in the administration interface', () => {
  let t: TestApp;
  let admin: Signed;
  let viewer: Signed;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    t = await createTestApp({ webhookAllowHttpLoopback: true });
    admin = await signIn(t, await userWith(t, ['admin']));
    viewer = await signIn(t, await userWith(t, ['viewer']));
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('creates the secret and shows it once, subscribes, lists deliveries with their answers and redelivers', async () => {
    const created = await admin.post('/admin/webhooks/secret', {});
    expect(created.statusCode).toBe(303);
    const shown = await admin.get('/admin/webhooks/secret/shown');
    expect(shown.statusCode).toBe(200);
    const secret = /whsec_[A-Za-z0-9_-]+/.exec(shown.body)?.[0];
    expect(secret).toBeDefined();
    expect((await admin.get('/admin/webhooks/secret/shown')).statusCode).toBe(410);

    const subscribed = await admin.post('/admin/webhooks', {
      url: receiver.url,
      eventTypes: ['configuration.changed'],
      description: '<books>',
    });
    expect(subscribed.statusCode, subscribed.body).toBe(303);
    const detailUrl = String(subscribed.headers.location);
    receiver.answer = () => ({ status: 500 });
    const token = await t.tokenFor(['bulk-operator']);
    await t.call(token, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk',
      payload: realisticConfiguration(),
    });
    t.services.deliverer.wake();
    await t.services.deliverer.idle();

    const detail = await admin.get(detailUrl);
    expect(detail.body).toContain('&lt;books&gt;');
    expect(detail.body).toContain('<strong>500</strong> answered 500');
    expect(detail.body).toContain('answer 500');
    const deliveryId = /\/admin\/webhooks\/deliveries\/(\d+)\/redeliver/.exec(detail.body)?.[1];
    receiver.answer = () => ({ status: 204 });
    expect((await admin.post(`/admin/webhooks/deliveries/${deliveryId}/redeliver`, {})).statusCode).toBe(303);
    await t.services.deliverer.idle();
    t.services.deliverer.wake();
    await t.services.deliverer.idle();
    expect((await admin.get('/admin/webhooks/deliveries')).body).toMatch(/<td>delivered<\/td>/);

    // The viewer sees the subscriptions and deliveries, without a secret or any action.
    const list = await viewer.get('/admin/webhooks');
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain('href="/admin/webhooks"');
    expect(list.body).toContain(receiver.url);
    expect(list.body).not.toContain('Rotate');
    expect(list.body).not.toContain(secret);
    expect((await viewer.post('/admin/webhooks/secret/rotate', {})).statusCode).toBe(403);

    expect((await admin.post(`${detailUrl}/pause`, {})).statusCode).toBe(303);
    expect((await admin.get(detailUrl)).body).toContain('<dd>paused</dd>');
    expect((await admin.post('/admin/webhooks/secret/rotate', {})).statusCode).toBe(303);
    expect((await admin.get('/admin/webhooks/secret/shown')).body).not.toContain(secret);
    expect((await admin.post(`${detailUrl}/delete`, {})).statusCode).toBe(303);
    expect((await admin.get(detailUrl)).statusCode).toBe(404);
  });
});
