import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE } from '../../src/cli/output.js';
import { runCli } from '../../src/cli/run.js';
import { addLookupKeepingData, failForMissingLookup } from '../helpers/reprocessing.js';
import { captureIo, type RunningService, startService } from './helpers.js';

const EVENTS = 5;

/** `ledgerflow errors reprocess|run|schedule` against a listening service (issue 23). */
describe('ledgerflow errors', () => {
  let service: RunningService;
  let connection: string[];
  beforeAll(async () => {
    service = await startService();
    connection = await service.connectionArgs(['bulk-operator']);
    await failForMissingLookup(service, await service.tokenFor(['bulk-operator']), EVENTS);
    service.services.processor.start();
  });
  afterAll(async () => {
    await service.close();
  });

  async function cli(...argv: string[]) {
    const io = captureIo();
    return { status: await runCli([...argv, ...connection], io), io };
  }

  it('refuses a reprocessing without a selection, and bad schedule options', async () => {
    expect((await cli('errors', 'reprocess')).status).toBe(EXIT_USAGE);
    expect((await cli('errors', 'reprocess', '--from', '2026-02-30', '--all')).status).toBe(EXIT_USAGE);
    expect((await cli('errors', 'schedule', 'set', '--every', 'often')).status).toBe(EXIT_USAGE);
    const short = await cli('errors', 'schedule', 'set', '--every', '60');
    expect(short.status).toBe(EXIT_REFUSED);
    expect(short.io.stderr()).toContain('intervalMinutes');
  });

  it('shows a dry run, runs records that still fail (exit 1), then posts them once the lookup is added', async () => {
    const dry = await cli('errors', 'reprocess', '--dry-run', '--code', 'no-account');
    expect(dry.status, dry.io.stderr()).toBe(EXIT_OK);
    expect(dry.io.stdout()).toContain(
      `dry run: ${EVENTS} would run, 0 skipped at the maximum of attempts; 0 would post, ${EVENTS} would still fail (no-account ${EVENTS})`,
    );
    const failing = await cli('errors', 'reprocess', '--all');
    expect(failing.status).toBe(EXIT_REFUSED);
    expect(failing.io.stdout()).toMatch(
      new RegExp(
        `run \\d+ finished: ${EVENTS} queued, 0 skipped at 5 attempts, 0 posted, ${EVENTS} still failing \\(no-account ${EVENTS}\\)`,
      ),
    );
    await addLookupKeepingData(service, await service.tokenFor(['bulk-operator']));
    const posting = await cli('errors', 'reprocess', '--all');
    expect(posting.status, posting.io.stderr()).toBe(EXIT_OK);
    expect(posting.io.stdout()).toContain(`${EVENTS} posted, 0 still failing (none)`);
    const id = /run (\d+)/.exec(posting.io.stdout())?.[1] ?? '';
    const shown = await cli('errors', 'run', id);
    expect(shown.io.stdout()).toContain(`run ${id} finished`);
  });

  it('shows and sets the schedule, keeping what is not given', async () => {
    const shown = await cli('errors', 'schedule');
    expect(shown.io.stdout()).toContain('schedule: daily at 08:00 UTC, at most 5 attempts per record');
    const set = await cli('errors', 'schedule', 'set', '--every', '240', '--max-attempts', '7');
    expect(set.status, set.io.stderr()).toBe(EXIT_OK);
    expect(set.io.stdout()).toContain('schedule: every 240 minutes, at most 7 attempts per record');
    const disabled = await cli('errors', 'schedule', 'set', '--disabled');
    expect(disabled.io.stdout()).toContain('schedule: disabled, at most 7 attempts per record');
    expect(disabled.io.stdout()).toContain('next run: none');
  });
});
