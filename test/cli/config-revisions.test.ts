import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE } from '../../src/cli/output.js';
import { runCli } from '../../src/cli/run.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { loanRecord } from '../helpers/records.js';
import { captureIo, type RunningService, startService } from './helpers.js';

/** `ledgerflow config push --keep-data`, `config revisions` and `config diff N M` against a listening service. */
describe('ledgerflow config revisions, diff and push --keep-data', () => {
  let service: RunningService;
  let connection: string[];
  let dir: string;
  beforeAll(async () => {
    service = await startService();
    connection = await service.connectionArgs();
    dir = mkdtempSync(join(tmpdir(), 'ledgerflow-cli-revisions-'));
  });
  afterAll(async () => {
    await service?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const run = async (...argv: string[]) => {
    const io = captureIo();
    const status = await runCli(argv, io);
    return { status, io };
  };

  function write(name: string, document: unknown): string {
    const file = join(dir, name);
    writeFileSync(file, JSON.stringify(document));
    return file;
  }

  it('pushes keeping the data, lists the revisions and prints the diff', async () => {
    const first = await run(
      'config',
      'push',
      write('first.json', realisticConfiguration()),
      '--yes',
      ...connection,
    );
    expect(first.status, first.io.stderr()).toBe(EXIT_OK);
    const token = await service.tokenFor(['api-client']);
    const session = await service.call(token, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace: 'loans', entity: 'loanTransaction' },
    });
    const chunk = await service.call(token, {
      method: 'POST',
      url: `/api/v1/ingestions/${session.json().ingestionId}`,
      payload: { data: [loanRecord(1)] },
    });
    expect(chunk.statusCode).toBe(201);

    const changed = realisticConfiguration();
    (changed.configuration.entities[0]?.attributes ?? []).push({ name: 'note', type: { typeName: 'TEXT' } });
    const file = write('changed.json', changed);
    const plainDry = await run('config', 'push', file, '--dry-run', ...connection);
    expect(plainDry.io.stdout()).toContain('push it with --keep-data');
    const dry = await run('config', 'push', file, '--keep-data', '--dry-run', ...connection);
    expect(dry.status, dry.io.stderr()).toBe(EXIT_OK);
    expect(dry.io.lines.out.at(-1)).toBe('dry run: nothing was changed');
    const kept = await run('config', 'push', file, '--keep-data', ...connection);
    expect(kept.status, kept.io.stderr()).toBe(EXIT_OK);
    expect(kept.io.stdout()).toContain(
      `pushed configuration v20230211 from ${file}; the processing data was kept`,
    );
    expect(
      (await service.call(token, { method: 'GET', url: `/api/v1/ingestions/${session.json().ingestionId}` }))
        .statusCode,
    ).toBe(200);

    const listed = await run('config', 'revisions', '--limit', '2', ...connection);
    expect(listed.status, listed.io.stderr()).toBe(EXIT_OK);
    expect(listed.io.lines.out[0]).toMatch(/^REVISION +AT +BY +ACTION +SHA256$/);
    expect(listed.io.lines.out).toHaveLength(3);
    const [newest, older] = listed.io.lines.out.slice(1).map((line) => Number(line.trim().split(/\s+/)[0]));
    expect(newest).toBe((older ?? 0) + 1);
    const json = await run('config', 'revisions', '--limit', '1', '--json', ...connection);
    expect(JSON.parse(json.io.stdout())).toMatchObject({ revision: newest, action: 'upload' });

    const diff = await run('config', 'diff', String(older), String(newest), ...connection);
    expect(diff.status, diff.io.stderr()).toBe(EXIT_OK);
    expect(diff.io.lines.out).toEqual([
      expect.stringMatching(/^\+ \/entities\/0\/attributes\/\d+: \{"name":"note"/),
    ]);
    const same = await run('config', 'diff', String(newest), String(newest), ...connection);
    expect(same.io.stdout()).toBe(`revisions ${newest} and ${newest} hold the same configuration`);
  });

  it('prints each blocking change of a refused keep-data push as PATH: REASON, exit 1', async () => {
    const unsafe = realisticConfiguration();
    const attributes = (unsafe.configuration.entities[0]?.attributes ?? []) as { name: string }[];
    attributes.splice(
      attributes.findIndex((a) => a.name === 'installmentNumber'),
      1,
    );
    const { status, io } = await run(
      'config',
      'push',
      write('unsafe.json', unsafe),
      '--keep-data',
      ...connection,
    );
    expect(status).toBe(EXIT_REFUSED);
    const lines = io.lines.err.join('\n').split('\n');
    expect(lines[0]).toMatch(/^ledgerflow: PUT \/api\/v1\/configuration\/bulk: 409 /);
    expect(lines).toContainEqual(
      expect.stringMatching(/^\/configuration\/entities\/0\/attributes\/\d+: attribute installmentNumber/),
    );
  });

  it('refuses bad usage with exit 2', async () => {
    expect((await run('config', 'diff', '1', ...connection)).status).toBe(EXIT_USAGE);
    expect((await run('config', 'diff', '0', '1', ...connection)).status).toBe(EXIT_USAGE);
    expect((await run('config', 'revisions', '--limit', '2', '--all', ...connection)).status).toBe(
      EXIT_USAGE,
    );
  });
});
