import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE } from '../../src/cli/output.js';
import { runCli } from '../../src/cli/run.js';
import { testClock } from '../helpers/clock.js';
import { ingestClosedSession, realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { captureIo, type RunningService, startService } from './helpers.js';

/** `ledgerflow periods` against a listening service (issue 27). */
describe('ledgerflow periods', () => {
  let service: RunningService;
  let connection: string[];
  let token: string;
  const NODE = ['--node', 'legalEntity=LF_NL', '--node', 'branch=AMS'];
  const NOVEMBER = ['--accounting-config', 'LOCAL_GAAP', ...NODE, '--period', '2026-11-01'];

  beforeAll(async () => {
    service = await startService({}, { clock: testClock() });
    connection = await service.connectionArgs(['admin']);
    token = await service.tokenFor(['bulk-operator']);
    const put = await service.call(token, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk',
      payload: realisticConfiguration(),
    });
    expect(put.statusCode, put.body).toBe(200);
  });
  afterAll(async () => {
    await service.close();
  });

  async function cli(...argv: string[]) {
    const io = captureIo();
    return { status: await runCli([...argv, ...connection], io), io };
  }

  it('lists the periods of a node with their state', async () => {
    const listed = await cli(
      'periods',
      'list',
      '--accounting-config',
      'LOCAL_GAAP',
      ...NODE,
      '--from',
      '2026-10-01',
      '--to',
      '2026-11-30',
    );
    expect(listed.status, listed.io.stderr()).toBe(EXIT_OK);
    expect(listed.io.stdout()).toContain(
      '2026-10-01..2026-10-31  {"legalEntity":"LF_NL","branch":"AMS"}  closed (calendar)',
    );
    expect(listed.io.stdout()).toContain(
      '2026-11-01..2026-11-30  {"legalEntity":"LF_NL","branch":"AMS"}  open (calendar) current',
    );
    const json = await cli('periods', 'list', '--accounting-config', 'LOCAL_GAAP', '--json');
    expect(JSON.parse(json.io.stdout()).periods).toHaveLength(12);
  });

  it('refuses bad usage: a missing node, a bad date, a reopening without a reason', async () => {
    expect(
      (await cli('periods', 'close', '--accounting-config', 'LOCAL_GAAP', '--period', '2026-11-01')).status,
    ).toBe(EXIT_USAGE);
    expect((await cli('periods', 'close', ...NOVEMBER.slice(0, -1), '2026-11-31')).status).toBe(EXIT_USAGE);
    const noReason = await cli('periods', 'reopen', ...NOVEMBER);
    expect(noReason.status).toBe(EXIT_USAGE);
    expect(noReason.io.stderr()).toContain('--reason is required');
    expect((await cli('periods', 'frobnicate')).status).toBe(EXIT_USAGE);
  });

  it('says why a close is refused, closes, shows the snapshot, and reopens with a reason', async () => {
    await ingestClosedSession(service, token, 'businessEvent', [
      businessEvent({ effectiveDate: '2026-11-10' }),
    ]);
    const refused = await cli('periods', 'close', ...NOVEMBER);
    expect(refused.status).toBe(EXIT_REFUSED);
    expect(refused.io.stderr()).toContain('1 records wait for processing');
    await service.services.processor.drain();

    const closed = await cli('periods', 'close', ...NOVEMBER);
    expect(closed.status, closed.io.stderr()).toBe(EXIT_OK);
    expect(closed.io.stdout()).toMatch(/closed \(closed-by-hand by .+\)/);
    const snapshotId = /snapshot ([0-9a-f-]{36}): close/.exec(closed.io.stdout())?.[1] ?? '';
    expect(snapshotId).not.toBe('');

    const listed = await cli('periods', 'snapshots', ...NOVEMBER);
    expect(listed.io.stdout()).toContain(`snapshot ${snapshotId}: close`);
    const shown = await cli('periods', 'snapshots', '--snapshot', snapshotId);
    expect(shown.status).toBe(EXIT_OK);
    expect(shown.io.stdout()).toMatch(/sha256 [0-9a-f]{64}/);
    expect(shown.io.stdout()).toMatch(/^ {2}\S+ {2}-?[0-9.]+ EUR$/m);

    const reopened = await cli('periods', 'reopen', ...NOVEMBER, '--reason', 'late invoice');
    expect(reopened.status, reopened.io.stderr()).toBe(EXIT_OK);
    expect(reopened.io.stdout()).toContain('open (reopened by');
    expect(reopened.io.stdout()).toContain('(late invoice)');
    const locked = await cli('periods', 'lock', ...NOVEMBER);
    expect(locked.status, locked.io.stderr()).toBe(EXIT_OK);
    expect(locked.io.stdout()).toContain('locked (locked-by-hand');
  });
});
