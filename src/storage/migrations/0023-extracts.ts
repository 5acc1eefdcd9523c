import { type ColumnDefinitionBuilder, type Kysely, sql } from 'kysely';
import type { Dialect } from '../store.js';

/**
 * Extracts (docs/adr/0022-gap-free-extract-offsets.md):
 * - On PostgreSQL `journals.written_xid` and `journals.posted_xid`: the transaction that wrote
 *   the journal and the one that posted it, `xid8` columns defaulting to `pg_current_xact_id()`,
 *   the posting one set again by a trigger when `posted` turns 1. No writer names them, so every
 *   insert and every posting fills them.
 * - On SQLite `extract_journal_log`: one row per journal written (appended by the writers of
 *   journals, `storage/extract-journal-log.ts`: a trigger on insert slowed every journal insert)
 *   and one per posting (appended by a trigger on the update of `posted`), numbered by its row
 *   id in commit order (one writer). Nothing ever deletes from it (a wipe deletes journals, not
 *   their log, whose rows the reads join to journals and so skip), so a number is never handed
 *   out twice. It has no index but its row id: an append to a narrow table costs a journal
 *   about 1 µs, where updating the journal row just inserted and two position indexes cost
 *   40 µs (measured on 80,000 journals).
 * - On PostgreSQL `processing_errors.written_xid` and `records.written_xid`, likewise; on SQLite
 *   their `AUTOINCREMENT` ids are their positions already.
 * - `extraction_configurations`: what an extract reads and how, its state, and its incremental
 *   offsets: `acked_position` (where the next answer starts) and `pending_position` (where the
 *   answer being read ends, fixed by its first read, until acknowledged).
 * - `extraction_executions` and `extraction_parts`: asynchronous extractions, made run by run,
 *   each run's part of the file stored with the execution's cursor in one transaction, so that
 *   production resumes after a crash.
 * Existing rows are given the migration's position: they form the first answer.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const serial = dialect === 'postgres' ? 'bigserial' : 'integer';
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  const idColumn = (c: ColumnDefinitionBuilder) =>
    dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement();
  if (dialect === 'postgres') {
    for (const table of ['journals', 'processing_errors', 'records'])
      await sql`alter table ${sql.table(table)} add column written_xid xid8 not null default pg_current_xact_id()`.execute(
        db,
      );
    await sql`alter table journals add column posted_xid xid8 not null default pg_current_xact_id()`.execute(
      db,
    );
    await sql`
      create function journals_posted_xid() returns trigger language plpgsql as $$
      begin
        if new.posted = 1 and old.posted = 0 then
          new.posted_xid := pg_current_xact_id();
        end if;
        return new;
      end
      $$
    `.execute(db);
    await sql`
      create trigger journals_posted_xid before update of posted on journals
      for each row execute function journals_posted_xid()
    `.execute(db);
    await db.schema
      .createIndex('journals_written')
      .on('journals')
      .columns(['written_xid', 'journal_id'])
      .execute();
    await db.schema
      .createIndex('journals_posting')
      .on('journals')
      .columns(['posted_xid', 'journal_id'])
      .where(sql.ref('posted'), '=', 1)
      .execute();
    await db.schema
      .createIndex('processing_errors_written')
      .on('processing_errors')
      .columns(['written_xid', 'id'])
      .execute();
    await db.schema
      .createIndex('records_entity_written')
      .on('records')
      .columns(['namespace', 'entity', 'written_xid', 'record_id'])
      .execute();
  } else {
    await db.schema
      .createTable('extract_journal_log')
      .addColumn('position', 'integer', (c) => c.primaryKey())
      .addColumn('journal_id', 'text', (c) => c.notNull())
      .addColumn('posted', 'integer', (c) => c.notNull())
      .execute();
    // Existing journals are the first entries, in the order they were stored.
    await sql`
      insert into extract_journal_log (journal_id, posted) select journal_id, posted from journals order by rowid
    `.execute(db);
    await sql`
      create trigger extract_journal_posted after update of posted on journals
      when new.posted = 1 and old.posted = 0 begin
        insert into extract_journal_log (journal_id, posted) values (new.journal_id, 1);
      end
    `.execute(db);
  }

  await db.schema
    .createTable('extraction_configurations')
    .addColumn('id', serial, idColumn)
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('filters', 'text', (c) => c.notNull())
    .addColumn('fields', 'text')
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('incremental', 'integer', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('acked_position', 'text', (c) => c.notNull())
    .addColumn('pending_position', 'text')
    .addColumn('pending_since', 'text')
    .addColumn('acked_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('updated_by', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('extraction_configurations_state')
    .on('extraction_configurations')
    .columns(['state', 'id'])
    .execute();

  await db.schema
    .createTable('extraction_executions')
    .addColumn('id', serial, idColumn)
    .addColumn('configuration_id', bigint, (c) =>
      c.notNull().references('extraction_configurations.id').onDelete('cascade'),
    )
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('from_position', 'text', (c) => c.notNull())
    .addColumn('to_position', 'text', (c) => c.notNull())
    .addColumn('cursor', 'text')
    .addColumn('records', bigint, (c) => c.notNull())
    .addColumn('bytes', bigint, (c) => c.notNull())
    .addColumn('runs', 'integer', (c) => c.notNull())
    .addColumn('requested_by', 'text', (c) => c.notNull())
    .addColumn('requested_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('completed_at', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('failure', 'text')
    .addColumn('expires_at', 'text')
    .execute();
  await db.schema
    .createIndex('extraction_executions_configuration')
    .on('extraction_executions')
    .columns(['configuration_id', 'id'])
    .execute();
  await db.schema
    .createIndex('extraction_executions_open')
    .on('extraction_executions')
    .columns(['status', 'id'])
    .execute();
  await db.schema
    .createTable('extraction_parts')
    .addColumn('execution_id', bigint, (c) =>
      c.notNull().references('extraction_executions.id').onDelete('cascade'),
    )
    .addColumn('run_no', 'integer', (c) => c.notNull())
    .addColumn('records', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('completed_at', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('extraction_parts_key', ['execution_id', 'run_no'])
    .execute();
}
