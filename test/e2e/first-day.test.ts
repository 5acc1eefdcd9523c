import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type ServerProcess, startServer } from '../helpers/server.js';
import { createTestDatabaseUrl, dropTestDatabase } from '../helpers/store.js';

/** The built command, as `npx ledgerflow` runs it (`npm test` builds first). */
const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const EXAMPLES = fileURLToPath(new URL('../../docs/examples/', import.meta.url));
const hasHledger = spawnSync('hledger', ['--version']).status === 0;

/**
 * Issue "A user's first day": the walk of docs/first-day.md, step by step, with the built
 * service and the built command, on the example files the guide uses. A failure here means the
 * guide no longer works for a new user.
 */
describe('the first day of docs/first-day.md', () => {
  let databaseUrl: string;
  let server: ServerProcess;
  let work: string;
  let env: Record<string, string>;

  /** Runs `ledgerflow ARGS` as a user would; returns its exit status and outputs. */
  function ledgerflow(...args: string[]): { status: number | null; stdout: string; stderr: string } {
    const result = spawnSync(process.execPath, [CLI, ...args], {
      env: { ...process.env, ...env },
      cwd: work,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'ledgerflow-first-day-'));
    databaseUrl = await createTestDatabaseUrl({ file: true });
    server = await startServer({ DATABASE_URL: databaseUrl, BUSINESS_DATE: '2026-11-30' });
    env = { DATABASE_URL: databaseUrl, LEDGERFLOW_URL: server.url };
  });

  afterAll(async () => {
    await server.stop();
    await dropTestDatabase(databaseUrl);
    rmSync(work, { recursive: true, force: true });
  });

  it('goes from a fresh start to books checked by hledger', async () => {
    // 1. The start line says where the service listens and how to get a first token.
    expect(server.output()).toMatch(/Ledgerflow listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(server.output()).toContain('credentials create --owner admin@localhost');

    // 2. A credential for the first administrator, then a token.
    const created = ledgerflow('credentials', 'create', '--owner', 'admin@localhost');
    expect(created.status, created.stderr).toBe(0);
    const clientId = /client_id:\s+(\S+)/.exec(created.stdout)?.[1] ?? '';
    const clientSecret = /client_secret:\s+(\S+)/.exec(created.stdout)?.[1] ?? '';
    expect(clientId).toMatch(/^lfc_/);
    env = { ...env, LEDGERFLOW_CLIENT_ID: clientId, LEDGERFLOW_CLIENT_SECRET: clientSecret };
    const token = await fetch(`${server.url}/auth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: clientSecret,
      }),
    });
    expect(token.status).toBe(200);

    // 3. The configuration: a dry run, then the upload.
    const configuration = join(EXAMPLES, 'configuration.json');
    const dryRun = ledgerflow('config', 'push', configuration, '--dry-run');
    expect(dryRun.status, dryRun.stderr).toBe(0);
    expect(dryRun.stdout + dryRun.stderr).toMatch(/would delete/i);
    const pushed = ledgerflow('config', 'push', configuration);
    expect(pushed.status, pushed.stderr).toBe(0);

    // 4. A file with three bad rows: refused whole, located by line, with the way to finish it.
    const events = join(EXAMPLES, 'business-events.ndjson');
    const first = ledgerflow('ingest', events, '--namespace', 'ledger', '--entity', 'businessEvent');
    expect(first.status).toBe(1);
    const report = first.stdout + first.stderr;
    for (const line of ['line 7', 'line 19', 'line 33']) expect(report).toContain(line);
    expect(report).toContain('--partial');
    const ingestionId = /(in_[0-9a-f]{32})/.exec(report)?.[1] ?? '';
    expect(ingestionId).not.toBe('');

    // ... the valid rows kept, the session left open for the corrections ...
    const partial = ledgerflow('ingest', events, '--partial', '--session', ingestionId, '--keep-open');
    expect(partial.status).toBe(1);
    expect(partial.stdout + partial.stderr).toContain('line 33');
    // ... and the corrected rows complete it.
    const corrections = join(EXAMPLES, 'business-events-corrections.ndjson');
    const completed = ledgerflow('ingest', corrections, '--session', ingestionId);
    expect(completed.status, completed.stdout + completed.stderr).toBe(0);

    await eventually(
      async () => {
        const shown = ledgerflow('ingestions', 'show', ingestionId);
        return /processing\s+completed/.test(shown.stdout) ? true : undefined;
      },
      30_000,
      250,
    );
    const shown = ledgerflow('ingestions', 'show', ingestionId);
    // Every row of the file is stored once; the session keeps the record of the refused tries.
    expect(shown.stdout).toMatch(/successRows\s+40/);
    expect(shown.stdout).toMatch(/processing\s+completed_with_errors/);

    // 5. Journals and balances; nothing failed processing.
    const errors = ledgerflow('processing-errors', '--ingestion', ingestionId);
    expect(errors.status).toBe(0);
    expect(errors.stdout.trim()).toBe('');
    expect(errors.stderr).toContain('0 processing errors');
    const balances = ledgerflow('balances', '--accounting-config', 'IFRS');
    expect(balances.status, balances.stderr).toBe(0);
    expect(balances.stdout).toContain('IFRS');

    // 6. The books, exported and checked by hledger.
    const books = join(work, 'books.ledger');
    const exported = ledgerflow('journals', 'export', '--format', 'ledger', '--output', books);
    expect(exported.status, exported.stderr).toBe(0);
    expect(readFileSync(books, 'utf8')).toContain('IFRS:AMS:LF_NL:1300');
    if (hasHledger) {
      // Every transaction balances (hledger refuses the file otherwise), and accounting
      // configurations and nodes stay apart in a plain balance report.
      const balance = execFileSync('hledger', ['-f', books, 'balance', '--cleared'], { encoding: 'utf8' });
      expect(balance).toMatch(/109512\.50 EUR\s+IFRS:AMS:LF_NL:1300/);
      expect(balance).toMatch(/LOCAL_GAAP:AMS:LF_NL:1300/);
      expect(balance).toMatch(/IFRS:NYC:LF_US:/);
    }

    // 7. A posted event corrected: rolled back, then posted again with the right amount.
    const corrected = ledgerflow(
      'correct',
      '--rollback',
      join(EXAMPLES, 'correction-rollback.ndjson'),
      '--post',
      join(EXAMPLES, 'correction-post.ndjson'),
    );
    expect(corrected.status, corrected.stdout + corrected.stderr).toBe(0);
    expect(corrected.stdout).toContain('rollback: 1 business events rolled back');
    expect(corrected.stdout).toContain('post: 1 business events posted');
    const after = ledgerflow('balances', '--accounting-config', 'IFRS');
    expect(after.stdout).toMatch(/1300\s+EUR\s+109612\.50/);
  });
});
