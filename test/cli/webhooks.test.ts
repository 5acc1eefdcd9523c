import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE } from '../../src/cli/output.js';
import { runCli } from '../../src/cli/run.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { captureIo, type RunningService, startService } from './helpers.js';

/** A signing secret anywhere in a text. */
const SECRET_PATTERN = /whsec_[A-Za-z0-9_-]+/g;

/** Issue 26: `ledgerflow webhooks list|create|rotate-secret|deliveries|redeliver` against a running service. */
describe('ledgerflow webhooks', () => {
  let service: RunningService;
  let connection: string[];
  let receiver: WebhookReceiver;
  let token: string;
  beforeAll(async () => {
    service = await startService({ webhookAllowHttpLoopback: true });
    connection = await service.connectionArgs(['admin']);
    token = await service.tokenFor(['admin']);
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
  });

  const run = async (args: string[]) => {
    const io = captureIo();
    const code = await runCli(['webhooks', ...args, ...connection], io);
    return { code, out: io.stdout(), err: io.stderr(), lines: io.lines };
  };

  /** The secrets that sign now, current first, as the service keeps them. */
  const signingSecrets = async (): Promise<string[]> => {
    const answer = await service.call(token, { method: 'GET', url: '/api/v1/event-deliveries/secrets' });
    if (answer.statusCode === 404) return [];
    return (answer.json() as { data: { secret: string }[] }).data.map((s) => s.secret);
  };

  /** The id of the subscription a `create` printed: the first field of its last line. */
  const subscriptionIdOf = (out: string[]): string => out.at(-1)?.split('\t')[0] ?? '';

  it('on a fresh instance, the first create makes the signing secret and prints it once; later ones do not', async () => {
    // A URL the service refuses is refused before any secret is made.
    const refused = await run([
      'create',
      '--endpoint',
      'ftp://hooks.example.com/x',
      '--event',
      'configuration.changed',
    ]);
    expect(refused.code).toBe(EXIT_REFUSED);
    expect(refused.err).toContain('400');
    expect(await signingSecrets()).toEqual([]);

    const first = await run(['create', '--endpoint', receiver.url, '--event', 'configuration.changed']);
    expect(first.code, first.err).toBe(EXIT_OK);
    const shown = first.out.match(SECRET_PATTERN) ?? [];
    expect(shown).toHaveLength(1);
    // The secret printed is the one the service signs with, on a line that says it is shown once.
    expect(await signingSecrets()).toEqual(shown);
    expect(first.lines.out[0]).toBe(`signing secret (shown this once, store it now): ${shown[0]}`);
    expect(first.err).toContain('No signing secret existed, so one was created');
    expect(first.err).toContain('ledgerflow webhooks rotate-secret');
    expect(first.err).not.toMatch(SECRET_PATTERN);
    const id = subscriptionIdOf(first.lines.out);
    expect(first.lines.out.at(-1)).toBe(`${id}\tactive\t${receiver.url}\tconfiguration.changed`);

    const second = await run(['create', '--endpoint', receiver.url, '--event', 'ingestion.processed']);
    expect(second.code, second.err).toBe(EXIT_OK);
    expect(second.lines.out).toHaveLength(1);
    expect(`${second.out}${second.err}`).not.toMatch(SECRET_PATTERN);
    expect(second.err).toContain('signed with the signing secret that exists (not shown again');
    expect(second.err).toContain('ledgerflow webhooks rotate-secret');
    expect(await signingSecrets()).toEqual(shown);
    const listed = (await run(['list'])).out;
    expect(listed).toContain(`${id}\tactive\t${receiver.url}\tconfiguration.changed`);
    expect(listed).toContain(
      `${subscriptionIdOf(second.lines.out)}\tactive\t${receiver.url}\tingestion.processed`,
    );
  });

  it('rotate-secret prints the new secret once; the old one signs beside it for the overlap', async () => {
    const [old] = await signingSecrets();
    const rotated = await run(['rotate-secret', '--overlap-seconds', '3600']);
    expect(rotated.code, rotated.err).toBe(EXIT_OK);
    const shown = rotated.out.match(SECRET_PATTERN) ?? [];
    expect(shown).toHaveLength(1);
    expect(shown[0]).not.toBe(old);
    expect(await signingSecrets()).toEqual([shown[0], old]);
    expect(rotated.out).toContain('shown this once');
    expect(rotated.err).toContain('for 3600 seconds');
    expect((await run(['rotate-secret', '--overlap-seconds', 'a day'])).code).toBe(EXIT_USAGE);
    expect((await run(['rotate-secret', '--overlap-seconds', '604801'])).code).toBe(EXIT_USAGE);
  });

  it('shows the deliveries of a subscription and redelivers one, and every event since a time', async () => {
    const created = await run(['create', '--endpoint', receiver.url, '--event', 'configuration.changed']);
    const id = subscriptionIdOf(created.lines.out);
    await service.call(token, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk',
      payload: realisticConfiguration(),
    });
    service.services.deliverer.wake();
    await service.services.deliverer.idle();
    const deliveries = await run(['deliveries', '--subscription', id]);
    expect(deliveries.out).toMatch(/\tdelivered\tconfiguration\.changed\t/);
    const deliveryId = deliveries.out.split('\t')[0] ?? '';
    const again = await run(['redeliver', deliveryId]);
    expect(again.out).toMatch(/\tpending\t/);
    const since = await run(['redeliver', '--subscription', id, '--since', '2026-01-01T00:00:00Z']);
    expect(since.out).toContain('1 events queued again');
    expect((await run(['create', '--endpoint', receiver.url, '--event', 'nope'])).code).toBe(EXIT_USAGE);
    expect((await run(['redeliver'])).code).toBe(EXIT_USAGE);
  });
});

