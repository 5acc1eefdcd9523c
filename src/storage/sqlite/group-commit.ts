import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../schema.js';
import type { WalSync } from './wal-sync.js';
import { SqliteWriteTurn } from './write-turn.js';

/** Writes at most in one group, and rows at most: a group holds the turn to write while it runs. */
const GROUP_WRITES_MAX = 32;
const GROUP_ROWS_MAX = 20_000;

/** A write waiting for its group: its body, its size in rows, and how its caller learns the outcome. */
interface Member<T> {
  body: (trx: Transaction<Database>) => Promise<T>;
  rows: number;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

/** A member's body ran to its end (its writes kept) or failed (its writes rolled back). */
type BodyOutcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * Writes of one SQLite connection committed together (docs/adr/0029-chunk-writes-committed-together.md).
 * Every commit costs a sync of the file (on the thread that commits, or on libuv's pool after the
 * commit for the event loop's connection, `wal-sync.ts`): under 64 clients the event loop spent
 * about 15 % of its time in the commits of chunk writes. The writes that ask while a group waits
 * for the turn to write, runs or syncs are written in the next group: one transaction, each write
 * inside a savepoint of its own, one commit and one sync for all.
 *
 * - A write whose body fails is rolled back to its savepoint alone; its caller gets its error and
 *   the other writes of the group go on.
 * - A write's caller learns its outcome once the group's commit has returned and its log is on the
 *   disk: a write is never answered as stored before. A commit that fails fails every write of the
 *   group, none of which is stored.
 * - A write that asks alone is one transaction, as without a group; the groups form when writes
 *   wait for each other, which is when the commits they save matter.
 */
export class SqliteGroupCommit {
  readonly #db: Kysely<Database>;
  /** The connection's turn to write, where the writes waiting for a group are counted. */
  readonly #turn: SharedArrayBuffer;
  /** The connection's log brought to the disk after a commit (`wal-sync.ts`), when it commits without. */
  readonly #walSync: WalSync | undefined;
  readonly #waiting: Member<unknown>[] = [];
  #running = false;

  constructor(db: Kysely<Database>, turn: SharedArrayBuffer, walSync?: WalSync) {
    this.#db = db;
    this.#turn = turn;
    this.#walSync = walSync;
  }

  /**
   * Runs `body` in the next group's transaction and resolves with what it returned once that
   * transaction committed; rejects with the body's error (its writes rolled back) or the commit's.
   * `rows` is the write's size, which bounds the group.
   */
  write<T>(rows: number, body: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#waiting.push({ body, rows, resolve, reject } as Member<unknown>);
      SqliteWriteTurn.queueWrites(this.#turn, 1);
      if (!this.#running) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#running = true;
    try {
      while (this.#waiting.length > 0) await this.#runGroup();
    } finally {
      this.#running = false;
    }
  }

  /** Takes the first `count` writes waiting (all of them when not given) off the queue. */
  #dequeue(count?: number): Member<unknown>[] {
    const taken = this.#waiting.splice(0, count ?? this.#waiting.length);
    SqliteWriteTurn.queueWrites(this.#turn, -taken.length);
    return taken;
  }

  /** Takes the writes waiting once the transaction has begun, so those that asked meanwhile join. */
  #takeGroup(): Member<unknown>[] {
    let rows = 0;
    let count = 0;
    for (const member of this.#waiting) {
      if (count > 0 && (count >= GROUP_WRITES_MAX || rows + member.rows > GROUP_ROWS_MAX)) break;
      rows += member.rows;
      count += 1;
    }
    return this.#dequeue(count);
  }

  async #runGroup(): Promise<void> {
    let group: Member<unknown>[] = [];
    try {
      const trx = await this.#db.startTransaction().execute();
      group = this.#takeGroup();
      const outcomes: BodyOutcome<unknown>[] = [];
      try {
        for (const member of group) outcomes.push(await this.#runMember(trx, member));
        await trx.commit().execute();
      } catch (error) {
        await trx
          .rollback()
          .execute()
          .catch(() => undefined);
        throw error;
      }
      // Answered once the log is on the disk; the writes that ask meanwhile wait for the next group.
      await this.#walSync?.sync();
      group.forEach((member, i) => {
        const outcome = outcomes[i] as BodyOutcome<unknown>;
        if (outcome.ok) member.resolve(outcome.value);
        else member.reject(outcome.error);
      });
    } catch (error) {
      // The transaction did not begin or did not commit: no write of the group is stored (or its
      // log could not be synced: whether it is stored is unknown, as after a commit that failed
      // that way). When it did not begin (the store is unavailable), every write waiting fails
      // with it, as each of them would have failed in a transaction of its own.
      const failed = group.length > 0 ? group : this.#dequeue();
      for (const member of failed) member.reject(error);
    }
  }

  /** Runs one write inside a savepoint; a failing body is rolled back to it, the group goes on. */
  async #runMember(trx: Transaction<Database>, member: Member<unknown>): Promise<BodyOutcome<unknown>> {
    await sql`savepoint group_member`.execute(trx);
    try {
      const value = await member.body(trx);
      await sql`release savepoint group_member`.execute(trx);
      return { ok: true, value };
    } catch (error) {
      try {
        await sql`rollback to savepoint group_member`.execute(trx);
        await sql`release savepoint group_member`.execute(trx);
      } catch {
        // SQLite rolled the whole transaction back (a full disk, an I/O error): the group fails,
        // every write of it with the error that stopped this one.
        throw error;
      }
      return { ok: false, error };
    }
  }
}
