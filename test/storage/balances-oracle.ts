/**
 * The oracle of the kept balances (migration 0012, `storage/accounting/balances.ts`): the query
 * that answered `GET /api/v1/balances` before balances were kept, summing every line of every
 * posted journal. Tests compare the kept balances with it, exactly: the same rows, in the same
 * order, with the same decimal text.
 */
import { sql } from 'kysely';
import { expect } from 'vitest';
import type { BalanceFilter, BalanceRow } from '../../src/modules/accounting/store.js';
import { createAccountingStore } from '../../src/storage/accounting/accounting-store.js';
import type { Store } from '../../src/storage/store.js';

/** The balances matching `filter`, summed from the lines of the posted journals. */
export async function balancesFromLines(store: Store, filter: BalanceFilter): Promise<BalanceRow[]> {
  const total =
    store.dialect === 'postgres' ? sql<string>`sum(l.amount)::text` : sql<string>`decimal_sum(l.amount)`;
  let query = store.db
    .selectFrom('journal_lines as l')
    .innerJoin('journals as j', 'j.journal_id', 'l.journal_id')
    .where('j.posted', '=', 1);
  if (filter.accountingConfig !== undefined)
    query = query.where('j.accounting_config', '=', filter.accountingConfig);
  if (filter.asOf !== undefined) query = query.where('j.core_date', '<=', filter.asOf);
  if (filter.account !== undefined) query = query.where('l.account', '=', filter.account);
  if (filter.currency !== undefined) query = query.where('l.currency', '=', filter.currency);
  const rows = await query
    .select(['j.accounting_config', 'j.node', 'l.account', 'l.currency', total.as('balance')])
    .groupBy(['j.accounting_config', 'j.node', 'l.account', 'l.currency'])
    .orderBy('j.accounting_config')
    .orderBy('j.node')
    .orderBy('l.account')
    .orderBy('l.currency')
    .execute();
  return rows.map((r) => ({
    accountingConfig: r.accounting_config,
    node: JSON.parse(r.node) as Record<string, string>,
    account: r.account,
    currency: r.currency,
    balance: String(r.balance),
  }));
}

/**
 * Expects the kept balances of `store` to equal the oracle's for every balance, as of each of
 * `dates`, and under each filter of `filters` with and without the first date. Returns how many
 * balances there are now, so a caller can tell an empty comparison from a full one.
 */
export async function expectBalancesKept(
  store: Store,
  dates: readonly string[],
  filters: readonly BalanceFilter[] = [],
): Promise<number> {
  const accounting = createAccountingStore(store);
  const cases: BalanceFilter[] = [{}, ...dates.map((asOf) => ({ asOf }))];
  for (const filter of filters) {
    cases.push(filter);
    if (dates[0] !== undefined) cases.push({ ...filter, asOf: dates[0] });
  }
  for (const filter of cases) {
    expect(await accounting.balances(filter), JSON.stringify(filter)).toEqual(
      await balancesFromLines(store, filter),
    );
  }
  return (await balancesFromLines(store, {})).length;
}
