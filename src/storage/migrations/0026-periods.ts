import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../store.js';

/**
 * Periods closed, locked and reopened by hand, and the trial-balance snapshots of their closes
 * (docs/domain/accounting.md, Periods closed, locked and reopened by hand;
 * docs/adr/0025-manual-period-states.md):
 *
 * - `period_states_version`: one row whose `version` goes up with every change of a period's
 *   state. Processing reads it once per chunk (on PostgreSQL with `FOR SHARE`, so that a change
 *   waits for the chunks in progress and the next ones see it) and reads the states again only
 *   when it moved.
 * - `period_states`: the manual state of a period of a node and accounting configuration
 *   (`closed`, `locked` or `reopened`), with who set it, when, from which client and, for a
 *   reopening, why. A period without a row follows the calendar.
 * - `period_snapshots`: one row per close or lock, never deleted: the trial balance of the node and
 *   accounting configuration as of the period's last day, its number of lines and the SHA-256 of
 *   its canonical text; `period_snapshot_lines` holds its balances per account and currency
 *   (`NUMERIC` on PostgreSQL, exact decimal text on SQLite, as the kept balances).
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  const amount = dialect === 'postgres' ? 'numeric' : 'text';
  await db.schema
    .createTable('period_states_version')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('version', bigint, (c) => c.notNull())
    .execute();
  await sql`insert into period_states_version (id, version) values (1, 0)`.execute(db);
  await db.schema
    .createTable('period_states')
    .addColumn('accounting_config', 'text', (c) => c.notNull())
    .addColumn('node', 'text', (c) => c.notNull())
    .addColumn('first_day', 'text', (c) => c.notNull())
    .addColumn('last_day', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('acted_by', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('acted_at', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addPrimaryKeyConstraint('period_states_key', ['accounting_config', 'node', 'first_day'])
    .execute();
  await db.schema
    .createTable('period_snapshots')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('accounting_config', 'text', (c) => c.notNull())
    .addColumn('node', 'text', (c) => c.notNull())
    .addColumn('first_day', 'text', (c) => c.notNull())
    .addColumn('last_day', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('taken_by', 'text', (c) => c.notNull())
    .addColumn('taken_at', 'text', (c) => c.notNull())
    .addColumn('lines', bigint, (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('period_snapshots_of_period')
    .on('period_snapshots')
    .columns(['accounting_config', 'node', 'first_day', 'taken_at', 'id'])
    .execute();
  await db.schema
    .createTable('period_snapshot_lines')
    .addColumn('snapshot_id', 'text', (c) => c.notNull())
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('balance', amount, (c) => c.notNull())
    .addPrimaryKeyConstraint('period_snapshot_lines_key', ['snapshot_id', 'account', 'currency'])
    .execute();
}
