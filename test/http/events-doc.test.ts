import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIGURATION_FORMAT_VERSION } from '../../src/modules/configuration/model.js';
import { EVENT_TYPES, EVENT_VERSIONS } from '../../src/modules/events/types.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { eventually } from '../helpers/server.js';
import { eventsOf, startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const PAGE = readFileSync(fileURLToPath(new URL('../../docs/domain/events.md', import.meta.url)), 'utf8');

/**
 * The JSON example under the page's heading of TYPE (`### \`TYPE\` (version N)`, or one heading
 * of several types), parsed; its version from the heading.
 */
function documented(type: string): { version: number; data: Record<string, unknown> } {
  const name = type.replace('.', '\\.');
  const heading = new RegExp(
    `^### (?:\`[a-z.]+\`, )*\`${name}\`(?:, \`[a-z.]+\`)* \\(version (\\d+)\\)$`,
    'm',
  ).exec(PAGE);
  if (heading === null) throw new Error(`docs/domain/events.md has no section for ${type}`);
  const block = /```json\n([\s\S]*?)\n```/.exec(PAGE.slice(heading.index));
  if (block?.[1] === undefined) throw new Error(`the section of ${type} has no JSON example`);
  return { version: Number(heading[1]), data: JSON.parse(block[1]) as Record<string, unknown> };
}

/** The page's table of event types: each type with the version it lists. */
function tableVersions(): Record<string, number> {
  const rows = [...PAGE.matchAll(/^\| `([a-z]+\.[a-z]+)` \| (\d+) \|/gm)];
  return Object.fromEntries(rows.map((row) => [row[1], Number(row[2])]));
}

/**
 * docs/domain/events.md shows what the service sends: the versions of its table, the member names
 * of the configuration events' examples in the order they are sent, the configuration `version`
 * those events carry (the format label of the uploaded document, not a version of the service)
 * and the `User-Agent` of a delivery.
 */
describe('the examples of docs/domain/events.md', () => {
  let t: TestApp;
  let admin: string;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await createTestApp({ businessDate: '2026-11-20', webhookAllowHttpLoopback: true });
    admin = await t.tokenFor(['admin']);
    receiver = await startReceiver();
    const secret = await t.call(admin, { method: 'POST', url: '/api/v1/event-deliveries/secrets' });
    expect(secret.statusCode, secret.body).toBe(201);
    const subscription = await t.call(admin, {
      method: 'POST',
      url: '/api/v1/event-deliveries/subscriptions',
      payload: { url: receiver.url, eventTypes: ['configuration.changed', 'configuration.wiped'] },
    });
    expect(subscription.statusCode, subscription.body).toBe(201);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('lists every event type with the version the service writes', () => {
    expect(tableVersions()).toEqual(EVENT_VERSIONS);
    for (const type of EVENT_TYPES) expect(documented(type).version, type).toBe(EVENT_VERSIONS[type]);
  });

  it('shows the configuration events as they are sent, with the uploaded document’s version', async () => {
    const document = realisticConfiguration();
    expect(document.version).toBe(CONFIGURATION_FORMAT_VERSION);
    for (const url of ['/api/v1/configuration/bulk', '/api/v1/configuration/bulk?keep=processing-data']) {
      const put = await t.call(admin, { method: 'PUT', url, payload: document });
      expect(put.statusCode, put.body).toBe(200);
    }
    const wiped = await t.call(admin, { method: 'DELETE', url: '/api/v1/configuration/bulk' });
    expect(wiped.statusCode, wiped.body).toBeLessThan(300);
    await eventually(async () => {
      t.services.deliverer.wake();
      await t.services.deliverer.idle();
      return receiver.received.length >= 3 ? true : undefined;
    });

    const events = eventsOf(receiver);
    const changed = events.filter((e) => e.type === 'configuration.changed');
    expect(changed.map((e) => e.data.processingData)).toEqual(['wiped', 'kept']);
    const page = documented('configuration.changed').data;
    for (const event of changed) {
      expect(Object.keys(event.data)).toEqual(Object.keys(page));
      expect(Object.keys(event.data.deleted as object)).toEqual(Object.keys(page.deleted as object));
      expect(event.data.version).toBe(page.version);
    }
    expect(page.version).toBe(document.version);
    const wipe = events.find((e) => e.type === 'configuration.wiped');
    const wipePage = documented('configuration.wiped').data;
    expect(Object.keys(wipe?.data ?? {})).toEqual(Object.keys(wipePage));
    expect(Object.keys(wipe?.data.deleted as object)).toEqual(Object.keys(wipePage.deleted as object));

    const userAgent = /^\| `User-Agent` \| `([^`]+)` \|$/m.exec(PAGE)?.[1];
    for (const got of receiver.received) expect(got.headers['user-agent']).toBe(userAgent);
  });
});
