import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const BASE = '/api/v1/event-deliveries';

/**
 * Every written form of an address that reaches this machine, a private or reserved range, or
 * IPv4 through a tunnel or a translator, with the rule the answer names. The parser normalises
 * the IPv4 forms to dotted decimal before the rules see them; they are here so that the API is
 * proven to refuse them whatever it does.
 */
const REFUSED_WHATEVER_THE_SETTING: readonly (readonly [string, string])[] = [
  ['https://[::ffff:a00:1]/', 'private'],
  ['https://[::ffff:10.0.0.1]/', 'private'],
  ['https://[::ffff:a9fe:a9fe]/latest/meta-data', 'metadata'],
  ['https://[::a00:1]/', 'private'],
  ['https://[::127.0.0.1]/', 'loopback'],
  ['https://[2002:7f00:1::]/', '6to4'],
  ['https://[2002:a9fe:a9fe::]/', '6to4'],
  ['https://[64:ff9b::a00:1]/', 'NAT64'],
  ['https://[64:ff9b:1::a00:1]/', 'NAT64'],
  ['https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', 'Teredo'],
  ['https://[::ffff:0:7f00:1]/', 'IPv4-translated'],
  ['https://167772161/', 'private'],
  ['https://012.0.0.1/', 'private'],
  ['https://0xa9.0xfe.0xa9.0xfe/', 'metadata'],
  ['http://10.0.0.1/', 'private'],
];

/** Loopback in every form, and the names of this machine: refused unless the setting is on. */
const LOOPBACK_FORMS: readonly string[] = [
  'https://2130706433/',
  'https://0177.0.0.1/',
  'https://0x7f.1/',
  'https://127.1/',
  'https://[::ffff:7f00:1]/',
  'https://[::ffff:127.0.0.1]/',
  'https://localhost/',
  'https://localhost./',
  'https://LOCALHOST./',
  'https://hooks.localhost/',
  'https://Hooks.LocalHost./',
  'https://localhost.localdomain/',
  'https://localhost.localdomain./',
];

