import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE } from '../../src/cli/output.js';
import { runCli } from '../../src/cli/run.js';
import { testClock } from '../helpers/clock.js';
import { ingestClosedSession, realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { captureIo, type RunningService, startService } from './helpers.js';

/** `ledgerflow approvals` and the commands whose actions wait for approval. */
describe('ledgerflow approvals', () => {
  let service: RunningService;
  let maker: string[];
  let approver: string[];
  let ingestionId: string;
  beforeAll(async () => {
    service = await startService(
      { approvalRequired: ['configuration.delete', 'reversal', 'period.reopen'] },
      { clock: testClock() },
    );
    await service.services.configuration.upload(realisticConfiguration(), { user: 'setup@example.test' });
    maker = await service.connectionArgs(['bulk-operator']);
    approver = await service.connectionArgs(['admin']);
    const token = await service.tokenFor(['bulk-operator']);
    ingestionId = await ingestClosedSession(service, token, 'businessEvent', [
      businessEvent({ effectiveDate: '2026-11-18' }),
    ]);
    await service.services.processor.drain();
  });
  afterAll(async () => {
    await service.close();
  });

  async function cli(connection: string[], ...argv: string[]) {
    const io = captureIo();
    return { status: await runCli([...argv, ...connection], io), io };
  }

  function requestIdOf(output: string): string {
    const id = /request ([0-9a-f-]{36})/.exec(output)?.[1];
    if (id === undefined) throw new Error(`no request id in: ${output}`);
    return id;
  }

  it('a reversal waits; the maker cannot approve it; another user lists, shows and approves it', async () => {
    const made = await cli(maker, 'journals', 'reverse', '--ingestion', ingestionId, '--reason', 'twice');
    expect(made.status, made.io.stderr()).toBe(EXIT_OK);
    expect(made.io.stdout()).toContain('waits for approval by another user');
    const id = requestIdOf(made.io.stdout());

    const listed = await cli(approver, 'approvals', 'list');
    expect(listed.status, listed.io.stderr()).toBe(EXIT_OK);
    expect(listed.io.stdout()).toContain(id);
    expect(listed.io.stdout()).toMatch(/reversal .* pending-approval +reverses journals \d+/);

    const shown = await cli(approver, 'approvals', 'show', id);
    expect(shown.io.stdout()).toContain('status    pending-approval');
    expect(shown.io.stdout()).toMatch(/document {2}sha256 [0-9a-f]{64}/);

    const own = await cli(maker, 'approvals', 'approve', id);
    expect(own.status).toBe(EXIT_REFUSED);
    expect(own.io.stderr()).toContain('403');

    const approved = await cli(approver, 'approvals', 'approve', id);
    expect(approved.status, approved.io.stderr()).toBe(EXIT_OK);
    expect(approved.io.stdout()).toContain('status    approved');
    expect(approved.io.stdout()).toContain('reversalId');
  });

  it('a wipe waits and is rejected with a reason; reject needs one', async () => {
    const made = await cli(maker, 'config', 'wipe', '--yes');
    expect(made.status, made.io.stderr()).toBe(EXIT_OK);
    const id = requestIdOf(made.io.stdout());
    const noReason = await cli(approver, 'approvals', 'reject', id);
    expect(noReason.status).toBe(EXIT_USAGE);
    const rejected = await cli(approver, 'approvals', 'reject', id, '--reason', 'not now');
    expect(rejected.status, rejected.io.stderr()).toBe(EXIT_OK);
    expect(rejected.io.stdout()).toContain('reason    not now');
    const listed = await cli(approver, 'approvals', 'list', '--status', 'rejected', '--json');
    expect(JSON.parse(listed.io.stdout().trim().split('\n')[0] ?? '{}')).toMatchObject({
      requestId: id,
      status: 'rejected',
    });
    expect((await service.services.configuration.wipeDryRun()).wouldDelete.ingestions).toBe(1);
  });
  it('a period reopening waits, shows its period and reason, and reopens once approved', async () => {
    const controller = await service.connectionArgs(['admin']);
    const period = [
      '--accounting-config',
      'LOCAL_GAAP',
      '--node',
      'legalEntity=LF_NL',
      '--node',
      'branch=AMS',
    ];
    const made = await cli(
      controller,
      'periods',
      'reopen',
      ...period,
      '--period',
      '2026-09-01',
      '--reason',
      'late invoice',
    );
    expect(made.status, made.io.stderr()).toBe(EXIT_OK);
    expect(made.io.stdout()).toContain('waits for approval by another user');
    const id = requestIdOf(made.io.stdout());
    const listed = await cli(approver, 'approvals', 'list');
    expect(listed.io.stdout()).toMatch(
      /period\.reopen .* pending-approval +reopens LOCAL_GAAP .*2026-09-01, closed \(calendar\) now; reason: late invoice/,
    );
    const approved = await cli(approver, 'approvals', 'approve', id);
    expect(approved.status, approved.io.stderr()).toBe(EXIT_OK);
    expect(approved.io.stdout()).toContain('status    approved');
    const now = await cli(
      approver,
      'periods',
      'list',
      ...period,
      '--from',
      '2026-09-01',
      '--to',
      '2026-09-30',
    );
    expect(now.io.stdout()).toContain('reopened');
  });
});
