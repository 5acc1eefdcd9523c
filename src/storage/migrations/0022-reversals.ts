import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../store.js';

/**
 * Reversals by selection (docs/domain/accounting.md, Corrections;
 * docs/adr/0020-corrections-as-reversal-journals.md):
 *
 * - `reversals`: one row per reversal request that was answered (dry runs store nothing): its
 *   reason, selection (JSON), posting date, who asked (the owner's e-mail and the client id),
 *   when, the configuration revision it worked under, and what it did: reversal journals and
 *   lines written, selected journals already reversed and selected journals that may not be
 *   reversed, with the first of each listed and the totals per accounting configuration, account
 *   and currency (JSON). `idempotency_key` and `request_digest` answer a repeated request: the
 *   key is unique per client (`reversals_idempotency`), the digest tells a repeat from another
 *   body under the same key. `reversals_page_order` serves the list, newest first.
 * - `journals.reversal_id`: the reversal request that made a reversal journal; null on every
 *   other journal, reversal journals of a business-event rollback included. Indexed in list
 *   order for `GET /api/v1/journals?reversalId=`.
 * - `journals_origin_journal`: the journals of one origin journal id, every one of them (the
 *   index of migration 0007 holds only the first booking per accounting configuration), in list
 *   order, so that a selection by origin journal id reads only its journals.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  await db.schema
    .createTable('reversals')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('selection', 'text', (c) => c.notNull())
    .addColumn('posting_date', 'text')
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revision', bigint, (c) => c.notNull())
    .addColumn('idempotency_key', 'text')
    .addColumn('request_digest', 'text', (c) => c.notNull())
    .addColumn('journals', bigint, (c) => c.notNull())
    .addColumn('lines', bigint, (c) => c.notNull())
    .addColumn('already_reversed', bigint, (c) => c.notNull())
    .addColumn('not_reversible', bigint, (c) => c.notNull())
    .addColumn('details', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('reversals_idempotency')
    .on('reversals')
    .columns(['client_id', 'idempotency_key'])
    .unique()
    .where(sql.ref('idempotency_key'), 'is not', null)
    .execute();
  await db.schema.createIndex('reversals_page_order').on('reversals').columns(['created_at', 'id']).execute();
  await db.schema.alterTable('journals').addColumn('reversal_id', 'text').execute();
  await db.schema
    .createIndex('journals_reversal')
    .on('journals')
    .columns(['reversal_id', 'core_date', 'created_at', 'journal_id'])
    .where(sql.ref('reversal_id'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('journals_origin_journal')
    .on('journals')
    .columns(['origin_journal_id', 'core_date', 'created_at', 'journal_id'])
    .where(sql.ref('origin_journal_id'), 'is not', null)
    .execute();
}
