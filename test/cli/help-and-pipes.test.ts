import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_USAGE } from '../../src/cli/output.js';
import { runCli } from '../../src/cli/run.js';
import { captureIo } from './helpers.js';

/** The built command, as `npx ledgerflow` runs it (run `npx tsc -p tsconfig.build.json` first). */
const MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** Issue "A user's first day", point 6: --help everywhere, and a closed pipe ends quietly. */
describe('ledgerflow --help', () => {
  const commands: [string[], string][] = [
    [['users'], 'usage: ledgerflow users create'],
    [['users', 'create'], 'usage: ledgerflow users create'],
    [['credentials', 'list'], 'usage: ledgerflow credentials create'],
    [['config'], 'usage: ledgerflow config pull'],
    [['config', 'push'], 'usage: ledgerflow config pull'],
    [['config', 'wipe'], 'usage: ledgerflow config pull'],
    [['ingest'], 'usage: ledgerflow ingest FILE'],
    [['ingestions', 'show'], 'usage: ledgerflow ingestions show'],
    [['journals', 'export'], 'usage: ledgerflow journals export'],
    [['balances'], 'usage: ledgerflow balances'],
    [['processing-errors'], 'usage: ledgerflow processing-errors'],
  ];

  it('prints the usage of every command and subcommand with --help or -h, exit 0', async () => {
    for (const [argv, usage] of commands) {
      for (const flag of ['--help', '-h']) {
        const io = captureIo();
        expect(await runCli([...argv, flag], io), argv.join(' ')).toBe(EXIT_OK);
        expect(io.stdout().startsWith(usage), `${argv.join(' ')} ${flag}`).toBe(true);
        expect(io.stderr()).toBe('');
      }
    }
  });

  it('prints it even after other options, and for help COMMAND', async () => {
    const io = captureIo();
    expect(await runCli(['ingest', 'data.csv', '--namespace', 'x', '--help'], io)).toBe(EXIT_OK);
    expect(io.stdout()).toContain('--session ID');
    const help = captureIo();
    expect(await runCli(['help', 'balances'], help)).toBe(EXIT_OK);
    expect(help.stdout()).toMatch(/^usage: ledgerflow balances/);
    const all = captureIo();
    expect(await runCli(['--help'], all)).toBe(EXIT_OK);
    for (const name of ['ingestions show', 'balances', 'processing-errors', '--from YYYY-MM-DD', '--dry-run'])
      expect(all.stdout()).toContain(name);
    expect(await runCli([], captureIo())).toBe(EXIT_USAGE);
    // The help says the date rule the command applies: --to is excluded, as the API's to.
    const journals = captureIo();
    expect(await runCli(['journals', 'export', '--help'], journals)).toBe(EXIT_OK);
    expect(journals.stdout()).toContain('first core date not exported (excluded)');
  });
});

/**
 * A loader hook that writes every module the process resolves, other than Node's own, to
 * standard error as `LOADED URL`: what a command line made the CLI import.
 */
const LOGGING_HOOKS = `export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (!resolved.url.startsWith('node:')) process.stderr.write('LOADED ' + resolved.url + '\\n');
  return resolved;
}`;

/** The modules the built command imports for `argv`, as paths from the repository's root. */
function modulesLoadedBy(argv: string[]): string[] {
  const hooks = `data:text/javascript,${encodeURIComponent(LOGGING_HOOKS)}`;
  const register = `import { register } from 'node:module'; register(${JSON.stringify(hooks)});`;
  const child = spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(register)}`, MAIN, ...argv],
    { encoding: 'utf8', env: { ...process.env, LEDGERFLOW_URL: '', DATABASE_URL: '' } },
  );
  const root = new URL('../../', import.meta.url).href;
  return child.stderr
    .split('\n')
    .filter((line) => line.startsWith('LOADED '))
    .map((line) => line.slice('LOADED '.length).replace(root, ''));
}

/**
 * First-day walk-through: `npx ledgerflow --help` took over a second, as the entry imported every
 * command's module (the store, its migrations, every service, Fastify's schemas) before reading
 * its arguments. Each command's module is now imported when it runs.
 */
describe('what --help and usage errors import', () => {
  it('--help imports the usage texts only; a usage error of a command no store and no service', () => {
    expect(modulesLoadedBy(['--help']).sort()).toEqual([
      'dist/cli/main.js',
      'dist/cli/output.js',
      'dist/cli/run.js',
      'dist/cli/usage.js',
    ]);
    expect(modulesLoadedBy(['credentials', '--help'])).not.toContain('dist/cli/store-commands.js');
    const heavy =
      /^(dist\/(storage|composition|http\/app|env)|node_modules\/(kysely|better-sqlite3|pg|isolated-vm|fastify))/;
    for (const argv of [
      ['credentials', 'create'],
      ['users', 'set-password'],
      ['webhooks', 'create'],
      ['bogus'],
    ]) {
      const loaded = modulesLoadedBy(argv);
      expect(loaded, argv.join(' ')).toContain('dist/cli/run.js');
      expect(
        loaded.filter((path) => heavy.test(path)),
        argv.join(' '),
      ).toEqual([]);
    }
  });
});

describe('ledgerflow with its standard output closed early', () => {
  it('config push | head -1 ends quietly with exit 0 when the reader is gone', async () => {
    // A fake service whose upload waits until the reader of the command's output has gone.
    let openGate = () => {};
    const gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    const server = createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://x');
      request.resume();
      request.on('end', async () => {
        const send = (body: unknown) => {
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(JSON.stringify(body));
        };
        if (url.pathname === '/auth/token')
          return send({ access_token: 'a', token_type: 'Bearer', expires_in: 300 });
        const counts = { ingestions: 1, records: 2, journals: 3, journalLines: 6, processingErrors: 0 };
        const sections = { entities: 1, nodes: 2, accounts: 3 };
        if (url.searchParams.get('dryRun') === 'true')
          return send({ version: 'v1', sections, wouldDelete: counts });
        await gate;
        return send({ version: 'v1', sections, deleted: counts });
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const dir = mkdtempSync(join(tmpdir(), 'ledgerflow-cli-pipe-'));
    try {
      const file = join(dir, 'config.json');
      writeFileSync(file, JSON.stringify({ version: 'v1' }));
      const { port } = server.address() as AddressInfo;
      const child = spawn(
        process.execPath,
        [
          MAIN,
          'config',
          'push',
          file,
          '--yes',
          '--url',
          `http://127.0.0.1:${port}`,
          '--client-id',
          'c',
          '--client-secret',
          's',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      child.stderr.on('data', (piece) => {
        stderr += String(piece);
      });
      const exited = once(child, 'exit');
      // Like `head -1`: read the first line, then close the pipe, then let the upload answer.
      await once(child.stdout, 'data');
      child.stdout.destroy();
      openGate();
      const [code] = await exited;
      expect(stderr).toBe('');
      expect(code).toBe(EXIT_OK);
    } finally {
      openGate();
      server.closeAllConnections();
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