/** Issue 26 (address rules): every form of a refused webhook address, answered 400 naming `url` and the rule. */
describe('webhook addresses', () => {
  describe('with the default settings', () => {
    let t: TestApp;
    let admin: string;
    let subscriptionId: number;

    beforeAll(async () => {
      t = await createTestApp();
      admin = await t.tokenFor(['admin']);
      expect((await t.call(admin, { method: 'POST', url: `${BASE}/secrets` })).statusCode).toBe(201);
      const created = await t.call(admin, {
        method: 'POST',
        url: `${BASE}/subscriptions`,
        payload: { url: 'https://hooks.example.com/ledger', eventTypes: ['ingestion.closed'] },
      });
      expect(created.statusCode, created.body).toBe(201);
      subscriptionId = created.json().id;
    });
    afterAll(async () => t?.close());

    const expectRefused = (response: Awaited<ReturnType<TestApp['call']>>, rule: string) => {
      expect(response.statusCode, response.body).toBe(400);
      expect(response.headers['content-type']).toContain('application/problem+json');
      expect(response.json().detail).toMatch(/^url /);
      expect(response.json().errors).toEqual([{ path: '/body/url', message: expect.stringContaining(rule) }]);
    };

    it.each<readonly [string, string]>([
      ...REFUSED_WHATEVER_THE_SETTING,
      ...LOOPBACK_FORMS.map((url) => [url, 'loopback'] as const),
      ['http://hooks.example.com/a', 'must be an https:// URL'],
    ])('refuses a subscription to %s (%s), on create and on change', async (url, rule) => {
      expectRefused(
        await t.call(admin, {
          method: 'POST',
          url: `${BASE}/subscriptions`,
          payload: { url, eventTypes: ['ingestion.closed'] },
        }),
        rule,
      );
      expectRefused(
        await t.call(admin, {
          method: 'PATCH',
          url: `${BASE}/subscriptions/${subscriptionId}`,
          payload: { url },
        }),
        rule,
      );
    });

    it('keeps nothing of a refused subscription', async () => {
      const list = await t.call(admin, { method: 'GET', url: `${BASE}/subscriptions` });
      expect(list.json()).toMatchObject({
        totalSize: 1,
        data: [{ id: subscriptionId, url: 'https://hooks.example.com/ledger' }],
      });
    });
  });

  describe('with WEBHOOK_ALLOW_HTTP_LOOPBACK', () => {
    let t: TestApp;
    let admin: string;
    let receiver: WebhookReceiver;

    const subscribe = (url: string) =>
      t.call(admin, {
        method: 'POST',
        url: `${BASE}/subscriptions`,
        payload: { url, eventTypes: ['configuration.changed'] },
      });
    /** Records one `configuration.changed` event and lets the deliverer attempt it. */
    const emitAndDeliver = async () => {
      const put = await t.call(admin, {
        method: 'PUT',
        url: '/api/v1/configuration/bulk?keep=processing-data',
        payload: realisticConfiguration() as unknown as Record<string, unknown>,
      });
      expect(put.statusCode, put.body).toBeLessThan(300);
      t.services.deliverer.wake();
      await t.services.deliverer.idle();
    };
    const deliveriesOf = async (id: number) =>
      (await t.call(admin, { method: 'GET', url: `${BASE}/subscriptions/${id}/deliveries` })).json().data as {
        status: string;
        attempts: number;
        lastError: string | null;
      }[];

    beforeAll(async () => {
      t = await createTestApp({ webhookAllowHttpLoopback: true });
      admin = await t.tokenFor(['admin']);
      receiver = await startReceiver();
      expect((await t.call(admin, { method: 'POST', url: `${BASE}/secrets` })).statusCode).toBe(201);
    });
    afterEach(async () => {
      // Each test starts without subscriptions, so an event reaches only the one it made.
      const list = await t.call(admin, { method: 'GET', url: `${BASE}/subscriptions` });
      for (const { id } of list.json().data as { id: number }[])
        await t.call(admin, { method: 'DELETE', url: `${BASE}/subscriptions/${id}` });
      receiver.received.length = 0;
    });
    afterAll(async () => {
      await t?.close();
      await receiver?.close();
    });

    it.each(REFUSED_WHATEVER_THE_SETTING)('still refuses %s (%s)', async (url, rule) => {
      const refused = await subscribe(url);
      expect(refused.statusCode, refused.body).toBe(400);
      expect(refused.json().errors[0]).toMatchObject({ path: '/body/url' });
      expect(refused.json().errors[0].message).toContain(rule);
    });

    it.each([['http://hooks.example.com/a'], ['http://93.184.215.14/'], ['http://[2606:2800:21f:cb07::1]/']])(
      'refuses plain http to %s, which is not this machine',
      async (url) => {
        const refused = await subscribe(url);
        expect(refused.statusCode, refused.body).toBe(400);
        expect(refused.json().errors[0].message).toContain('must be an https:// URL');
      },
    );

    it.each([
      ...LOOPBACK_FORMS,
      ...LOOPBACK_FORMS.map((url) => url.replace('https:', 'http:')),
      'https://hooks.example.com/a',
    ])('accepts %s', async (url) => {
      const created = await subscribe(url);
      expect(created.statusCode, created.body).toBe(201);
    });

    it('delivers to loopback written as IPv4-mapped IPv6, which reaches this machine', async () => {
      const mapped = receiver.url.replace('127.0.0.1', '[::ffff:127.0.0.1]');
      const created = await subscribe(mapped);
      expect(created.statusCode, created.body).toBe(201);
      expect(created.json().url).toBe(mapped.replace('::ffff:127.0.0.1', '::ffff:7f00:1'));
      await emitAndDeliver();
      expect(receiver.received).toHaveLength(1);
      expect(await deliveriesOf(created.json().id)).toMatchObject([{ status: 'delivered', attempts: 1 }]);
    });

    it('refuses at delivery, without connecting, plain http to another host stored before the rule', async () => {
      const created = await subscribe(receiver.url);
      expect(created.statusCode, created.body).toBe(201);
      const id: number = created.json().id;
      // A URL the rules accepted before plain http was limited to loopback, as it is still stored.
      await t.store.db
        .updateTable('event_subscriptions')
        .set({ url: 'http://hooks.example.com/hooks' })
        .where('id', '=', id)
        .execute();
      await emitAndDeliver();
      expect(receiver.received).toHaveLength(0);
      const [refused] = await deliveriesOf(id);
      expect(refused).toMatchObject({ status: 'failed', attempts: 1 });
      expect(refused?.lastError).toContain('must be an https:// URL');
    });
  });
});
