import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateTo, migrateToLatest } from '../../src/storage/migrations/index.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { createTestDatabaseUrl, dropTestDatabase } from '../helpers/store.js';

const at = '2026-03-01T10:00:00.000Z';
const later = '2026-03-01T10:30:00.000Z';

/** A sign-in row as migration 0004 made it, under the hash column's old name. */
function oldSignIn(hash: string, email: string) {
  return {
    session_hash: hash,
    user_email: email,
    created_at: at,
    last_seen_at: at,
    expires_at: later,
    ends_at: later,
  };
}

/**
 * Migration 0011 renames the administration interface's sign-ins in place (`admin_sessions` to
 * `admin_sign_ins`, `session_hash` to `sign_in_hash` there and in `admin_one_time_views`): the
 * rows stay, and the foreign keys follow, so deleting a user still deletes its sign-ins and a
 * sign-in its one-time views. Runs on the dialect of TEST_DATABASE_URL.
 */
describe('migration 0011: admin sessions become admin sign-ins', () => {
  let url: string;
  let store: Store;
  let db: Kysely<Record<string, Record<string, unknown>>>;
  beforeAll(async () => {
    url = await createTestDatabaseUrl();
    store = openStore(url);
    await migrateTo(store, '0010-admin-one-time-views');
    db = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    const user = (email: string) => ({
      email,
      display_name: email,
      password_hash: null,
      roles: '["admin"]',
      disabled: 0,
      created_at: at,
    });
    await db
      .insertInto('users')
      .values([user('kept@example.test'), user('gone@example.test')])
      .execute();
    await db
      .insertInto('admin_sessions')
      .values([
        oldSignIn('hash-kept', 'kept@example.test'),
        oldSignIn('hash-signed-out', 'kept@example.test'),
        oldSignIn('hash-gone', 'gone@example.test'),
      ])
      .execute();
    await db
      .insertInto('admin_one_time_views')
      .values([
        { session_hash: 'hash-kept', view_key: 'client-1', sealed: 'sealed-1', expires_at: later },
        { session_hash: 'hash-signed-out', view_key: 'client-2', sealed: 'sealed-2', expires_at: later },
        { session_hash: 'hash-gone', view_key: 'client-3', sealed: 'sealed-3', expires_at: later },
      ])
      .execute();
    await migrateToLatest(store);
  });
  afterAll(async () => {
    await store?.close();
    if (url !== undefined) await dropTestDatabase(url);
  });

  it('keeps every sign-in and one-time view under the new names', async () => {
    const signIns = await db
      .selectFrom('admin_sign_ins')
      .select(['sign_in_hash', 'user_email', 'expires_at'])
      .orderBy('sign_in_hash')
      .execute();
    expect(signIns).toEqual([
      {
        sign_in_hash: 'hash-gone',
        user_email: 'gone@example.test',

        expires_at: later,
      },
      {
        sign_in_hash: 'hash-kept',
        user_email: 'kept@example.test',

        expires_at: later,
      },
      {
        sign_in_hash: 'hash-signed-out',
        user_email: 'kept@example.test',

        expires_at: later,
      },
    ]);
    const views = await db
      .selectFrom('admin_one_time_views')
      .select(['sign_in_hash', 'view_key', 'sealed'])
      .orderBy('view_key')
      .execute();
    expect(views).toEqual([
      { sign_in_hash: 'hash-kept', view_key: 'client-1', sealed: 'sealed-1' },
      { sign_in_hash: 'hash-signed-out', view_key: 'client-2', sealed: 'sealed-2' },
      { sign_in_hash: 'hash-gone', view_key: 'client-3', sealed: 'sealed-3' },
    ]);
  });

  it('still cascades: a deleted sign-in takes its views, a deleted user its sign-ins and their views', async () => {
    await db.deleteFrom('admin_sign_ins').where('sign_in_hash', '=', 'hash-signed-out').execute();
    await db.deleteFrom('users').where('email', '=', 'gone@example.test').execute();
    const signIns = await db.selectFrom('admin_sign_ins').select('sign_in_hash').execute();
    expect(signIns).toEqual([{ sign_in_hash: 'hash-kept' }]);
    const views = await db.selectFrom('admin_one_time_views').select(['sign_in_hash', 'view_key']).execute();
    expect(views).toEqual([{ sign_in_hash: 'hash-kept', view_key: 'client-1' }]);
  });

  it('refuses a one-time view of a sign-in that does not exist', async () => {
    await expect(
      db
        .insertInto('admin_one_time_views')
        .values({ sign_in_hash: 'hash-none', view_key: 'client-4', sealed: 'sealed-4', expires_at: later })
        .execute(),
    ).rejects.toThrow();
  });
});
