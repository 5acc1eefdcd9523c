import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices, type Services } from '../../src/composition/services.js';
import type { ExtractCursor } from '../../src/modules/extracts/service.js';
import { postDueJournals } from '../../src/storage/accounting/balances.js';
import { logWrittenJournals } from '../../src/storage/extract-journal-log.js';
import { postgresAdapter } from '../../src/storage/postgres/adapter.js';
import type { Database } from '../../src/storage/schema.js';
import { sqliteAdapter } from '../../src/storage/sqlite/adapter.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { barrier } from '../helpers/barrier.js';
import { TEST_NOW, testClock } from '../helpers/clock.js';
import { createTestStore, insertOpenSession, TEST_DIALECT } from '../helpers/store.js';

const INGESTION_ID = 'in_00000000000000000000000000000025';
/** The node of the journals written unposted, posted by the test's own posting loop. */
const LATE_NODE = JSON.stringify({ branch: 'LATE' });
const LATE_DATE = '2026-12-01';

/** Journal rows as processing writes them (no lines: the extract of journals reads none). */
function journalRows(count: number, posted: boolean) {
  const at = TEST_NOW;
  return Array.from({ length: count }, () => ({
    journal_id: randomUUID(),
    ingestion_id: INGESTION_ID,
    record_id: 1,
    core_date: posted ? '2026-11-20' : LATE_DATE,
    original_core_date: null,
    journal_type: 'PERM',
    accounting_config: 'IFRS',
    node: posted ? JSON.stringify({ branch: 'AMS' }) : LATE_NODE,
    posted: posted ? 1 : 0,
    reverses: null,
    reversed_by: null,
    origin_journal_id: null,
    line_count: 0,
    created_at: at,
  }));
}

async function insertJournals(db: Kysely<Database>, count: number, posted: boolean): Promise<string[]> {
  const rows = journalRows(count, posted);
  await db.insertInto('journals').values(rows).execute();
  await logWrittenJournals(
    db,
    TEST_DIALECT === 'postgres' ? postgresAdapter : sqliteAdapter,
    rows.map((row) => [row.journal_id, row.posted]),
  );
  return rows.map((row) => row.journal_id);
}

/**
 * Incremental extracts never skip or repeat a row however writers interleave their commits
 * (docs/adr/0022-gap-free-extract-offsets.md). On PostgreSQL a second store on the same database
 * plays a second service instance.
 */
