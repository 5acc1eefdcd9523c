import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/modules/events/types.js';
import { sweepEndedSessions } from '../../src/storage/session-counters.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ingestClosedSession, realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { configurationWithoutLookup } from '../helpers/reprocessing.js';
import { eventually } from '../helpers/server.js';
import { eventsOf, startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/** Checks a delivery's signature with Python's own HMAC, as a receiver would (docs/reference.md). */
function pythonVerifies(secret: string, header: string, body: string): boolean {
  const script = [
    'import hmac, hashlib, os, sys',
    'body = sys.stdin.buffer.read()',
    "parts = [p.split('=', 1) for p in os.environ['SIG'].split(',')]",
    "t = next(v for k, v in parts if k == 't')",
    "mac = hmac.new(os.environ['SECRET'].encode(), t.encode() + b'.' + body, hashlib.sha256).hexdigest()",
    "print('ok' if any(hmac.compare_digest(mac, v) for k, v in parts if k == 'v1') else 'bad')",
  ].join('\n');
  const out = execFileSync('python3', ['-c', script], {
    input: body,
    env: { ...process.env, SECRET: secret, SIG: header },
  });
  return out.toString().trim() === 'ok';
}

/** The configuration with `extracts-in-bulk` on, so an asynchronous extraction can complete. */
function withBulkExtracts(document: ReturnType<typeof realisticConfiguration>) {
  (document.configuration.featureFlags as Record<string, boolean>)['extracts-in-bulk'] = true;
  return document;
}

/** Issue 26: every event type reaches a receiver on loopback, signed, once per event. */
describe('webhook events', () => {
  let t: TestApp;
  let admin: string;
  let receiver: WebhookReceiver;
  let secret: string;

  const deliverAll = async () => {
    t.services.deliverer.wake();
    await t.services.deliverer.idle();
  };
  const typesReceived = () => new Set(eventsOf(receiver).map((e) => e.type));

  beforeAll(async () => {
    t = await createTestApp({ businessDate: '2026-11-20', webhookAllowHttpLoopback: true });
    admin = await t.tokenFor(['admin']);
    receiver = await startReceiver();
    const created = await t.call(admin, { method: 'POST', url: '/api/v1/event-deliveries/secrets' });
    expect(created.statusCode, created.body).toBe(201);
    secret = created.json().secret;
    const subscription = await t.call(admin, {
      method: 'POST',
      url: '/api/v1/event-deliveries/subscriptions',
      payload: { url: receiver.url, eventTypes: EVENT_TYPES, description: 'every event' },
    });
    expect(subscription.statusCode, subscription.body).toBe(201);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('delivers every event type with its documented envelope, signed and keyed by its id', async () => {
    // configuration.changed (wiping), then one that keeps the data.
    const put = await t.call(admin, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk',
      payload: withBulkExtracts(configurationWithoutLookup()),
    });
    expect(put.statusCode, put.body).toBe(200);
    // ingestion.closed, ingestion.processed and processing.failed (no account for the posting code).
    const failing = await ingestClosedSession(t, admin, 'businessEvent', [businessEvent(), businessEvent()]);
    await t.services.processor.drain();
    const kept = await t.call(admin, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk?keep=processing-data',
      payload: withBulkExtracts(realisticConfiguration()),
    });
    expect(kept.statusCode, kept.body).toBe(200);
    // reversal.completed
    const posted = await ingestClosedSession(t, admin, 'businessEvent', [
      businessEvent({ effectiveDate: '2026-11-18' }),
    ]);
    await t.services.processor.drain();
    const reversal = await t.call(admin, {
      method: 'POST',
      url: '/api/v1/reversals',
      payload: { selection: { ingestionId: posted }, reason: 'test' },
    });
    expect(reversal.statusCode, reversal.body).toBe(201);
    // extraction.completed
    const extract = await t.call(admin, {
      method: 'POST',
      url: '/api/v1/extraction-configurations',
      payload: { name: 'lines', source: 'journal-lines', format: 'csv', incremental: false },
    });
    const extractId = extract.json().id;
    await t.call(admin, {
      method: 'PATCH',
      url: `/api/v1/extraction-configurations/${extractId}`,
      payload: { state: 'Active' },
    });
    const execution = await t.call(admin, {
      method: 'POST',
      url: `/api/v1/extraction-configurations/${extractId}/executions`,
    });
    expect(execution.statusCode, execution.body).toBe(202);
    await t.services.extractExecutions.idle();
    // ingestion.expired: a session left open past its timeout, found by the sweep.
    const open = await t.call(admin, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace: 'ledger', entity: 'businessEvent', timeout: 'PT1S' },
    });
    expect(open.statusCode, open.body).toBe(201);
    t.clock.advance(2_000);
    await sweepEndedSessions(t.store.db, t.clock.now().getTime());
    // configuration.wiped
    const wiped = await t.call(admin, { method: 'DELETE', url: '/api/v1/configuration/bulk' });
    expect(wiped.statusCode, wiped.body).toBeLessThan(300);

    await eventually(async () => {
      await deliverAll();
      return typesReceived().size === EVENT_TYPES.length ? true : undefined;
    });
    const events = eventsOf(receiver);
    const processed = events.find((e) => e.type === 'ingestion.processed' && e.data.ingestionId === failing);
    expect(processed).toMatchObject({
      version: 1,
      data: {
        state: 'closed',
        successRows: 2,
        processedRows: 2,
        processingFailedRows: 2,
        processingStatus: 'completed_with_errors',
      },
    });
    const failed = events.find((e) => e.type === 'processing.failed');
    expect(failed?.data).toMatchObject({ ingestionId: failing, processingFailedRows: 2 });
    expect(Object.values(failed?.data.byCode as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(2);
    expect(
      events.filter((e) => e.type === 'configuration.changed').map((e) => e.data.processingData),
    ).toEqual(['wiped', 'kept']);
    expect(events.find((e) => e.type === 'reversal.completed')?.data).toMatchObject({ reason: 'test' });
    expect(events.find((e) => e.type === 'extraction.completed')?.data).toMatchObject({
      extractConfigurationId: extractId,
      status: 'completed',
    });
    expect(events.find((e) => e.type === 'ingestion.expired')?.data).toMatchObject({
      ingestionId: open.json().ingestionId,
    });
    // One delivery per event, each keyed by its id, with the documented headers and envelope.
    expect(new Set(events.map((e) => e.event_id)).size).toBe(events.length);
    for (const got of receiver.received) {
      const event = JSON.parse(got.body);
      expect(Object.keys(event)).toEqual(['event_id', 'type', 'version', 'occurred_at', 'data']);
      expect(got.headers['content-type']).toBe('application/json');
      expect(got.headers['idempotency-key']).toBe(event.event_id);
      expect(got.headers['webhook-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    }
    const sample = receiver.received[0];
    if (sample === undefined) throw new Error('nothing received');
    expect(pythonVerifies(secret, String(sample.headers['webhook-signature']), sample.body)).toBe(true);
    expect(pythonVerifies(`${secret}x`, String(sample.headers['webhook-signature']), sample.body)).toBe(
      false,
    );
  });

  it('signs with both secrets during a rotation’s overlap, the new one first', async () => {
    const rotated = await t.call(admin, {
      method: 'POST',
      url: '/api/v1/event-deliveries/secrets/rotate',
      payload: { overlapSeconds: 3600 },
    });
    expect(rotated.statusCode, rotated.body).toBe(201);
    const next = rotated.json().secret as string;
    expect(next).not.toBe(secret);
    const details = await t.call(admin, { method: 'GET', url: '/api/v1/event-deliveries/secrets' });
    expect(details.json().data.map((s: { secret: string }) => s.secret)).toEqual([next, secret]);
    const before = receiver.received.length;
    await t.call(admin, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk',
      payload: realisticConfiguration(),
    });
    await eventually(async () => {
      await deliverAll();
      return receiver.received.length > before ? true : undefined;
    });
    const got = receiver.received.at(-1);
    if (got === undefined) throw new Error('nothing received');
    const header = String(got.headers['webhook-signature']);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(pythonVerifies(next, header, got.body)).toBe(true);
    expect(pythonVerifies(secret, header, got.body)).toBe(true);
  });
});
