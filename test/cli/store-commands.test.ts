import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { createServices } from '../../src/composition/services.js';
import { parseEnv } from '../../src/env.js';
import { systemClock } from '../../src/lib/clock.js';
import { openStore } from '../../src/storage/store.js';
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

  it('users set-password sets a password from standard input or asked twice, and ends sign-in sessions', async () => {
    // A lost first-start password is recovered on the store, with no service running.
    const store = openStore(databaseUrl);
    try {
      const services = createServices(store, systemClock, parseEnv({}));
      await services.access.createUser(
        {
          email: 'lost@example.com',
          roles: ['admin'],
          password: 'first password 1',
        },
        { actor: { user: 'test-setup' } },
      );
      const before = await services.signIns.signIn('lost@example.com', 'first password 1', undefined);
      if (!before.ok) throw new Error('the first sign-in failed');

      const piped = captureIo(undefined, 'piped password 2\n');
      expect(await runCli(['users', 'set-password', 'Lost@example.com', '--password-stdin'], piped)).toBe(0);
      expect(piped.stdout()).toBe('set the password of lost@example.com; their sign-in sessions were ended');
      expect(await services.signIns.authenticate(before.sessionId)).toBeUndefined();
      expect((await services.signIns.signIn('lost@example.com', 'first password 1', undefined)).ok).toBe(
        false,
      );
      expect((await services.signIns.signIn('lost@example.com', 'piped password 2', undefined)).ok).toBe(
        true,
      );

      const asked = captureIo(['typed password 3', 'typed password 3']);
      expect(await runCli(['users', 'set-password', 'lost@example.com'], asked)).toBe(0);
      expect(asked.questions).toEqual(['New password for lost@example.com: ', 'The same password again: ']);
      expect((await services.signIns.signIn('lost@example.com', 'typed password 3', undefined)).ok).toBe(
        true,
      );

      const differ = captureIo(['typed password 4', 'typed password 5']);
      expect(await runCli(['users', 'set-password', 'lost@example.com'], differ)).toBe(1);
      expect(differ.stderr()).toContain('the two passwords differ; nothing was changed');
      expect((await services.signIns.signIn('lost@example.com', 'typed password 3', undefined)).ok).toBe(
        true,
      );
    } finally {
      await store.close();
    }
  });

  it('users set-password names an unknown user, a short password and a missing terminal', async () => {
    const unknown = captureIo(undefined, 'long enough password');
    expect(await runCli(['users', 'set-password', 'ghost@example.com', '--password-stdin'], unknown)).toBe(1);
    expect(unknown.stderr()).toContain('ledgerflow: no user with e-mail ghost@example.com');

    const short = captureIo(undefined, 'short\n');
    expect(await runCli(['users', 'set-password', 'ops@example.com', '--password-stdin'], short)).toBe(1);
    expect(short.stderr()).toBe('ledgerflow: password must be 12 to 256 characters long');

    const shortAsked = captureIo(['short']);
    expect(await runCli(['users', 'set-password', 'ops@example.com'], shortAsked)).toBe(1);
    expect(shortAsked.questions).toHaveLength(1);

    const noTerminal = captureIo();
    expect(await runCli(['users', 'set-password', 'ops@example.com'], noTerminal)).toBe(2);
    expect(noTerminal.stderr()).toContain('--password-stdin');
    expect(await runCli(['users', 'set-password'], captureIo())).toBe(2);
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
