import { type Kysely, sql } from 'kysely';

/**
 * The counters of 0014 gain the dimensions the list filters use, so that the totals of the
 * journals and processing errors lists come from them instead of a count of the rows:
 * - `journal_day_counts` per core date, posted flag and accounting configuration (the journals
 *   list filters by status, accounting configuration and a core date range);
 * - `processing_error_days` per day and code (the processing errors list filters by code).
 * Both are rebuilt from the rows already stored, one statement per table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('journal_day_counts').execute();
  await db.schema
    .createTable('journal_day_counts')
    .addColumn('core_date', 'text', (c) => c.notNull())
    .addColumn('posted', 'integer', (c) => c.notNull())
    .addColumn('accounting_config', 'text', (c) => c.notNull())
    .addColumn('journals', 'integer', (c) => c.notNull())
    .addColumn('lines', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('journal_day_counts_key', ['core_date', 'posted', 'accounting_config'])
    .execute();
  await sql`
    insert into journal_day_counts (core_date, posted, accounting_config, journals, lines)
    select core_date, posted, accounting_config, count(*), coalesce(sum(line_count), 0)
    from journals group by core_date, posted, accounting_config
  `.execute(db);
  await db.schema.dropTable('processing_error_days').execute();
  await db.schema
    .createTable('processing_error_days')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('errors', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('processing_error_days_key', ['day', 'code'])
    .execute();
  await sql`
    insert into processing_error_days (day, code, errors)
    select substr(created_at, 1, 10), code, count(*) from processing_errors
    group by substr(created_at, 1, 10), code
  `.execute(db);
}
