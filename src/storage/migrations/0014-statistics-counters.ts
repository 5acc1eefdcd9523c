import { type Kysely, sql } from 'kysely';

/**
 * Statistics from counters kept with the writes, so that the statistics endpoints
 * cost the days and entities asked about, never the rows stored:
 * - `journal_day_counts`: journals and their lines per core date and posted flag;
 * - `processing_error_days`: processing errors per UTC day of `created_at` (the index
 *   `processing_errors_created_at` serves the partial first and last day of a range);
 * - `entity_record_counts`: records waiting and done, and processing errors, per namespace and
 *   entity.
 * Each is filled here from the rows already stored, one statement per table; from then on
 * `storage/statistics-counters.ts` adds to them in every transaction that writes what they count.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('journal_day_counts')
    .addColumn('core_date', 'text', (c) => c.notNull())
    .addColumn('posted', 'integer', (c) => c.notNull())
    .addColumn('journals', 'integer', (c) => c.notNull())
    .addColumn('lines', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('journal_day_counts_key', ['core_date', 'posted'])
    .execute();
  await db.schema
    .createTable('processing_error_days')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('errors', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('processing_error_days_key', ['day'])
    .execute();
  await db.schema
    .createTable('entity_record_counts')
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('entity', 'text', (c) => c.notNull())
    .addColumn('waiting', 'integer', (c) => c.notNull())
    .addColumn('done', 'integer', (c) => c.notNull())
    .addColumn('errors', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('entity_record_counts_key', ['namespace', 'entity'])
    .execute();
  await db.schema
    .createIndex('processing_errors_created_at')
    .on('processing_errors')
    .column('created_at')
    .execute();
  await sql`
    insert into journal_day_counts (core_date, posted, journals, lines)
    select core_date, posted, count(*), coalesce(sum(line_count), 0)
    from journals group by core_date, posted
  `.execute(db);
  await sql`
    insert into processing_error_days (day, errors)
    select substr(created_at, 1, 10), count(*) from processing_errors group by substr(created_at, 1, 10)
  `.execute(db);
  await sql`
    insert into entity_record_counts (namespace, entity, waiting, done, errors)
    select r.namespace, r.entity,
      sum(case when r.processing = 1 then 1 else 0 end),
      sum(case when r.processing = 0 then 1 else 0 end),
      coalesce((select count(*) from processing_errors as e
        where e.namespace = r.namespace and e.entity = r.entity), 0)
    from records as r group by r.namespace, r.entity
  `.execute(db);
}
