import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE } from '../../src/cli/output.js';
import { runCli } from '../../src/cli/run.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { captureIo, type RunningService, startService } from './helpers.js';

/**
 * Issue 24: `ledgerflow correct --rollback OLD --post NEW` rolls back the events of OLD, waits,
 * stops when a rollback fails, and posts NEW only when every rollback succeeded.
 */
describe('ledgerflow correct', () => {
  let service: RunningService;
  let connection: string[];
  let operator: string;
  let dir: string;
  beforeAll(async () => {
    service = await startService();
    connection = await service.connectionArgs();
    operator = await service.tokenFor(['bulk-operator']);
    const put = await service.call(operator, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk',
      payload: realisticConfiguration(),
    });
    expect(put.statusCode).toBe(200);
    // The command waits for processing, which runs in the background as in a service.
    service.services.processor.start();
    dir = mkdtempSync(join(tmpdir(), 'ledgerflow-cli-correct-'));
  });
  afterAll(async () => {
    await service?.services.processor.stop();
    await service?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const run = async (...argv: string[]) => {
    const io = captureIo();
    const status = await runCli(argv, io);
    return { status, io };
  };
  const file = (name: string, records: Record<string, unknown>[]): string => {
    const path = join(dir, name);
    writeFileSync(path, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
    return path;
  };
  const balances = async (): Promise<string[]> => {
    const response = await service.call(operator, { method: 'GET', url: '/api/v1/balances?currency=CHF' });
    return (response.json().data as { account: string; accountingConfig: string; balance: string }[])
      .map((row) => `${row.accountingConfig} ${row.account} ${row.balance}`)
      .sort();
  };

  it('rolls back the old events, then posts the corrected ones', async () => {
    const old = [
      businessEvent({ amount: '100.00', currency: 'CHF' }),
      businessEvent({ amount: '7.5', currency: 'CHF' }),
    ];
    const posted = await run(
      'ingest',
      file('posted.ndjson', old),
      '--namespace',
      'ledger',
      '--entity',
      'businessEvent',
      ...connection,
    );
    expect(posted.status, posted.io.stderr()).toBe(EXIT_OK);
    const before = await balances();

    const corrected = [
      businessEvent({ amount: '110.00', currency: 'CHF' }),
      businessEvent({ amount: '7.50', currency: 'CHF' }),
    ];
    const { status, io } = await run(
      'correct',
      '--rollback',
      file('old.ndjson', old),
      '--post',
      file('new.ndjson', corrected),
      ...connection,
    );
    expect(status, io.stderr()).toBe(EXIT_OK);
    expect(io.stdout()).toMatch(/rollback: 2 business events rolled back/);
    expect(io.stdout()).toMatch(/post: 2 business events posted/);
    const after = await balances();
    expect(after).not.toEqual(before);
    for (const line of after) expect(line).toMatch(/ -?117\.5(0)?$/);
  });

  it('reads a CSV rollback file as ingest does', async () => {
    const event = businessEvent({ amount: '40', currency: 'CHF', productCode: 'SME' });
    expect(
      (
        await run(
          'ingest',
          file('sme.ndjson', [event]),
          '--namespace',
          'ledger',
          '--entity',
          'businessEvent',
          ...connection,
        )
      ).status,
    ).toBe(EXIT_OK);
    const header = Object.keys(event).join(',');
    const row = Object.values(event).join(',');
    const csv = join(dir, 'old.csv');
    writeFileSync(csv, `${header}\n${row}\n`);
    const { status, io } = await run(
      'correct',
      '--rollback',
      csv,
      '--post',
      file('sme-new.ndjson', [{ ...event, amount: '41' }]),
      ...connection,
    );
    expect(status, io.stderr()).toBe(EXIT_OK);
  });

  it('stops with exit 1 naming the record and its code when a rollback fails, and sends nothing else', async () => {
    const sessionsBefore = await service.call(operator, {
      method: 'GET',
      url: '/api/v1/ingestions?limit=100',
    });
    const count = sessionsBefore.json().data.length as number;
    const { status, io } = await run(
      'correct',
      '--rollback',
      file('never.ndjson', [businessEvent({ amount: '999.99', currency: 'CHF' })]),
      '--post',
      file('never-new.ndjson', [businessEvent({ amount: '1.00', currency: 'CHF' })]),
      ...connection,
    );
    expect(status).toBe(EXIT_REFUSED);
    expect(io.stderr()).toMatch(/record \d+ rollback-target-not-found: .*"LOAN_DISBURSEMENT"/);
    expect(io.stderr()).toContain('never-new.ndjson was not sent');
    const sessionsAfter = await service.call(operator, {
      method: 'GET',
      url: '/api/v1/ingestions?limit=100',
    });
    // Only the rollback's session was opened.
    expect(sessionsAfter.json().data.length).toBe(count + 1);
  });

  it('needs both files', async () => {
    const { status, io } = await run('correct', '--rollback', 'old.ndjson', ...connection);
    expect(status).toBe(EXIT_USAGE);
    expect(io.stderr()).toContain('usage: ledgerflow correct');
  });
});
