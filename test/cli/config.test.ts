import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE } from '../../src/cli/output.js';
import { runCli } from '../../src/cli/run.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { loanRecord } from '../helpers/records.js';
import { captureIo, type RunningService, startService } from './helpers.js';

/**
 * `ledgerflow config pull|push|wipe` against a listening service. The push and wipe tests need
 * the service's dry runs (`?dryRun=true` with `wouldDelete`, `deleted` in the answer and the
 * audit log).
 */
describe('ledgerflow config', () => {
  let service: RunningService;
  let connection: string[];
  let dir: string;
  beforeAll(async () => {
    service = await startService();
    connection = await service.connectionArgs();
    dir = mkdtempSync(join(tmpdir(), 'ledgerflow-cli-config-'));
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

  it('pushes a configuration and prints the section counts', async () => {
    const file = join(dir, 'realistic.json');
    writeFileSync(file, JSON.stringify(realisticConfiguration()));
    const { status, io } = await run('config', 'push', file, ...connection);
    expect(status, io.stderr()).toBe(EXIT_OK);
    expect(io.lines.out.slice(0, 3)).toEqual([
      `configuration v20230211 in ${file} is valid`,
      'would delete no processing data',
      `pushed configuration v20230211 from ${file}`,
    ]);
    expect(io.stdout()).toMatch(/^ {2}entities +1$/m);
    expect(io.stdout()).toMatch(/^ {2}postingComponents +\d+$/m);
    expect(io.lines.out.at(-1)).toBe('deleted no processing data');
  });

  it('pushing the same document again shows the processing data it deletes, needs --yes, and prints what it deleted', async () => {
    // Needs the service's dry run (PUT ?dryRun=true answering wouldDelete, deleted counts).
    const token = await service.tokenFor(['api-client']);
    const session = await service.call(token, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace: 'loans', entity: 'loanTransaction' },
    });
    const ingestionId = session.json().ingestionId as string;
    const chunk = await service.call(token, {
      method: 'POST',
      url: `/api/v1/ingestions/${ingestionId}`,
      payload: { data: [loanRecord(1), loanRecord(2), loanRecord(3)] },
    });
    expect(chunk.statusCode).toBe(201);
    const file = join(dir, 'realistic.json');

    const refused = await run('config', 'push', file, ...connection);
    expect(refused.status).toBe(EXIT_USAGE);
    expect(refused.io.stdout()).toMatch(/^would delete this processing data:$/m);
    expect(refused.io.stdout()).toMatch(/^ {2}ingestions +1$/m);
    expect(refused.io.stdout()).toMatch(/^ {2}records +3$/m);
    expect(refused.io.stderr()).toContain('pass --yes');
    const sessionPath = { method: 'GET' as const, url: `/api/v1/ingestions/${ingestionId}` };
    expect((await service.call(token, sessionPath)).statusCode).toBe(200);

    const dry = await run('config', 'push', file, '--dry-run', ...connection);
    expect(dry.status).toBe(EXIT_OK);
    expect(dry.io.lines.out.at(-1)).toBe('dry run: nothing was changed');
    expect((await service.call(token, sessionPath)).statusCode).toBe(200);

    const pushed = await run('config', 'push', file, '--yes', ...connection);
    expect(pushed.status, pushed.io.stderr()).toBe(EXIT_OK);
    const after = pushed.io.stdout().slice(pushed.io.stdout().indexOf('pushed configuration'));
    expect(after).toMatch(/^deleted:$/m);
    expect(after).toMatch(/^ {2}ingestions +1$/m);
    expect(after).toMatch(/^ {2}records +3$/m);
    expect((await service.call(token, sessionPath)).statusCode).toBe(404);
  });

  it('pulls it back as pretty JSON with the same configuration', async () => {
    const file = join(dir, 'pulled.json');
    const { status, io } = await run('config', 'pull', file, ...connection);
    expect(status, io.stderr()).toBe(EXIT_OK);
    expect(io.stdout()).toBe(`pulled configuration v20230211 to ${file}`);
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('\n  "configuration": {\n');
    const pulled = JSON.parse(text);
    expect(pulled.configuration).toEqual(realisticConfiguration().configuration);
    expect(pulled.downloadedBy).toMatch(/@example\.test$/);
  });

  it('pulls to standard output with -', async () => {
    const { status, io } = await run('config', 'pull', '-', ...connection);
    expect(status).toBe(EXIT_OK);
    expect(JSON.parse(io.stdout()).version).toBe('v20230211');
  });

  it('prints every validation error on its own line with its JSON Pointer path, exit 1', async () => {
    const broken = realisticConfiguration();
    const c = broken.configuration as Record<string, Array<Record<string, unknown>>>;
    (c.journalTypes as Array<Record<string, unknown>>)[1] = { ...c.journalTypes?.[1], behavior: 'SOMETIMES' };
    (c.nodes as Array<Record<string, unknown>>)[0] = { ...c.nodes?.[0], timeZone: 'Mars/Olympus_Mons' };
    const file = join(dir, 'broken.json');
    writeFileSync(file, JSON.stringify(broken));
    const { status, io } = await run('config', 'push', file, ...connection);
    expect(status).toBe(EXIT_REFUSED);
    const lines = io.lines.err.join('\n').split('\n');
    expect(lines[0]).toMatch(/^ledgerflow: PUT \/api\/v1\/configuration\/bulk: 400 /);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\/configuration\/journalTypes\/1\/behavior: /),
        expect.stringMatching(/^\/configuration\/nodes\/0\/timeZone: /),
      ]),
    );
  });

  it('wipes the configuration (nothing to confirm without processing data) and prints what it deleted', async () => {
    const { status, io } = await run('config', 'wipe', ...connection);
    expect(status, io.stderr()).toBe(EXIT_OK);
    expect(io.lines.out).toEqual([
      'would delete the configuration (users and credentials stay)',
      'would delete no processing data',
      'configuration wiped (users and credentials kept)',
      'deleted no processing data',
    ]);
    const pulled = await run('config', 'pull', '-', ...connection);
    expect(JSON.parse(pulled.io.stdout()).configuration.entities).toEqual([]);
  });

  it('reads the connection from LEDGERFLOW_* variables', async () => {
    const [, url, , clientId, , clientSecret] = connection;
    const saved = { ...process.env };
    Object.assign(process.env, {
      LEDGERFLOW_URL: url,
      LEDGERFLOW_CLIENT_ID: clientId,
      LEDGERFLOW_CLIENT_SECRET: clientSecret,
    });
    try {
      const { status } = await run('config', 'pull', '-');
      expect(status).toBe(EXIT_OK);
    } finally {
      for (const name of ['LEDGERFLOW_URL', 'LEDGERFLOW_CLIENT_ID', 'LEDGERFLOW_CLIENT_SECRET']) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    }
  });

  it('is refused (exit 1) without the permission, naming it', async () => {
    const viewer = await service.connectionArgs(['viewer']);
    const { status, io } = await run('config', 'wipe', ...viewer);
    expect(status).toBe(EXIT_REFUSED);
    expect(io.stderr()).toContain('403');
    expect(io.stderr()).toContain('configuration:delete');
  });

  it('is refused (exit 1) with a wrong secret, never printing it', async () => {
    const wrong = [...connection.slice(0, 5), 'not-the-secret-123'];
    const { status, io } = await run('config', 'pull', '-', ...wrong);
    expect(status).toBe(EXIT_REFUSED);
    expect(io.stderr()).toContain('401 invalid_client');
    expect(io.stderr()).not.toContain('not-the-secret-123');
  });

  it('is a usage error (exit 2) without a connection, a file, or with an unknown option', async () => {
    const saved = process.env.LEDGERFLOW_URL;
    delete process.env.LEDGERFLOW_URL;
    try {
      expect((await run('config', 'pull', 'x.json', '--client-id', 'a', '--client-secret', 'b')).status).toBe(
        EXIT_USAGE,
      );
    } finally {
      if (saved !== undefined) process.env.LEDGERFLOW_URL = saved;
    }
    expect((await run('config', 'push', ...connection)).status).toBe(EXIT_USAGE);
    expect((await run('config', 'push', join(dir, 'missing.json'), ...connection)).status).toBe(EXIT_USAGE);
    expect((await run('config', 'pull', 'x', '--bogus', ...connection)).status).toBe(EXIT_USAGE);
    expect((await run('config', 'frobnicate')).status).toBe(EXIT_USAGE);
  });
});