describe('ledgerflow webhooks create when another request makes the secret first', () => {
  it('says the secret was made elsewhere, prints none, and subscribes', async () => {
    // A fake service in which someone else creates the signing secret between the refused
    // subscription and the command's creation of the secret: the two requests race on a new
    // instance, and only the winner is shown the secret.
    const asked: string[] = [];
    const subscription = {
      id: 7,
      url: 'https://hooks.example.com/ledger',
      eventTypes: ['configuration.changed'],
      description: null,
      status: 'active',
      flagged: false,
      flaggedAt: null,
      flagReason: null,
      createdAt: '2026-11-20T10:00:00.000Z',
      createdBy: 'ops@example.test',
      updatedAt: '2026-11-20T10:00:00.000Z',
    };
    const server = createServer((request, response) => {
      const send = (status: number, body: unknown) => {
        response.writeHead(status, {
          'content-type': status >= 400 ? 'application/problem+json' : 'application/json',
        });
        response.end(JSON.stringify(body));
      };
      request.resume();
      request.on('end', () => {
        const path = new URL(request.url ?? '/', 'http://x').pathname;
        asked.push(`${request.method} ${path}`);
        if (path === '/auth/token')
          return send(200, { access_token: 'a', token_type: 'Bearer', expires_in: 300 });
        const conflict = (detail: string) => send(409, { title: 'Conflict', status: 409, detail });
        if (path === '/api/v1/event-deliveries/secrets') return conflict('a signing secret exists already');
        const subscriptions = asked.filter((a) => a === 'POST /api/v1/event-deliveries/subscriptions');
        if (subscriptions.length === 1) return conflict('there is no signing secret yet');
        return send(201, subscription);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const io = captureIo();
      const code = await runCli(
        [
          'webhooks',
          'create',
          '--endpoint',
          subscription.url,
          '--event',
          'configuration.changed',
          '--url',
          `http://127.0.0.1:${port}`,
          '--client-id',
          'c',
          '--client-secret',
          's',
        ],
        io,
      );
      expect(code, io.stderr()).toBe(EXIT_OK);
      expect(io.lines.out).toEqual([`7\tactive\t${subscription.url}\tconfiguration.changed`]);
      expect(io.stderr()).toContain('a signing secret was created meanwhile by another request');
      expect(asked.filter((a) => a !== 'POST /auth/token')).toEqual([
        'POST /api/v1/event-deliveries/subscriptions',
        'POST /api/v1/event-deliveries/secrets',
        'POST /api/v1/event-deliveries/subscriptions',
      ]);
    } finally {
      server.close();
    }
  });
});
