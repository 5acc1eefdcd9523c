import { type ColumnDefinitionBuilder, type Kysely, sql } from 'kysely';
import type { Dialect } from '../store.js';

/**
 * Reprocessing of failed records (docs/adr/0019-reprocessing-through-the-queue.md):
 * - `processing_errors` gains its life: `state` (`open`, `queued` while a run has put its record
 *   back into the processing queue, `closed` once the record posted), `attempts` (how many times
 *   the record was processed, the first time included), `last_attempt_at`, `previous_code` (the
 *   code before the last attempt), `closed_at`, and `run_id`, the reprocessing run that queued it
 *   last. Existing errors are open, after one attempt, made when they were recorded.
 * - `records.reprocess_run`: the run that put a waiting record back into the queue, so that the
 *   write path updates its error instead of adding one; cleared when the record is processed.
 * - `reprocess_runs` and `reprocess_run_outcomes`: each run (who, what it selected, what it
 *   queued and skipped) and its outcomes by code (`posted`, or the code a record failed with).
 * - `reprocess_schedule`: the one row of the schedule's settings, shared by every instance, with
 *   the instant the next scheduled run is due; the instance whose conditional update moves that
 *   instant runs the run, in the same transaction.
 * - `audit_log.details`: what a reprocessing run or a change of the schedule did, as JSON.
 * The processing error counters already count exactly the errors that are now open.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const serial = dialect === 'postgres' ? 'bigserial' : 'integer';
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  const idColumn = (c: ColumnDefinitionBuilder) =>
    dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement();
  await db.schema
    .alterTable('processing_errors')
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('open'))
    .execute();
  await db.schema
    .alterTable('processing_errors')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema.alterTable('processing_errors').addColumn('last_attempt_at', 'text').execute();
  await db.schema.alterTable('processing_errors').addColumn('previous_code', 'text').execute();
  await db.schema.alterTable('processing_errors').addColumn('closed_at', 'text').execute();
  await db.schema.alterTable('processing_errors').addColumn('run_id', bigint).execute();
  await sql`update processing_errors set last_attempt_at = created_at`.execute(db);
  await db.schema
    .createIndex('processing_errors_state')
    .on('processing_errors')
    .columns(['state', 'id'])
    .execute();
  await db.schema
    .createIndex('processing_errors_record')
    .on('processing_errors')
    .column('record_id')
    .execute();
  await db.schema
    .createIndex('processing_errors_run')
    .on('processing_errors')
    .columns(['run_id', 'id'])
    .where(sql.ref('run_id'), 'is not', null)
    .execute();
  await db.schema.alterTable('records').addColumn('reprocess_run', bigint).execute();
  await db.schema
    .createTable('reprocess_runs')
    .addColumn('id', serial, idColumn)
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('selection', 'text', (c) => c.notNull())
    .addColumn('revision', bigint, (c) => c.notNull())
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .addColumn('queued', bigint, (c) => c.notNull())
    .addColumn('skipped', bigint, (c) => c.notNull())
    .addColumn('posted', bigint, (c) => c.notNull())
    .addColumn('still_failing', bigint, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('reprocess_run_outcomes')
    .addColumn('run_id', bigint, (c) => c.notNull().references('reprocess_runs.id').onDelete('cascade'))
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('records', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('reprocess_run_outcomes_key', ['run_id', 'code'])
    .execute();
  await db.schema
    .createTable('reprocess_schedule')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('daily_at', 'text', (c) => c.notNull())
    .addColumn('interval_minutes', 'integer', (c) => c.notNull())
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('next_due_at', 'text')
    .addColumn('updated_at', 'text')
    .addColumn('updated_by', 'text')
    .execute();
  await sql`
    insert into reprocess_schedule (id, mode, daily_at, interval_minutes, max_attempts)
    values (1, 'daily', '08:00', 1440, 5)
  `.execute(db);
  await db.schema.alterTable('audit_log').addColumn('details', 'text').execute();
}
