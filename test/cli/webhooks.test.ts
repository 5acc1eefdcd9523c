import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE } from '../../src/cli/output.js';
import { runCli } from '../../src/cli/run.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { captureIo, type RunningService, startService } from './helpers.js';

/** Issue 26: `ledgerflow webhooks list|create|deliveries|redeliver` against a running service. */
describe('ledgerflow webhooks', () => {
  let service: RunningService;
  let connection: string[];
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    service = await startService({ webhookAllowHttpLoopback: true });
    connection = await service.connectionArgs(['admin']);
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
  });

  const run = async (args: string[]) => {
    const io = captureIo();
    const code = await runCli(['webhooks', ...args, ...connection], io);
    return { code, out: io.stdout(), err: io.stderr() };
  };

  it('creates a subscription, lists it, shows its deliveries and redelivers one and since a time', async () => {
    const refused = await run(['create', '--endpoint', receiver.url, '--event', 'configuration.changed']);
    expect(refused.code).toBe(EXIT_REFUSED);
    expect(refused.err).toContain('signing secret');
    const token = await service.tokenFor(['admin']);
    await service.call(token, { method: 'POST', url: '/api/v1/event-deliveries/secrets' });
    const created = await run(['create', '--endpoint', receiver.url, '--event', 'configuration.changed']);
    expect(created.code, created.err).toBe(EXIT_OK);
    const id = created.out.split('\t')[0];
    expect((await run(['list'])).out).toContain(`${id}\tactive\t${receiver.url}\tconfiguration.changed`);
    await service.call(token, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk',
      payload: realisticConfiguration(),
    });
    service.services.deliverer.wake();
    await service.services.deliverer.idle();
    const deliveries = await run(['deliveries', '--subscription', String(id)]);
    expect(deliveries.out).toMatch(/\tdelivered\tconfiguration\.changed\t/);
    const deliveryId = deliveries.out.split('\t')[0] ?? '';
    const again = await run(['redeliver', deliveryId]);
    expect(again.out).toMatch(/\tpending\t/);
    const since = await run(['redeliver', '--subscription', String(id), '--since', '2026-01-01T00:00:00Z']);
    expect(since.out).toContain('1 events queued again');
    expect((await run(['create', '--endpoint', receiver.url, '--event', 'nope'])).code).toBe(EXIT_USAGE);
    expect((await run(['redeliver'])).code).toBe(EXIT_USAGE);
  });
});
