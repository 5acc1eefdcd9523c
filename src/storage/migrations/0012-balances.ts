import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../store.js';

/**
 * Balances kept as journals post (docs/adr/0016-balances-kept-as-journals-post.md), so that
 * reading them costs the accounts, never the journals stored: `balance_moves`, the posted lines
 * summed per accounting configuration, node, account, currency and core date (what balances as
 * of a date sum), and `balances`, the same summed without the core date (what balances now
 * read). Amounts are `NUMERIC` on PostgreSQL and exact decimal text on SQLite, as
 * `journal_lines.amount`. Both are filled here from the lines of the posted journals already
 * stored; from then on `storage/accounting/balances.ts` adds to them in every transaction that
 * posts lines.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const amount = dialect === 'postgres' ? 'numeric' : 'text';
  await db.schema
    .createTable('balance_moves')
    .addColumn('accounting_config', 'text', (c) => c.notNull())
    .addColumn('node', 'text', (c) => c.notNull())
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('core_date', 'text', (c) => c.notNull())
    .addColumn('amount', amount, (c) => c.notNull())
    .addPrimaryKeyConstraint('balance_moves_key', [
      'accounting_config',
      'node',
      'account',
      'currency',
      'core_date',
    ])
    .execute();
  await db.schema
    .createTable('balances')
    .addColumn('accounting_config', 'text', (c) => c.notNull())
    .addColumn('node', 'text', (c) => c.notNull())
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('amount', amount, (c) => c.notNull())
    .addPrimaryKeyConstraint('balances_key', ['accounting_config', 'node', 'account', 'currency'])
    .execute();
  // SQLite sums decimal text with `decimal_sum` (`storage/sqlite/decimal-sum.ts`), registered on
  // every connection the service opens; PostgreSQL sums NUMERIC, keeping the larger scale.
  const total = dialect === 'postgres' ? sql`sum(l.amount)` : sql`decimal_sum(l.amount)`;
  await sql`
    insert into balance_moves (accounting_config, node, account, currency, core_date, amount)
    select j.accounting_config, j.node, l.account, l.currency, j.core_date, ${total}
    from journal_lines as l join journals as j on j.journal_id = l.journal_id
    where j.posted = 1
    group by j.accounting_config, j.node, l.account, l.currency, j.core_date
  `.execute(db);
  const perDay = dialect === 'postgres' ? sql`sum(amount)` : sql`decimal_sum(amount)`;
  await sql`
    insert into balances (accounting_config, node, account, currency, amount)
    select accounting_config, node, account, currency, ${perDay}
    from balance_moves
    group by accounting_config, node, account, currency
  `.execute(db);
}
