import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AuditAction, auditHashOf } from '../../src/modules/audit/entry.js';
import { AuditTrail } from '../../src/modules/audit/trail.js';
import { appendAudit, createAuditStore } from '../../src/storage/audit-trail.js';
import { migrateTo, migrateToLatest } from '../../src/storage/migrations/index.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { createTestDatabaseUrl, createTestStore, dropTestDatabase, TEST_DIALECT } from '../helpers/store.js';

const AT = '2026-11-26T10:00:00.000Z';

/** Appends `count` entries, each in its own transaction, as the audited stores do. */
async function appendMany(store: Store, count: number, user = 'tester@example.test'): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    await store.db.transaction().execute((trx) =>
      appendAudit(trx, store.adapter, {
        at: AT,
        action: 'users.update' satisfies AuditAction,
        actor: { user, clientId: null },
        before: { roles: ['viewer'], n: i },
        after: { roles: ['admin'], n: i },
      }),
    );
  }
}

function trailOf(store: Store): AuditTrail {
  return new AuditTrail(createAuditStore(store.db));
}

/**
 * The audit chain on the store: the one writer, the verification of every kind of tampering
 * (naming the first bad entry), appends from two instances at once, and the migration that
 * chains the entries written before it. Runs on the dialect of TEST_DATABASE_URL.
 */
