/**
 * The journals a transaction writes, appended on SQLite to `extract_journal_log` (migration
 * 0023), whose row ids are the journals' extract positions in commit order (one writer at a
 * time; docs/adr/0022-gap-free-extract-offsets.md). Every writer of journals calls it in the
 * transaction that inserts them: processing's write path and reversals. An `AFTER INSERT`
 * trigger on `journals` did this first, but a trigger on the table makes SQLite give every journal
 * insert a statement journal, whether the trigger does anything or not: the processing limit fell
 * from about 44,000 to 28,000 journals/s (`npm run bench -- processing-limit`, alternated runs
 * with and without it). PostgreSQL needs nothing: a column default records the writing
 * transaction, and postings are logged by a trigger there and, on SQLite, by an `AFTER UPDATE OF
 * posted` trigger, which costs inserts nothing.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';
import { byDialect, type DialectAdapter } from './store.js';

/** Rows per insert statement: two parameters each, well under SQLite's limit. */
const LOG_ROWS_PER_STATEMENT = 400;

/** A journal just written: its id and whether it was written posted (1) or unposted (0). */
export type WrittenJournal = readonly [journalId: string, posted: number];

/**
 * Appends `journals`, in the order written, to the extract log on SQLite; nothing on PostgreSQL,
 * where a journal's transaction id is its position.
 */
export function logWrittenJournals(
  db: Kysely<Database> | Transaction<Database>,
  adapter: DialectAdapter,
  journals: readonly WrittenJournal[],
): Promise<void> {
  return byDialect(adapter.dialect, { postgres: async () => {}, sqlite: appendToLog })(db, journals);
}

async function appendToLog(
  db: Kysely<Database> | Transaction<Database>,
  journals: readonly WrittenJournal[],
): Promise<void> {
  for (let start = 0; start < journals.length; start += LOG_ROWS_PER_STATEMENT) {
    await db
      .insertInto('extract_journal_log')
      .values(
        journals
          .slice(start, start + LOG_ROWS_PER_STATEMENT)
          .map(([journalId, posted]) => ({ journal_id: journalId, posted })),
      )
      .execute();
  }
}
