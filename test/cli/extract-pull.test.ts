import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_USAGE } from '../../src/cli/output.js';
import { runCli } from '../../src/cli/run.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent } from '../helpers/records.js';
import { captureIo, type RunningService, startService } from './helpers.js';

/** `ledgerflow extract pull` against the real service: pages, resume, acknowledgement (issue 25). */
describe('ledgerflow extract pull', () => {
  let service: RunningService;
  let connection: string[];
  let token: string;
  let dir: string;
  let configId: number;
  beforeAll(async () => {
    service = await startService({ businessDate: '2026-11-20' });
    connection = await service.connectionArgs(['bulk-operator']);
    token = await service.tokenFor(['bulk-operator']);
    dir = mkdtempSync(join(tmpdir(), 'ledgerflow-cli-extract-'));
    await service.call(token, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk',
      payload: realisticConfiguration(),
    });
    await ingest(1200);
    const created = await service.call(token, {
      method: 'POST',
      url: '/api/v1/extraction-configurations',
      payload: {
        name: 'gl-lines',
        source: 'journal-lines',
        fields: ['journalId', 'journalLineNo', 'account', 'transactionAmount', 'drCr'],
        format: 'csv',
        incremental: true,
      },
    });
    configId = created.json().id;
    await service.call(token, {
      method: 'PATCH',
      url: `/api/v1/extraction-configurations/${configId}`,
      payload: { state: 'Active' },
    });
  });
  afterAll(async () => {
    await service?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  async function ingest(events: number): Promise<void> {
    const session = await service.call(token, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace: 'ledger', entity: 'businessEvent' },
    });
    const ingestionId = session.json().ingestionId;
    await service.call(token, {
      method: 'POST',
      url: `/api/v1/ingestions/${ingestionId}`,
      payload: { data: Array.from({ length: events }, (_, i) => businessEvent({ amount: `${i + 1}.50` })) },
    });
    await service.services.processor.drain();
  }

  const pull = async (file: string, ...extra: string[]) => {
    const io = captureIo();
    const code = await runCli(['extract', 'pull', ...extra, '--output', file, ...connection], io);
    return { code, out: io.stdout(), err: io.stderr() };
  };

  it('pulls every page into FILE, resumes from the state left by a failed pull, and acknowledges with --ack', async () => {
    const file = join(dir, 'lines.csv');
    const first = await pull(file, 'gl-lines');
    expect(first.code, first.err).toBe(EXIT_OK);
    const lines = readFileSync(file, 'utf8')
      .split('\r\n')
      .filter((line) => line !== '');
    // 1,200 events, two journals each (IFRS and LOCAL_GAAP), two lines each.
    expect(lines).toHaveLength(4801);
    expect(lines[0]).toBe('journalId,journalLineNo,account,transactionAmount,drCr');
    expect(new Set(lines).size).toBe(lines.length);
    expect(existsSync(`${file}.extract-state`)).toBe(false);

    // A pull that stopped after its first page (a state saved, a page half-written after it).
    const resumed = join(dir, 'resumed.csv');
    const head = `${lines.slice(0, 1001).join('\r\n')}\r\n`;
    const firstPage = await service.call(token, {
      method: 'GET',
      url: `/api/v1/extraction-configurations/${configId}/extractions/paginated?limit=1000`,
    });
    writeFileSync(`${resumed}.partial`, `${head}half a line`);
    writeFileSync(
      `${resumed}.extract-state`,
      JSON.stringify({
        configurationId: configId,
        format: 'csv',
        columns: ['journalId', 'journalLineNo', 'account', 'transactionAmount', 'drCr'],
        next: firstPage.json().next,
        bytes: Buffer.byteLength(head),
        rows: 1000,
      }),
    );
    const again = await pull(resumed, String(configId), '--ack');
    expect(again.code, again.err).toBe(EXIT_OK);
    expect(again.out).toContain('resumed and pulled 4800 rows');
    expect(again.out).toContain('latest offsets incremented');
    expect(readFileSync(resumed, 'utf8')).toBe(readFileSync(file, 'utf8'));

    // After the acknowledgement, only what is new.
    await ingest(1);
    const next = await pull(join(dir, 'next.csv'), 'gl-lines', '--ack');
    expect(next.code, next.err).toBe(EXIT_OK);
    expect(
      readFileSync(join(dir, 'next.csv'), 'utf8')
        .split('\r\n')
        .filter((line) => line !== ''),
    ).toHaveLength(5);
  });

  it('refuses bad usage with exit 2', async () => {
    expect((await pull(join(dir, 'x.csv'))).code).toBe(EXIT_USAGE);
    expect((await pull('-', 'gl-lines')).code).toBe(EXIT_USAGE);
    expect((await pull(join(dir, 'missing', 'x.csv'), 'gl-lines')).code).toBe(EXIT_USAGE);
  });
});
