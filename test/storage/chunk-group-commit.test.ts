import { type Kysely, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChunkWrite } from '../../src/modules/ingestion/store.js';
import { createAuthStore } from '../../src/storage/auth-store.js';
import { createIngestionStore } from '../../src/storage/ingestion-store.js';
import type { Database } from '../../src/storage/schema.js';
import { SqliteGroupCommit } from '../../src/storage/sqlite/group-commit.js';
import { SqliteWriteTurn } from '../../src/storage/sqlite/write-turn.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { chunkWriteOf, createTestStore, insertOpenSession, TEST_DIALECT } from '../helpers/store.js';

const AT = '2026-11-26T12:00:00.000Z';

/** A chunk of `records` business events for `ingestionId`, with an idempotency key when given. */
function chunkWrite(ingestionId: string, records: number, idempotencyKey: string | null = null): ChunkWrite {
  return {
    ...chunkWriteOf(ingestionId, records, AT),
    idempotencyKey,
    bodySha256: idempotencyKey === null ? null : 'a'.repeat(64),
  };
}

/** Chunks sent at once: on SQLite they are written in groups (one commit), on PostgreSQL side by side. */
describe('chunks written at once', () => {
  let store: Store;
  let dispose: () => Promise<void>;
  beforeEach(async () => {
    ({ store, dispose } = await createTestStore());
    await insertOpenSession(store, 'in_a', 'ledger', 'businessEvent');
    await insertOpenSession(store, 'in_b', 'ledger', 'businessEvent');
  });
  afterEach(async () => dispose());

  it('stores each one once, with its own sequence number, whatever the others of its group do', async () => {
    const ingestion = createIngestionStore(store);
    const results = await Promise.all([
      ingestion.commitChunk(chunkWrite('in_a', 3, 'k1')),
      ingestion.commitChunk(chunkWrite('in_a', 2)),
      ingestion.commitChunk(chunkWrite('in_a', 3, 'k1')),
      ingestion.commitChunk(chunkWrite('in_gone', 5)),
      ingestion.commitChunk({ ...chunkWrite('in_b', 6), revision: 7 }),
      ingestion.commitChunk(chunkWrite('in_b', 1)),
    ]);
    expect(results.slice(3).map((r) => r.kind)).toEqual(['gone', 'stale', 'stored']);
    // Of the two chunks with one idempotency key, whichever is written first is stored and the
    // other answers as its replay (on PostgreSQL they race).
    const repeated = [results[0], results[2]];
    const stored = repeated.find((r) => r?.kind === 'stored');
    const replay = repeated.find((r) => r?.kind === 'replay');
    const second = results[1];
    if (stored?.kind !== 'stored' || replay?.kind !== 'replay' || second?.kind !== 'stored')
      throw new Error(`not stored once: ${results.map((r) => r.kind).join(', ')}`);
    expect(stored.outcome.chunkSeq).not.toBe(second.outcome.chunkSeq);
    expect(replay.earlier.outcome.chunkSeq).toBe(stored.outcome.chunkSeq);

    const records = await store.db
      .selectFrom('records')
      .select(['ingestion_id', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('ingestion_id')
      .orderBy('ingestion_id')
      .execute();
    expect(records.map((r) => [r.ingestion_id, Number(r.n)])).toEqual([
      ['in_a', 5],
      ['in_b', 1],
    ]);
    const sessions = await store.db
      .selectFrom('ingestions')
      .select(['ingestion_id', 'chunks', 'success_rows', 'chunk_seq_next'])
      .orderBy('ingestion_id')
      .execute();
    expect(sessions.map((s) => [s.ingestion_id, Number(s.chunks), Number(s.success_rows)])).toEqual([
      ['in_a', 2, 5],
      ['in_b', 1, 1],
    ]);
  });
});

/**
 * The group commit itself, on SQLite: writes that ask while a group runs share the next one's
 * transaction, a failing write is rolled back alone, and no write is answered before its commit.
 */
describe.runIf(TEST_DIALECT === 'sqlite')('SQLite group commit', () => {
  let store: Store;
  let url: string;
  let dispose: () => Promise<void>;
  beforeEach(async () => {
    ({ store, url, dispose } = await createTestStore({ file: true }));
    await sql`create table parents (id integer primary key)`.execute(store.db);
    await sql`create table notes (
      text text not null unique,
      parent integer references parents (id) deferrable initially deferred
    )`.execute(store.db);
  });
  afterEach(async () => dispose());

  /** The shared memory of the store's turn to write, where the writes waiting for a group count. */
  function turnOf(opened: Store): SharedArrayBuffer {
    if (opened.sqliteWriteTurn === undefined) throw new Error('a SQLite store has a turn to write');
    return opened.sqliteWriteTurn;
  }
  const note = (text: string, parent: number | null = null) =>
    sql`insert into notes (text, parent) values (${text}, ${parent})`;
  /**
   * Starts a group whose one write stores `text`, then waits until its body is held inside the
   * group's transaction: the writes that ask meanwhile make the next group. `open` lets it end.
   */
  async function heldGroup(group: SqliteGroupCommit, text: string) {
    let open!: () => void;
    let reached!: () => void;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    const wasReached = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const write = group.write(1, async (trx) => {
      await note(text).execute(trx);
      reached();
      await opened;
    });
    await wasReached;
    return { open, write };
  }
  async function notes(from: Kysely<Database> = store.db): Promise<string[]> {
    const rows = await sql<{ text: string }>`select text from notes order by text`.execute(from);
    return rows.rows.map((row) => row.text);
  }

  it('writes those that ask meanwhile in one transaction, answered only once it committed', async () => {
    const group = new SqliteGroupCommit(store.db, turnOf(store));
    const other = openStore(url);
    try {
      const first = await heldGroup(group, 'first');
      const answered: string[] = [];
      const second = group
        .write(1, async (trx) => note('second').execute(trx))
        .then(() => answered.push('second'));
      const third = group
        .write(1, async (trx) => {
          // The second write is in this transaction, not yet committed: another connection does
          // not see it.
          expect(await notes(trx)).toEqual(['first', 'second']);
          expect(await notes(other.db)).toEqual(['first']);
          expect(answered).toEqual([]);
          await note('third').execute(trx);
        })
        .then(() => answered.push('third'));
      // Both wait for the next group, and count as writers with priority waiting for the turn.
      expect(SqliteWriteTurn.priorityWriters(turnOf(store))).toBe(2);
      first.open();
      await Promise.all([first.write, second, third]);
      expect(await notes(other.db)).toEqual(['first', 'second', 'third']);
      expect(SqliteWriteTurn.priorityWriters(turnOf(store))).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('rolls a failing write back alone and gives its caller its error', async () => {
    const group = new SqliteGroupCommit(store.db, turnOf(store));
    const results = await Promise.allSettled([
      group.write(1, async (trx) => note('kept').execute(trx)),
      group.write(1, async (trx) => {
        await note('dropped').execute(trx);
        await note('kept').execute(trx);
      }),
      group.write(1, async (trx) => note('also kept').execute(trx)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE/);
    expect(await notes()).toEqual(['also kept', 'kept']);
  });

  it('fails every write of the group with the error that made SQLite roll the whole transaction back', async () => {
    await sql`create trigger notes_boom before insert on notes when new.text = 'boom'
      begin select raise(rollback, 'the whole transaction rolled back'); end`.execute(store.db);
    const group = new SqliteGroupCommit(store.db, turnOf(store));
    const before = await heldGroup(group, 'before');
    const results = Promise.allSettled([
      group.write(1, async (trx) => note('fine').execute(trx)),
      group.write(1, async (trx) => note('boom').execute(trx)),
      group.write(1, async (trx) => note('never run').execute(trx)),
    ]);
    before.open();
    await before.write;
    const settled = await results;
    expect(settled.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(SqliteWriteTurn.priorityWriters(turnOf(store))).toBe(0);
    for (const result of settled)
      expect(String((result as PromiseRejectedResult).reason)).toMatch(/the whole transaction rolled back/);
    expect(await notes()).toEqual(['before']);
    await group.write(1, async (trx) => note('after').execute(trx));
    expect(await notes()).toEqual(['after', 'before']);
  });

  it('fails every write of a group whose commit fails, and stores none of them', async () => {
    const group = new SqliteGroupCommit(store.db, turnOf(store));
    const before = await heldGroup(group, 'before');
    // Checked at the commit (deferred): the whole group's commit fails.
    const results = Promise.allSettled([
      group.write(1, async (trx) => note('fine').execute(trx)),
      group.write(1, async (trx) => note('orphan', 42).execute(trx)),
    ]);
    before.open();
    await before.write;
    expect((await results).map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(await notes()).toEqual(['before']);
    // The connection is usable afterwards.
    await group.write(1, async (trx) => note('after').execute(trx));
    expect(await notes()).toEqual(['after', 'before']);
  });

  it('writes the sessions opened and closed and the tokens issued at the same time in the same group', async () => {
    const group = store.sqliteGroupCommit;
    if (group === undefined) throw new Error('a SQLite store has a group commit');
    const ingestion = createIngestionStore(store);
    const auth = createAuthStore(store);
    await insertOpenSession(store, 'in_open', 'ledger', 'businessEvent');
    await store.db
      .insertInto('users')
      .values({
        email: 'a@example.com',
        display_name: 'A',
        password_hash: null,
        roles: '[]',
        disabled: 0,
        created_at: AT,
      })
      .execute();
    await store.db
      .insertInto('credentials')
      .values({
        client_id: 'lfc_a',
        secret_hash: 'x',
        owner_email: 'a@example.com',
        name: 'a',
        created_at: AT,
        expires_at: '2099-01-01T00:00:00.000Z',
        revoked_at: null,
      })
      .execute();
    const other = openStore(url);
    try {
      const held = await heldGroup(group, 'first');
      const writes = Promise.all([
        insertOpenSession(store, 'in_new', 'ledger', 'businessEvent'),
        ingestion.closeOpenSession('in_open', { user: 'closer' }, Date.now(), AT),
        ingestion.commitChunk(chunkWrite('in_open', 2)),
        auth.insertFamily('fam_1', 'lfc_a', AT, [
          {
            tokenHash: 'h'.repeat(64),
            kind: 'access',
            familyId: 'fam_1',
            clientId: 'lfc_a',
            issuedAt: AT,
            expiresAt: AT,
            usedAt: null,
            revokedAt: null,
          },
        ]),
      ]);
      // They wait for the held group's commit, then make the next group together.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const sessions = () =>
        other.db.selectFrom('ingestions').select(['ingestion_id', 'state']).orderBy('ingestion_id').execute();
      expect(await sessions()).toEqual([{ ingestion_id: 'in_open', state: 'pending' }]);
      held.open();
      const [, closed, chunk] = await writes;
      expect(closed?.state).toBe('closed');
      expect(chunk?.kind).toBe('stored');
      expect(await sessions()).toEqual([
        { ingestion_id: 'in_new', state: 'pending' },
        { ingestion_id: 'in_open', state: 'closed' },
      ]);
      const families = await other.db.selectFrom('token_families').select('family_id').execute();
      expect(families).toEqual([{ family_id: 'fam_1' }]);
    } finally {
      await other.close();
    }
  });
});
