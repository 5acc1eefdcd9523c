import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/storage/errors.js';
import { migrateToLatest } from '../../src/storage/migrations/index.js';
import { ensureDatabase } from '../../src/storage/postgres/ensure-database.js';
import { openStore } from '../../src/storage/store.js';
import { TEST_DATABASE_URL, TEST_DIALECT } from '../helpers/store.js';

/** Runs one statement on the test server's own database. */
async function admin(sql: string, values: unknown[] = []): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return (await client.query(sql, values)).rows;
  } finally {
    await client.end();
  }
}

function urlOf(database: string, user?: string): string {
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${encodeURIComponent(database)}`;
  if (user !== undefined) url.username = user;
  return url.toString();
}

/** The error `ensureDatabase` fails with; fails the test when it succeeds. */
async function failureOf(databaseUrl: string): Promise<Error> {
  try {
    await ensureDatabase(databaseUrl);
  } catch (error) {
    expect(error).toBeInstanceOf(StoreUnavailableError);
    return error as Error;
  }
  throw new Error(`ensureDatabase(${databaseUrl}) succeeded`);
}

describe('ensureDatabase', () => {
  it('needs nothing for SQLite', async () => {
    expect(await ensureDatabase('sqlite::memory:')).toEqual({ created: false, database: ':memory:' });
  });

  it('explains an unreachable PostgreSQL server in one line', async () => {
    const error = await failureOf('postgres://postgres:hunter2@127.0.0.1:1/ledgerflow');
    expect(error.message).toMatch(
      /^cannot reach PostgreSQL at 127\.0\.0\.1:1 \(ECONNREFUSED\); is the server running/,
    );
    expect(error.message).not.toContain('\n');
    expect(error.message).not.toContain('hunter2');
  });

  describe.runIf(TEST_DIALECT === 'postgres')('on PostgreSQL', () => {
    it('creates a missing database under its exact (quoted) name once, comparing text byte by byte, and the store migrates into it', async () => {
      const name = `lf_Test-${randomBytes(6).toString('hex')}`;
      const url = urlOf(name);
      try {
        expect(await ensureDatabase(url)).toEqual({ created: true, database: name });
        expect(await ensureDatabase(url)).toEqual({ created: false, database: name });
        const [created] = await admin('select datcollate from pg_database where datname = $1', [name]);
        expect(created).toEqual({ datcollate: 'C' });
        const store = openStore(url);
        try {
          await migrateToLatest(store);
        } finally {
          await store.close();
        }
      } finally {
        await admin(`drop database if exists "${name}" with (force)`);
      }
    });

    it('says in one line what to do when the user may not create the missing database', async () => {
      const role = `lf_nocreate_${randomBytes(6).toString('hex')}`;
      const name = `lf_test_${randomBytes(6).toString('hex')}`;
      await admin(`create role ${role} login nocreatedb`);
      try {
        const error = await failureOf(urlOf(name, role));
        expect(error.message).toContain(`database "${name}" does not exist`);
        expect(error.message).toContain(
          `${role} may not create it; create it (createdb --template=template0 --lc-collate=C ${name}) or grant`,
        );
        expect(error.message).not.toContain('\n');
      } finally {
        await admin(`drop role if exists ${role}`);
      }
    });
  });
});
