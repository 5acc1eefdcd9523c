import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { createTestDatabaseUrl, dropTestDatabase } from '../helpers/store.js';
import { captureIo } from './helpers.js';

/** Runs `ledgerflow audit …` and returns its exit status with what it printed. */
async function audit(...args: string[]): Promise<{ status: number; out: string; err: string }> {
  const io = captureIo();
  const status = await runCli(['audit', ...args], io);
  return { status, out: io.stdout(), err: io.stderr() };
}

/** An export's lines with one of them changed by `change`. */
function edited(lines: string[], change: (lines: string[]) => string[]): string {
  return `${change([...lines]).join('\n')}\n`;
}

/**
 * `ledgerflow audit verify` against the store and against an exported file, and `audit export`:
 * every kind of tampering is named by its first bad entry. Runs on the dialect of
 * TEST_DATABASE_URL.
 */
describe('ledgerflow audit', () => {
  let databaseUrl: string;
  let folder: string;
  let store: Store;
  let lines: string[];
  const saved = process.env.DATABASE_URL;

  beforeAll(async () => {
    databaseUrl = await createTestDatabaseUrl({ file: true });
    process.env.DATABASE_URL = databaseUrl;
    folder = mkdtempSync(join(tmpdir(), 'ledgerflow-audit-'));
    // Changes made by the CLI are audited too, naming the operating-system user.
    expect(
      await runCli(['users', 'create', '--email', 'ops@example.com', '--role', 'viewer'], captureIo()),
    ).toBe(0);
    expect(await runCli(['credentials', 'create', '--owner', 'ops@example.com'], captureIo())).toBe(0);
    expect(
      await runCli(['users', 'create', '--email', 'two@example.com', '--role', 'admin'], captureIo()),
    ).toBe(0);
    expect(
      await runCli(['users', 'create', '--email', 'three@example.com', '--role', 'admin'], captureIo()),
    ).toBe(0);
    store = openStore(databaseUrl);
  });
  afterAll(async () => {
    await store.close();
    process.env.DATABASE_URL = saved;
    rmSync(folder, { recursive: true, force: true });
    await dropTestDatabase(databaseUrl);
  });

  it('exports the trail as JSON Lines and verifies the store and the file', async () => {
    const file = join(folder, 'audit.jsonl');
    const exported = await audit('export', '--output', file);
    expect(exported.status).toBe(0);
    expect(exported.err).toContain('exported 4 audit entries');
    lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines.map((line) => (JSON.parse(line) as { action: string }).action)).toEqual([
      'users.create',
      'credentials.create',
      'users.create',
      'users.create',
    ]);
    expect((JSON.parse(lines[0] ?? '{}') as { actor: string }).actor).toMatch(/^cli:/);
    expect(await audit('verify')).toMatchObject({
      status: 0,
      out: expect.stringContaining('audit chain ok in the store: 4 entries'),
    });
    expect((await audit('verify', '--file', file)).status).toBe(0);
    const tail = await audit('export', '--after-seq', '2');
    expect(tail.out.trim().split('\n')).toHaveLength(2);
    const tailFile = join(folder, 'tail.jsonl');
    writeFileSync(tailFile, tail.out);
    expect((await audit('verify', '--file', tailFile)).status).toBe(0);
  });

  it.each([
    [
      'changed',
      (l: string[]) =>
        l.map((line, i) => (i === 1 ? line.replace('ops@example.com', 'eve@example.com') : line)),
      'entry 2 does not match its hash',
    ],
    ['deleted', (l: string[]) => l.filter((_, i) => i !== 1), 'entry 2 is missing'],
    ['reordered', (l: string[]) => [l[0], l[2], l[1], l[3]].map(String), 'entry 2 is out of its place'],
    ['inserted', (l: string[]) => [...l.slice(0, 3), String(l[1]), String(l[3])], 'entry 2 appears again'],
    ['malformed', (l: string[]) => l.map((line, i) => (i === 2 ? line.slice(0, 20) : line)), 'line 3'],
  ])('names the first bad entry of a %s export file', async (_kind, change, named) => {
    const file = join(folder, `tampered-${_kind}.jsonl`);
    writeFileSync(file, edited(lines, change));
    const verified = await audit('verify', '--file', file);
    expect(verified.status).toBe(1);
    expect(verified.err).toContain(named);
  });

  it('names the first bad entry when the store was tampered with', async () => {
    await store.db.updateTable('audit_log').set({ actor: 'eve@example.com' }).where('seq', '=', 3).execute();
    const verified = await audit('verify');
    expect(verified.status).toBe(1);
    expect(verified.err).toContain('entry 3 does not match its hash');
    expect(verified.err).toContain('[changed at 3]');
    await store.db.deleteFrom('audit_log').where('seq', '=', 3).execute();
    expect((await audit('verify')).err).toContain('[deleted at 3]');
  });

  it('refuses bad usage', async () => {
    expect((await audit('export', '--after-seq', 'x')).status).toBe(2);
    expect((await audit('nothing')).status).toBe(2);
    expect((await audit('verify', '--file', join(folder, 'missing.jsonl'))).status).toBe(2);
  });
});