describe('the audit chain in the store', () => {
  let store: Store;
  let url: string;
  let dispose: () => Promise<void>;
  beforeEach(async () => {
    ({ store, url, dispose } = await createTestStore());
  });
  afterEach(async () => {
    await dispose();
  });

  it('chains every entry to the one before and verifies from the first to the head', async () => {
    await appendMany(store, 5);
    const trail = trailOf(store);
    const report = await trail.verify();
    expect(report).toMatchObject({ ok: true, entries: 5, lastSeq: 5 });
    const entries = [];
    for await (const entry of trail.entries()) entries.push(entry);
    expect(entries.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(entries[0]?.prevHash).toBe('0'.repeat(64));
    for (let i = 1; i < entries.length; i += 1) expect(entries[i]?.prevHash).toBe(entries[i - 1]?.hash);
    expect(await trail.head()).toEqual({ seq: 5, hash: entries[4]?.hash });
    const after = [];
    for await (const entry of trail.entries(3)) after.push(entry.seq);
    expect(after).toEqual([4, 5]);
  });

  it('detects a changed entry and names it', async () => {
    await appendMany(store, 5);
    await store.db
      .updateTable('audit_log')
      .set({ actor: 'mallory@example.test' })
      .where('seq', '=', 3)
      .execute();
    expect((await trailOf(store).verify()).fault).toMatchObject({ problem: 'changed', seq: 3 });
  });

  it('detects a changed before-or-after summary', async () => {
    await appendMany(store, 3);
    await store.db
      .updateTable('audit_log')
      .set({ summary_after: JSON.stringify({ roles: ['viewer'], n: 1 }) })
      .where('seq', '=', 2)
      .execute();
    expect((await trailOf(store).verify()).fault).toMatchObject({ problem: 'changed', seq: 2 });
  });

  it('detects a deleted entry in the middle and at the end', async () => {
    await appendMany(store, 5);
    await store.db.deleteFrom('audit_log').where('seq', '=', 2).execute();
    expect((await trailOf(store).verify()).fault).toMatchObject({ problem: 'deleted', seq: 2 });
    const { store: other, dispose: disposeOther } = await createTestStore();
    try {
      await appendMany(other, 4);
      await other.db.deleteFrom('audit_log').where('seq', '=', 4).execute();
      expect((await trailOf(other).verify()).fault).toMatchObject({ problem: 'deleted', seq: 4 });
    } finally {
      await disposeOther();
    }
  });

  it('detects reordered entries', async () => {
    await appendMany(store, 5);
    // Swap the positions of entries 2 and 3: their rows keep their ids, so the walk meets 3 first.
    await store.db.updateTable('audit_log').set({ seq: 1000 }).where('seq', '=', 2).execute();
    await store.db.updateTable('audit_log').set({ seq: 2 }).where('seq', '=', 3).execute();
    await store.db.updateTable('audit_log').set({ seq: 3 }).where('seq', '=', 1000).execute();
    expect((await trailOf(store).verify()).fault).toMatchObject({ problem: 'reordered', seq: 2 });
  });

  it('detects an inserted entry, even one whose hash and link were forged', async () => {
    await appendMany(store, 3);
    const last = await store.db
      .selectFrom('audit_log')
      .selectAll()
      .where('seq', '=', 3)
      .executeTakeFirstOrThrow();
    const { id: _id, ...copy } = last;
    await store.db
      .insertInto('audit_log')
      .values({ ...copy, seq: 4, prev_hash: last.hash, actor: 'mallory@example.test' })
      .execute();
    expect((await trailOf(store).verify()).fault).toMatchObject({ problem: 'inserted', seq: 4 });
  });

  it('detects the last entry replaced by a forged one with a recomputed hash, by the chain head', async () => {
    await appendMany(store, 3);
    const trail = trailOf(store);
    const entries = [];
    for await (const entry of trail.entries()) entries.push(entry);
    const forged = { ...entries[2], actor: 'mallory@example.test' } as (typeof entries)[number];
    await store.db
      .updateTable('audit_log')
      .set({ actor: forged.actor, hash: auditHashOf(forged) })
      .where('seq', '=', 3)
      .execute();
    expect((await trail.verify()).fault).toMatchObject({ problem: 'changed', seq: 3 });
  });

  it('records the configuration revision stored when the entry is appended, 0 before any', async () => {
    await appendMany(store, 1);
    await store.db
      .insertInto('configuration')
      .values({ id: 1, revision: 7, version: '1', document: '{}', updated_at: AT, updated_by: null })
      .execute();
    await appendMany(store, 1);
    const entries = [];
    for await (const entry of trailOf(store).entries()) entries.push(entry);
    expect(entries.map((e) => [e.seq, e.revision])).toEqual([
      [1, 0],
      [2, 7],
    ]);
    expect((await trailOf(store).verify()).ok).toBe(true);
  });

  // SQLite runs one write transaction at a time: no entry can wait for the head there.
  it.skipIf(TEST_DIALECT !== 'postgres')(
    'records the revision a configuration change stored while the entry waited for the head',
    async () => {
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let appended = () => {};
      const changeAppended = new Promise<void>((resolve) => {
        appended = resolve;
      });
      const change = store.db.transaction().execute(async (trx) => {
        await trx
          .insertInto('configuration')
          .values({ id: 1, revision: 5, version: '1', document: '{}', updated_at: AT, updated_by: null })
          .execute();
        await appendAudit(trx, store.adapter, {
          at: AT,
          action: 'configuration.upload',
          actor: { user: 'admin@example.test' },
          configuration: { version: '1', revision: 5, sections: {}, deleted: null },
        });
        appended();
        await held;
      });
      await changeAppended;
      const waiting = appendMany(store, 1);
      // The second append waits for the head until the change commits.
      for (;;) {
        const blocked = await sql<{
          n: number;
        }>`select count(*)::int as n from pg_locks where not granted`.execute(store.db);
        if ((blocked.rows[0]?.n ?? 0) > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      release();
      await Promise.all([change, waiting]);
      const entries = [];
      for await (const entry of trailOf(store).entries()) entries.push(entry);
      expect(entries.map((e) => [e.seq, e.action, e.revision])).toEqual([
        [1, 'configuration.upload', 5],
        [2, 'users.update', 5],
      ]);
    },
  );

  it('refuses an entry whose summary or details hold a secret', async () => {
    await expect(
      store.db.transaction().execute((trx) =>
        appendAudit(trx, store.adapter, {
          at: AT,
          action: 'users.set-password',
          actor: { user: 'a@example.test' },
          details: { password: 'hunter2hunter2' },
        }),
      ),
    ).rejects.toThrow(/secret/);
    expect(await trailOf(store).head()).toEqual({ seq: 0, hash: '0'.repeat(64) });
  });

  it('keeps one chain when two instances append at once', async () => {
    // SQLite serves one process: there the appends interleave on one store.
    const other = TEST_DIALECT === 'postgres' ? openStore(url) : store;
    try {
      await Promise.all([
        appendMany(store, 25, 'one@example.test'),
        appendMany(other, 25, 'two@example.test'),
        appendMany(store, 25, 'three@example.test'),
        appendMany(other, 25, 'four@example.test'),
      ]);
      const report = await trailOf(store).verify();
      expect(report).toMatchObject({ ok: true, entries: 100, lastSeq: 100 });
      const ids = await store.db.selectFrom('audit_log').select(['id', 'seq']).orderBy('id').execute();
      expect(ids.map((row) => Number(row.seq))).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    } finally {
      if (other !== store) await other.close();
    }
  });
});

describe('migration 0027: the entries written before join the chain', () => {
  it('gives them positions in the order written and a chain that verifies', async () => {
    const url = await createTestDatabaseUrl();
    const store = openStore(url);
    try {
      await migrateTo(store, '0024-error-state-counts');
      const old = (action: string, details: string | null) => ({
        at: AT,
        actor: 'admin@example.test',
        action,
        version: null,
        revision: 0,
        sections: '{}',
        deleted: null,
        details,
      });
      for (const row of [
        old('configuration.upload', null),
        old('processing.reprocess', JSON.stringify({ run: 1, queued: 2 })),
        old('journals.reverse', JSON.stringify({ reversalId: 'r', journals: 1 })),
      ])
        await store.db
          .insertInto('audit_log')
          .values(row as never)
          .execute();
      await migrateToLatest(store);
      const trail = trailOf(store);
      expect(await trail.verify()).toMatchObject({ ok: true, entries: 3, lastSeq: 3 });
      await appendMany(store, 2);
      expect(await trail.verify()).toMatchObject({ ok: true, entries: 5, lastSeq: 5 });
      const first = await trail.list({ page: 0 }, 10);
      expect(first.rows.map((e) => e.action)).toEqual([
        'users.update',
        'users.update',
        'journals.reverse',
        'processing.reprocess',
        'configuration.upload',
      ]);
    } finally {
      await store.close();
      await dropTestDatabase(url);
    }
  });
});
