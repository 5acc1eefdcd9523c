import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../store.js';

/**
 * On PostgreSQL the rows written by the thousand lose their foreign keys: records to their
 * session, journals to their session, journal lines to their journal. PostgreSQL checks a
 * foreign key row by row, with a query and a share lock on the parent row each, which took a
 * quarter of the time of a 500-record chunk's `COPY` (docs/adr/0032-bulk-rows-unkeyed.md). The
 * parent is kept by the transaction that writes them instead: a chunk's row (whose own key to its
 * session stays) is inserted before its records, a claim locks its chunk's row before it writes
 * journals and lines, and the configuration wipe, the one place sessions are deleted, deletes
 * these rows itself (`configuration-store.ts`). SQLite keeps the keys: there a check is an index
 * lookup in the same process, and dropping one would rebuild the table.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`alter table records drop constraint records_ingestion_id_fkey`.execute(db);
  await sql`alter table journals drop constraint journals_ingestion_id_fkey`.execute(db);
  await sql`alter table journal_lines drop constraint journal_lines_journal_id_fkey`.execute(db);
}
