import { type Kysely, sql } from 'kysely';

/**
 * An origin journal id posts once per accounting configuration, across every session: a unique
 * index on `(origin_journal_id, accounting_config)` over the journals a sender sent (not their
 * reversals, which carry the same origin id), so that two instances processing the same
 * journal at once cannot both post it.
 *
 * Journals posted twice before this rule existed stay in the books (a migration does not change
 * balances behind the operator's back), but each repeat is marked: `duplicate_of` holds the id
 * of the first journal (by creation time, then id) of the same origin journal id and accounting
 * configuration, and the index leaves marked rows out. They are found with
 * `select journal_id, duplicate_of from journals where duplicate_of is not null`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('journals').addColumn('duplicate_of', 'text').execute();
  await sql`
    update journals set duplicate_of = (
      select first.journal_id from journals as first
      where first.accounting_config = journals.accounting_config
        and first.origin_journal_id = journals.origin_journal_id
        and first.reverses is null
      order by first.created_at, first.journal_id
      limit 1
    )
    where origin_journal_id is not null
      and reverses is null
      and exists (
        select 1 from journals as earlier
        where earlier.accounting_config = journals.accounting_config
          and earlier.origin_journal_id = journals.origin_journal_id
          and earlier.reverses is null
          and (
            earlier.created_at < journals.created_at
            or (earlier.created_at = journals.created_at and earlier.journal_id < journals.journal_id)
          )
      )
  `.execute(db);
  await db.schema
    .createIndex('journals_origin_journal_once')
    .unique()
    .on('journals')
    .columns(['origin_journal_id', 'accounting_config'])
    .where(sql.ref('origin_journal_id'), 'is not', null)
    .where(sql.ref('reverses'), 'is', null)
    .where(sql.ref('duplicate_of'), 'is', null)
    .execute();
}
