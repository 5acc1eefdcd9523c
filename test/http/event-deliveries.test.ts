import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

const BASE = '/api/v1/event-deliveries';

/** Issue 26: the management routes of webhooks, with the address rules of a URL. */
describe('/api/v1/event-deliveries', () => {
  let t: TestApp;
  let admin: string;
  let viewer: string;

  beforeAll(async () => {
    t = await createTestApp();
    admin = await t.tokenFor(['admin']);
    viewer = await t.tokenFor(['viewer']);
  });
  afterAll(async () => t?.close());

  const post = (url: string, payload?: unknown, token = admin) =>
    t.call(token, { method: 'POST', url, ...(payload === undefined ? {} : { payload: payload as object }) });

  it('refuses a subscription before the signing secret exists, then shows the secret once on create', async () => {
    const early = await post(`${BASE}/subscriptions`, {
      url: 'https://hooks.example.com/a',
      eventTypes: ['ingestion.closed'],
    });
    expect(early.statusCode).toBe(409);
    expect(early.json().detail).toContain('signing secret');
    expect((await t.call(admin, { method: 'GET', url: `${BASE}/secrets` })).statusCode).toBe(404);
    const created = await post(`${BASE}/secrets`);
    expect(created.statusCode).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    expect(created.json().secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect((await post(`${BASE}/secrets`)).statusCode).toBe(409);
    // Stored sealed: the clear text is nowhere in the store.
    const rows = await t.store.db.selectFrom('event_secrets').select('sealed').execute();
    expect(rows.map((r) => r.sealed).join()).not.toContain(created.json().secret.slice(6));
    // The viewer reads subscriptions and deliveries, never the secret.
    expect((await t.call(viewer, { method: 'GET', url: `${BASE}/secrets` })).statusCode).toBe(403);
  });

  it.each([
    ['http://hooks.example.com/a', 'must be an https:// URL'],
    ['https://127.0.0.1/a', 'loopback'],
    ['https://localhost:8080/a', 'this machine'],
    ['https://10.1.2.3/a', 'private'],
    ['https://192.168.0.10/a', 'private'],
    ['https://169.254.169.254/latest/meta-data', 'metadata'],
    ['https://100.100.100.200/', 'private'],
    ['https://[fd00:ec2::254]/', 'private'],
    ['https://[::ffff:10.0.0.1]/', 'private'],
    ['https://user:pw@hooks.example.com/a', 'user name'],
    ['hooks.example.com', 'absolute URL'],
  ])('refuses %s, naming url and the rule', async (url, rule) => {
    const refused = await post(`${BASE}/subscriptions`, { url, eventTypes: ['ingestion.closed'] });
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.json().errors[0]).toMatchObject({ path: '/body/url' });
    expect(refused.json().errors[0].message).toContain(rule);
  });

  it('refuses unknown event types, duplicates and unknown members', async () => {
    for (const payload of [
      { url: 'https://hooks.example.com/a', eventTypes: ['ingestion.unknown'] },
      { url: 'https://hooks.example.com/a', eventTypes: ['ingestion.closed', 'ingestion.closed'] },
      { url: 'https://hooks.example.com/a', eventTypes: [] },
      { url: 'https://hooks.example.com/a', eventTypes: ['ingestion.closed'], secret: 'x' },
    ]) {
      const refused = await post(`${BASE}/subscriptions`, payload);
      expect(refused.statusCode, JSON.stringify(payload)).toBe(400);
    }
  });

  it('creates, lists, gets, changes, pauses, resumes and deletes a subscription, each in the audit log', async () => {
    const created = await post(`${BASE}/subscriptions`, {
      url: 'https://hooks.example.com/ledger',
      eventTypes: ['ingestion.processed', 'processing.failed'],
      description: 'books',
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id;
    expect(created.headers.location).toBe(`${BASE}/subscriptions/${id}`);
    expect(created.json()).toMatchObject({ status: 'active', flagged: false, description: 'books' });
    const list = await t.call(viewer, { method: 'GET', url: `${BASE}/subscriptions` });
    expect(list.json()).toMatchObject({ totalSize: 1, data: [{ id }] });
    const changed = await t.call(admin, {
      method: 'PATCH',
      url: `${BASE}/subscriptions/${id}`,
      payload: { eventTypes: ['ingestion.closed'], description: null },
    });
    expect(changed.json()).toMatchObject({ eventTypes: ['ingestion.closed'], description: null });
    expect(
      (await t.call(admin, { method: 'PATCH', url: `${BASE}/subscriptions/${id}`, payload: {} })).statusCode,
    ).toBe(400);
    expect((await post(`${BASE}/subscriptions/${id}/pause`)).json().status).toBe('paused');
    expect((await post(`${BASE}/subscriptions/${id}/resume`)).json().status).toBe('active');
    expect((await t.call(admin, { method: 'DELETE', url: `${BASE}/subscriptions/${id}` })).statusCode).toBe(
      204,
    );
    expect((await t.call(admin, { method: 'GET', url: `${BASE}/subscriptions/${id}` })).statusCode).toBe(404);
    expect((await t.call(admin, { method: 'DELETE', url: `${BASE}/subscriptions/${id}` })).statusCode).toBe(
      404,
    );
    const audit = await t.call(admin, { method: 'GET', url: '/api/v1/audit-log?limit=20' });
    const actions = (audit.json().data as { action: string }[]).map((e) => e.action);
    expect(actions).toEqual(
      expect.arrayContaining([
        'webhooks.secret-create',
        'webhooks.subscription-create',
        'webhooks.subscription-update',
        'webhooks.subscription-pause',
        'webhooks.subscription-resume',
        'webhooks.subscription-delete',
      ]),
    );
    expect(audit.body).not.toContain('whsec_');
  });

  it('answers 404 for unknown deliveries and subscriptions, and lists the event types with their versions', async () => {
    expect((await t.call(admin, { method: 'GET', url: `${BASE}/deliveries/999` })).statusCode).toBe(404);
    expect((await post(`${BASE}/deliveries/999/redeliver`)).statusCode).toBe(404);
    expect(
      (await post(`${BASE}/subscriptions/999/redeliver`, { since: '2026-01-01T00:00:00Z' })).statusCode,
    ).toBe(404);
    expect(
      (await t.call(admin, { method: 'GET', url: `${BASE}/subscriptions/999/deliveries` })).statusCode,
    ).toBe(404);
    expect((await post(`${BASE}/subscriptions/1/redeliver`, { since: 'yesterday' })).statusCode).toBe(400);
    const types = await t.call(viewer, { method: 'GET', url: `${BASE}/event-types` });
    expect(types.json().data).toContainEqual({ type: 'ingestion.processed', version: 1 });
  });

  it('rotates the secret with an overlap, both listed, the new one first', async () => {
    const before = (await t.call(admin, { method: 'GET', url: `${BASE}/secrets` })).json().data;
    const rotated = await post(`${BASE}/secrets/rotate`, { overlapSeconds: 60 });
    expect(rotated.statusCode).toBe(201);
    const after = (await t.call(admin, { method: 'GET', url: `${BASE}/secrets` })).json().data;
    expect(after.map((s: { secret: string }) => s.secret)).toEqual([rotated.json().secret, before[0].secret]);
    expect(after[1].expiresAt).not.toBeNull();
    expect((await post(`${BASE}/secrets/rotate`, { overlapSeconds: 8 * 86_400 })).statusCode).toBe(400);
  });
});
