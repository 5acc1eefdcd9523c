import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { createTestDatabaseUrl, dropTestDatabase } from '../helpers/store.js';
import { captureIo } from './helpers.js';

/** `ledgerflow users …` and `ledgerflow credentials …` on the store. */
describe('CLI commands on the store', () => {
  let databaseUrl: string;
  const saved = process.env.DATABASE_URL;
  beforeAll(async () => {
    databaseUrl = await createTestDatabaseUrl({ file: true });
    process.env.DATABASE_URL = databaseUrl;
  });
  afterAll(async () => {
    process.env.DATABASE_URL = saved;
    await dropTestDatabase(databaseUrl);
  });

  it('creates a user and a credential whose secret is printed once, lists and revokes it', async () => {
    const created = captureIo();
    const label = databaseUrl.startsWith('sqlite:') ? databaseUrl : undefined;
    expect(
      await runCli(
        ['users', 'create', '--email', 'ops@example.com', '--role', 'bulk-operator', '--role', 'viewer'],
        created,
      ),
    ).toBe(0);
    expect(created.stdout()).toContain('created user ops@example.com with roles bulk-operator, viewer');
    // Issue "A user's first day", point 6: the store used is named, and a new one is said.
    if (label !== undefined)
      expect(created.stderr()).toBe(`store: ${label} (none was there: a new store is created)`);
    else expect(created.stderr()).toMatch(/^store: postgres/);

    const credential = captureIo();
    expect(
      await runCli(
        ['credentials', 'create', '--owner', 'ops@example.com', '--expires-in-days', '7'],
        credential,
      ),
    ).toBe(0);
    const clientId = /client_id:\s+(\S+)/.exec(credential.stdout())?.[1];
    const secret = /client_secret:\s+(\S+)/.exec(credential.stdout())?.[1];
    expect(clientId).toMatch(/^lfc_/);
    expect(secret).toMatch(/^lfs_/);
    expect(credential.stderr()).toContain('shown this once');

    const listed = captureIo();
    expect(await runCli(['credentials', 'list'], listed)).toBe(0);
    if (label !== undefined) expect(listed.stderr()).toBe(`store: ${label}`);
    expect(listed.stdout()).toContain(`${clientId}\tops@example.com`);
    expect(listed.stdout()).toContain('active');
    expect(listed.stdout()).not.toContain(String(secret));

    expect(await runCli(['credentials', 'revoke', String(clientId)], captureIo())).toBe(0);
    const after = captureIo();
    await runCli(['credentials', 'list'], after);
    expect(after.stdout()).toContain('revoked');
  });

  it('refuses a SQLite store that does not exist for every command but users create, naming it', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'ledgerflow-cli-nostore-'));
    const savedCwd = process.cwd();
    process.env.DATABASE_URL = 'sqlite:./data/ledgerflow.db';
    try {
      process.chdir(folder);
      const expected = `ledgerflow: no store at sqlite:${join(realpathSync(folder), 'data', 'ledgerflow.db')}`;
      for (const argv of [
        ['credentials', 'list'],
        ['credentials', 'revoke', 'lfc_x'],
        ['credentials', 'create', '--owner', 'ops@example.com'],
      ]) {
        const io = captureIo();
        expect(await runCli(argv, io)).toBe(2);
        expect(io.stderr()).toContain(`${expected}: set DATABASE_URL`);
      }
      expect(existsSync(join(folder, 'data'))).toBe(false);
    } finally {
      process.chdir(savedCwd);
      process.env.DATABASE_URL = databaseUrl;
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('exits 1 on a refused request and 2 on bad usage', async () => {
    const duplicate = captureIo();
    expect(
      await runCli(['users', 'create', '--email', 'ops@example.com', '--role', 'viewer'], duplicate),
    ).toBe(1);
    expect(duplicate.stderr()).toContain('exists already');
    expect(await runCli(['credentials', 'create', '--owner', 'ghost@example.com'], captureIo())).toBe(1);
    expect(await runCli(['credentials', 'revoke', 'lfc_missing'], captureIo())).toBe(1);
    expect(await runCli(['users', 'create', '--email', 'x@example.com'], captureIo())).toBe(2);
    expect(await runCli(['users', 'create', '--email', 'x@example.com', '--role', 'root'], captureIo())).toBe(
      1,
    );
    expect(
      await runCli(
        ['credentials', 'create', '--owner', 'ops@example.com', '--expires-in-days', 'soon'],
        captureIo(),
      ),
    ).toBe(2);
    expect(await runCli(['credentials', 'frobnicate'], captureIo())).toBe(2);
    expect(await runCli(['nonsense'], captureIo())).toBe(2);
    expect(await runCli(['users', 'create', '--unknown-flag'], captureIo())).toBe(2);
  });
});
