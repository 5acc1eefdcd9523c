import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE } from '../../src/cli/output.js';
import { runCli } from '../../src/cli/run.js';
import { ingestClosedSession, realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { captureIo, type RunningService, startService } from './helpers.js';

const EVENTS = 2;

/** `ledgerflow journals reverse` against a listening service (issue 24). */
describe('ledgerflow journals reverse', () => {
  let service: RunningService;
  let connection: string[];
  let ingestionId: string;
  let journalIds: string[];
  beforeAll(async () => {
    service = await startService();
    connection = await service.connectionArgs(['bulk-operator']);
    const token = await service.tokenFor(['bulk-operator']);
    const put = await service.call(token, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk',
      payload: realisticConfiguration(),
    });
    expect(put.statusCode, put.body).toBe(200);
    const events = Array.from({ length: EVENTS }, (_, i) => businessEvent({ amount: `${250 + i}.10` }));
    ingestionId = await ingestClosedSession(service, token, 'businessEvent', events);
    await service.services.processor.drain();
    journalIds = (await service.services.journals.list({ ingestionId }, 0, 100)).rows.map((j) => j.journalId);
    expect(journalIds.length).toBeGreaterThan(1);
  });
  afterAll(async () => {
    await service.close();
  });

  async function cli(...argv: string[]) {
    const io = captureIo();
    return { status: await runCli([...argv, ...connection], io), io };
  }

  it('asks for exactly one selection and a reason', async () => {
    const none = await cli('journals', 'reverse', '--reason', 'x');
    expect(none.status).toBe(EXIT_USAGE);
    expect(none.io.stderr()).toContain('name exactly one selection');
    const two = await cli('journals', 'reverse', '--journal', 'a', '--ingestion', 'b', '--reason', 'x');
    expect(two.status).toBe(EXIT_USAGE);
    const noReason = await cli('journals', 'reverse', '--journal', journalIds[0] ?? '');
    expect(noReason.status).toBe(EXIT_USAGE);
    expect(noReason.io.stderr()).toContain('--reason is required');
    const halfRange = await cli('journals', 'reverse', '--accounting-config', 'IFRS', '--reason', 'x');
    expect(halfRange.status).toBe(EXIT_USAGE);
    const badDate = await cli(
      'journals',
      'reverse',
      '--journal',
      'a',
      '--reason',
      'x',
      '--posting-date',
      '2026-02-30',
    );
    expect(badDate.status).toBe(EXIT_USAGE);
    const help = await cli('journals', 'reverse', '--help');
    expect(help.status).toBe(EXIT_OK);
    expect(help.io.stdout()).toContain('--origin-journal ID');
  });

  it('refuses a posting date in a closed period as the service words it, naming the period, its state and the node, dry run or not', async () => {
    const [, second = ''] = journalIds;
    for (const dryRun of [[], ['--dry-run']]) {
      const refused = await cli(
        'journals',
        'reverse',
        '--journal',
        second,
        '--reason',
        'late',
        '--posting-date',
        '2026-10-15',
        ...dryRun,
      );
      expect(refused.status, refused.io.stderr()).toBe(EXIT_REFUSED);
      // October is past every node config's grace time on 2026-11-20: closed by the calendar.
      expect(refused.io.stderr()).toContain(
        '422 The posting date cannot date a reversal: postingDate 2026-10-15',
      );
      expect(refused.io.stderr()).toContain(
        'is in period 2026-10 of node {"branch":"AMS","legalEntity":"LF_NL"} and accounting configuration',
      );
      expect(refused.io.stderr()).toContain('which is closed by the calendar');
      expect(refused.io.stderr()).toContain('/postingDate: must be in an open period');
      expect(refused.io.stdout()).toBe('');
    }
    // Nothing moved to an open day: the journal stands.
    expect((await service.services.journals.get(second)).withdrawnBy).toBeNull();
  });

  it('shows a dry run, reverses a journal once, and reports it when asked again', async () => {
    const [first = ''] = journalIds;
    const dry = await cli('journals', 'reverse', '--journal', first, '--reason', 'wrong amount', '--dry-run');
    expect(dry.status, dry.io.stderr()).toBe(EXIT_OK);
    expect(dry.io.stdout()).toMatch(/dry run: 1 reversal journals \(\d+ lines\) would be written/);
    expect(dry.io.stdout()).toContain('dry run: nothing was changed');
    expect((await service.services.journals.get(first)).withdrawnBy).toBeNull();

    const done = await cli('journals', 'reverse', '--journal', first, '--reason', 'wrong amount');
    expect(done.status, done.io.stderr()).toBe(EXIT_OK);
    expect(done.io.stdout()).toMatch(/^reversal [0-9a-f-]{36}: 1 reversal journals \(\d+ lines\) written/);
    expect((await service.services.journals.get(first)).withdrawnBy).not.toBeNull();

    const again = await cli('journals', 'reverse', '--journal', first, '--reason', 'wrong amount');
    expect(again.status, again.io.stderr()).toBe(EXIT_OK);
    expect(again.io.stdout()).toContain('no reversal: 0 reversal journals written, nothing recorded');
    expect(again.io.stdout()).toContain(`already reversed, left as they are: 1 (${first})`);
    expect(again.io.stderr()).toContain('nothing new was reversed');
    // Asking again recorded no reversal: the first one is the only one.
    expect((await service.services.reversals.list({ page: 0 }, 10)).rows).toHaveLength(1);
  });

  it('reverses the rest of a session, and answers a refused request with exit 1', async () => {
    const rest = await cli(
      'journals',
      'reverse',
      '--ingestion',
      ingestionId,
      '--reason',
      'sent to the wrong books',
    );
    expect(rest.status, rest.io.stderr()).toBe(EXIT_OK);
    expect(rest.io.stdout()).toContain(`${journalIds.length - 1} reversal journals`);
    expect(rest.io.stdout()).toContain('already reversed, left as they are: 1');
    const unknown = await cli('journals', 'reverse', '--ingestion', 'no-such-session', '--reason', 'x');
    expect(unknown.status).toBe(EXIT_REFUSED);
  });
});