describe('incremental extract offsets under concurrent writers', () => {
  let store: Store;
  let other: Store;
  let dispose: () => Promise<void>;
  let services: Services;

  beforeAll(async () => {
    const made = await createTestStore({ file: true });
    store = made.store;
    dispose = made.dispose;
    other = TEST_DIALECT === 'postgres' ? openStore(made.url) : store;
    services = createServices(store, testClock(), {
      accessTokenTtlSeconds: 300,
      refreshTokenTtlSeconds: 1800,
      businessDate: undefined,
    });
    await insertOpenSession(store, INGESTION_ID, 'ledger', 'businessEvent');
  });
  afterAll(async () => {
    await services?.close();
    if (other !== store) await other?.close();
    await dispose?.();
  });

  const activeIncremental = async (source: 'posted-journals' | 'unposted-journals') => {
    const { answer: made } = await services.extracts.create(
      {
        name: source,
        description: null,
        source,
        filters: {},
        fields: ['journalId'],
        format: 'jsonl',
        incremental: true,
      },
      { actor: { user: 'test@example.test' } },
    );
    await services.extracts.update(made.id, { state: 'Active' }, { actor: { user: 'test@example.test' } });
    return made.id;
  };

  /** Every row of the pending read, page after page, then acknowledged. */
  const readAndAck = async (id: number, limit = 1000): Promise<string[]> => {
    const ids: string[] = [];
    let after: ExtractCursor | undefined;
    do {
      const page = await services.extracts.page(id, after, limit);
      ids.push(...page.rows.map((row) => String(row.journalId)));
      after = page.next;
    } while (after !== undefined);
    await services.extracts.increment(id, { actor: { user: 'test@example.test' } });
    return ids;
  };

  /**
   * Acknowledged reads until `count` rows were answered. A transaction still running anywhere on
   * the PostgreSQL server (other tests' included) holds rows back until it ends, never for ever.
   */
  const readUntil = async (id: number, count: number, ids: string[] = []): Promise<string[]> => {
    const deadline = Date.now() + 60_000;
    while (ids.length < count && Date.now() < deadline) {
      ids.push(...(await readAndAck(id)));
      if (ids.length < count) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return ids;
  };

  it.runIf(TEST_DIALECT === 'postgres')(
    'answers a row of a later transaction at once and the row of an earlier one, committed after, in the next answer',
    async () => {
      const id = await activeIncremental('posted-journals');
      expect(await readAndAck(id)).toEqual([]);
      const inserted = barrier(2);
      const readDone = barrier(2);
      let early: string[] = [];
      let late: string[] = [];
      let seen: string[] = [];
      await Promise.all([
        // The transaction that started first and commits last.
        store.db.transaction().execute(async (trx) => {
          early = await insertJournals(trx, 1, true);
          await inserted();
          await readDone();
        }),
        (async () => {
          await inserted();
          late = await insertJournals(other.db, 1, true);
          seen = await readAndAck(id);
          await readDone();
        })(),
      ]);
      // The later transaction ended: its row is answered at once, though the earlier one, with a
      // lower transaction id, still runs; that one's row comes in the answer after it ends.
      expect(seen).toEqual(late);
      expect(await readUntil(id, 1)).toEqual(early);
      expect(await readAndAck(id)).toEqual([]);
    },
  );

  it('answers 100,000 journals written and posted by concurrent writers exactly once over acknowledged reads', async () => {
    const posted = await activeIncremental('posted-journals');
    const unposted = await activeIncremental('unposted-journals');
    const before = (await readAndAck(posted)).length;
    await readAndAck(unposted);
    const total = 100_000;
    const batch = 250;
    const writers = 4;
    const writtenPosted: string[] = [];
    const writtenUnposted: string[] = [];
    let writing = true;
    const writer = async (w: number) => {
      const db = (w % 2 === 0 ? store : other).db;
      for (let i = w; i < total / batch; i += writers) {
        // One batch in four is written unposted and posted later by the posting loop.
        const isPosted = i % 4 !== 0;
        const ids = await db.transaction().execute((trx) => insertJournals(trx, batch, isPosted));
        (isPosted ? writtenPosted : writtenUnposted).push(...ids);
      }
    };
    const poster = async () => {
      while (writing) {
        await postDueJournals(other.db, other.adapter, LATE_NODE, LATE_DATE);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    const readPosted: string[] = [];
    const readUnposted: string[] = [];
    const reader = async () => {
      while (writing) {
        readPosted.push(...(await readAndAck(posted)));
        readUnposted.push(...(await readAndAck(unposted)));
      }
    };
    const done = Promise.all(Array.from({ length: writers }, (_, w) => writer(w))).then(() => {
      writing = false;
    });
    await Promise.all([done, poster(), reader()]);
    // What is left after the writers stopped: the last postings, and the rows after the last read.
    await postDueJournals(store.db, store.adapter, LATE_NODE, LATE_DATE);
    await readUntil(posted, total, readPosted);
    await readUntil(unposted, writtenUnposted.length, readUnposted);
    expect(await readAndAck(posted)).toEqual([]);

    expect(new Set(readPosted).size).toBe(readPosted.length);
    expect(new Set(readUnposted).size).toBe(readUnposted.length);
    expect(readPosted.length).toBe(total);
    expect(readPosted.sort()).toEqual([...writtenPosted, ...writtenUnposted].sort());
    expect(readUnposted.sort()).toEqual(writtenUnposted.sort());
    const stored = await store.db
      .selectFrom('journals')
      .select('journal_id')
      .where('posted', '=', 1)
      .execute();
    expect(stored.length).toBe(before + total);
  }, 180_000);
});
