/**
 * Balances kept as journals post (docs/adr/0016-balances-kept-as-journals-post.md): every
 * transaction that posts journal lines adds them, in the same transaction, to two tables of
 * migration 0012: `balance_moves`, the net move per accounting configuration, node, account,
 * currency and core date, and `balances`, the total per accounting configuration, node, account
 * and currency. So both always equal the sum of the posted lines, and reading balances costs
 * the accounts (and, as of a date, their days), never the journals stored.
 *
 * Exact: amounts are added as decimals (`lib/decimal.ts` here, `NUMERIC` on PostgreSQL,
 * `decimal_add` on SQLite), never binary floats, and the scale of a sum is the larger scale of
 * its parts on both, so a balance prints as the sum of its lines always did.
 *
 * Concurrent: on PostgreSQL several transactions add to the same rows at once. Each first sums
 * its moves to one per key, then upserts them sorted by key (`compareKeys`, code-unit order),
 * moves before totals: every writer takes the row locks of both tables in one order, so two
 * writers wait for each other but never deadlock. On SQLite one writer runs at a time.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import { add, type Decimal, decimal, decimalTextFromValue, toDecimalString } from '../../lib/decimal.js';
import type { BalanceFilter, BalanceRow, JournalDraft } from '../../modules/accounting/store.js';
import type { Database } from '../schema.js';
import { countJournals } from '../statistics-counters.js';
import { byDialect, type DialectAdapter } from '../store.js';

/** The net move of one balance on one core date, as one transaction adds it. */
export interface BalanceMove {
  accountingConfig: string;
  /** The node's canonical JSON, as `journals.node` holds it. */
  node: string;
  account: string;
  currency: string;
  coreDate: string;
  amount: string;
}

/** Rows per upsert statement: six parameters a row stays far below either dialect's limit. */
const UPSERT_ROWS_MAX = 1_000;

/** The key of a move without its core date: the key of its balance. */
function balanceKey(move: BalanceMove): readonly string[] {
  return [move.accountingConfig, move.node, move.account, move.currency];
}

function moveKey(move: BalanceMove): readonly string[] {
  return [...balanceKey(move), move.coreDate];
}

/** Code-unit order of keys, the one order every writer upserts in (see the header). */
function compareKeys(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < a.length; i += 1) {
    const x = a[i] ?? '';
    const y = b[i] ?? '';
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** `units` / 10^`scale` in plain notation with `scale` digits, as `toDecimalString` prints it. */
function unitsText(units: number, scale: number): string {
  const digits = String(Math.abs(units)).padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return units < 0 ? `-${text}` : text;
}

/**
 * An exact running sum of decimal texts with the larger scale of its terms. It adds integer
 * units while every term and sum is a safe integer (the common amounts of a chunk: a few
 * microseconds a line less than `decimal.js`), and `lib/decimal.ts` from the first that is not.
 */
class ExactSum {
  #units = 0;
  #scale = 0;
  #decimal: Decimal | undefined;

  add(text: string): void {
    if (this.#decimal === undefined) {
      const term = decimalTextFromValue(text);
      if (term !== undefined && !Number.isNaN(term.units)) {
        const scale = Math.max(this.#scale, term.scale);
        const a = this.#units * 10 ** (scale - this.#scale);
        const b = term.units * 10 ** (scale - term.scale);
        // A product or sum beyond 2^53 is never a safe integer, however it was rounded.
        if (Number.isSafeInteger(a) && Number.isSafeInteger(b) && Number.isSafeInteger(a + b)) {
          this.#units = a + b;
          this.#scale = scale;
          return;
        }
      }
      this.#decimal = decimal(unitsText(this.#units, this.#scale));
    }
    this.#decimal = add(this.#decimal, decimal(text));
  }

  text(): string {
    return this.#decimal === undefined ? unitsText(this.#units, this.#scale) : toDecimalString(this.#decimal);
  }
}

/** `moves` summed to one per key of `keyOf`, exactly, sorted by that key. */
function summed(moves: Iterable<BalanceMove>, keyOf: (m: BalanceMove) => readonly string[]): BalanceMove[] {
  const byKey = new Map<string, { move: BalanceMove; key: readonly string[]; total: ExactSum }>();
  for (const move of moves) {
    const key = keyOf(move);
    // Stored text never holds NUL (PostgreSQL refuses it; `lib/storable-text.ts`).
    const id = key.join('\u0000');
    let found = byKey.get(id);
    if (found === undefined) {
      found = { move, key, total: new ExactSum() };
      byKey.set(id, found);
    }
    found.total.add(move.amount);
  }
  return [...byKey.values()]
    .sort((a, b) => compareKeys(a.key, b.key))
    .map(({ move, total }) => ({ ...move, amount: total.text() }));
}

/** The moves of the posted journals among `journals` (an unposted journal moves nothing yet). */
export function balanceMovesOf(
  journals: readonly { draft: JournalDraft }[],
  nodeJsonOf: (node: Readonly<Record<string, string>>) => string,
): BalanceMove[] {
  const moves: BalanceMove[] = [];
  for (const { draft } of journals) {
    if (draft.status !== 'posted') continue;
    const node = nodeJsonOf(draft.node);
    for (const line of draft.lines)
      moves.push({
        accountingConfig: draft.accountingConfig,
        node,
        account: line.account,
        currency: line.currency,
        coreDate: draft.coreDate,
        amount: line.amount,
      });
  }
  return summed(moves, moveKey);
}

/** `amount` of the row plus the new one, exactly, in the dialect's terms. */
function sumOfAmounts(adapter: DialectAdapter, table: 'balance_moves' | 'balances') {
  return adapter.decimalAdd(sql.ref(`${table}.amount`), sql`excluded.amount`);
}

/**
 * Adds `moves` (any number, any order) to the kept balances inside `trx`, the transaction that
 * posts their lines: per key of each table, sorted (see the header).
 */
export async function keepBalances(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
  moves: readonly BalanceMove[],
): Promise<void> {
  if (moves.length === 0) return;
  const perDay = summed(moves, moveKey);
  for (let at = 0; at < perDay.length; at += UPSERT_ROWS_MAX) {
    await trx
      .insertInto('balance_moves')
      .values(
        perDay.slice(at, at + UPSERT_ROWS_MAX).map((m) => ({
          accounting_config: m.accountingConfig,
          node: m.node,
          account: m.account,
          currency: m.currency,
          core_date: m.coreDate,
          amount: m.amount,
        })),
      )
      .onConflict((oc) =>
        oc
          .columns(['accounting_config', 'node', 'account', 'currency', 'core_date'])
          .doUpdateSet({ amount: sumOfAmounts(adapter, 'balance_moves') }),
      )
      .execute();
  }
  const totals = summed(perDay, balanceKey);
  for (let at = 0; at < totals.length; at += UPSERT_ROWS_MAX) {
    await trx
      .insertInto('balances')
      .values(
        totals.slice(at, at + UPSERT_ROWS_MAX).map((m) => ({
          accounting_config: m.accountingConfig,
          node: m.node,
          account: m.account,
          currency: m.currency,
          amount: m.amount,
        })),
      )
      .onConflict((oc) =>
        oc
          .columns(['accounting_config', 'node', 'account', 'currency'])
          .doUpdateSet({ amount: sumOfAmounts(adapter, 'balances') }),
      )
      .execute();
  }
}

/** A row of summed lines as both dialects' posting statements answer it. */
interface MoveRow {
  accounting_config: string;
  node: string;
  account: string;
  currency: string;
  core_date: string;
  amount: string;
}

function moveOfRow(row: MoveRow): BalanceMove {
  return {
    accountingConfig: row.accounting_config,
    node: row.node,
    account: row.account,
    currency: row.currency,
    coreDate: row.core_date,
    amount: String(row.amount),
  };
}

/** The journals of one accounting configuration posted on one core date, and their lines. */
interface PostedDay {
  core_date: string;
  accounting_config: string;
  journals: number | string;
  lines: number | string;
}

/** Moves the posted journals of each day from the unposted counter to the posted one (last: `statistics-counters.ts`). */
function countPosted(trx: Transaction<Database>, days: readonly PostedDay[]): Promise<void> {
  return countJournals(
    trx,
    days.flatMap((d) => [
      {
        coreDate: d.core_date,
        posted: 0,
        accountingConfig: d.accounting_config,
        journals: -Number(d.journals),
        lines: -Number(d.lines),
      },
      {
        coreDate: d.core_date,
        posted: 1,
        accountingConfig: d.accounting_config,
        journals: Number(d.journals),
        lines: Number(d.lines),
      },
    ]),
  );
}

/**
 * Posts the unposted journals of `node` (canonical JSON) with core date on or before
 * `businessDate`, and adds their lines to the kept balances, in one transaction. Returns how
 * many journals were posted. On PostgreSQL the lines summed are those of exactly the journals
 * this update posted (its `RETURNING`), so an instance posting the same journals at once adds
 * nothing twice: its update waits for the row locks, then finds them posted. On SQLite the
 * transaction holds the one write lock from its start, so the lines read are those it posts.
 * The statistics counters of the posted journals move last (`statistics-counters.ts`).
 */
export function postDueJournals(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  node: string,
  businessDate: string,
): Promise<number> {
  const post = byDialect(adapter.dialect, { postgres: postDueReturning, sqlite: postDueUnderWriteLock });
  return db.transaction().execute((trx) => post(trx, adapter, node, businessDate));
}

/** PostgreSQL: the update's `RETURNING` names the journals it posted, and their lines are summed in the same statement. */
async function postDueReturning(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
  node: string,
  businessDate: string,
): Promise<number> {
  // One row per move, each with the count of journals posted; a lone row of nulls but the
  // count when none was.
  const { rows } = await sql<
    { [K in keyof MoveRow]: MoveRow[K] | null } & { journals: string; days: string }
  >`
    with posted as (
      update journals set posted = 1
      where posted = 0 and node = ${node} and core_date <= ${businessDate}
      returning journal_id, accounting_config, node, core_date, line_count
    ),
    moves as (
      select p.accounting_config, p.node, l.account, l.currency, p.core_date,
        ${adapter.decimalSum('l.amount')} as amount
      from posted as p join journal_lines as l on l.journal_id = p.journal_id
      group by p.accounting_config, p.node, l.account, l.currency, p.core_date
    )
    select (select count(*) from posted)::text as journals,
      (select coalesce(json_agg(d), '[]') from (
        select core_date, accounting_config, count(*) as journals, sum(line_count) as lines
        from posted group by core_date, accounting_config
      ) as d)::text as days,
      moves.*
    from (select 1) as one left join moves on true
  `.execute(trx);
  const moves = rows.filter((r): r is MoveRow & { journals: string; days: string } => r.account !== null);
  await keepBalances(trx, adapter, moves.map(moveOfRow));
  await countPosted(trx, JSON.parse(rows[0]?.days ?? '[]') as PostedDay[]);
  return Number(rows[0]?.journals ?? 0);
}

/** SQLite: the transaction holds the one write lock from its start, so the lines read first are those it posts. */
async function postDueUnderWriteLock(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
  node: string,
  businessDate: string,
): Promise<number> {
  const due = await trx
    .selectFrom('journal_lines as l')
    .innerJoin('journals as j', 'j.journal_id', 'l.journal_id')
    .where('j.posted', '=', 0)
    .where('j.node', '=', node)
    .where('j.core_date', '<=', businessDate)
    .select([
      'j.accounting_config',
      'j.node',
      'l.account',
      'l.currency',
      'j.core_date',
      adapter.decimalSum('l.amount').as('amount'),
    ])
    .groupBy(['j.accounting_config', 'j.node', 'l.account', 'l.currency', 'j.core_date'])
    .execute();
  const perDay = await trx
    .selectFrom('journals')
    .where('posted', '=', 0)
    .where('node', '=', node)
    .where('core_date', '<=', businessDate)
    .select((eb) => [
      'core_date',
      'accounting_config',
      eb.fn.countAll<number>().as('journals'),
      eb.fn.sum<number>('line_count').as('lines'),
    ])
    .groupBy(['core_date', 'accounting_config'])
    .execute();
  const result = await trx
    .updateTable('journals')
    .set({ posted: 1 })
    .where('posted', '=', 0)
    .where('node', '=', node)
    .where('core_date', '<=', businessDate)
    .executeTakeFirst();
  await keepBalances(trx, adapter, due.map(moveOfRow));
  await countPosted(trx, perDay);
  return Number(result.numUpdatedRows);
}

/**
 * The balances that match `filter`, from the kept tables: the totals without `asOf`, the moves
 * of core dates on or before it summed with it. Ordered by accounting configuration, node,
 * account and currency.
 */
export async function readBalances(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  filter: BalanceFilter,
): Promise<BalanceRow[]> {
  let rows: { accounting_config: string; node: string; account: string; currency: string; balance: string }[];
  if (filter.asOf === undefined) {
    let query = db.selectFrom('balances');
    if (filter.accountingConfig !== undefined)
      query = query.where('accounting_config', '=', filter.accountingConfig);
    if (filter.account !== undefined) query = query.where('account', '=', filter.account);
    if (filter.currency !== undefined) query = query.where('currency', '=', filter.currency);
    const amount = adapter.decimalText('amount');
    rows = await query
      .select(['accounting_config', 'node', 'account', 'currency', amount.as('balance')])
      .orderBy('accounting_config')
      .orderBy('node')
      .orderBy('account')
      .orderBy('currency')
      .execute();
  } else {
    let query = db.selectFrom('balance_moves').where('core_date', '<=', filter.asOf);
    if (filter.accountingConfig !== undefined)
      query = query.where('accounting_config', '=', filter.accountingConfig);
    if (filter.account !== undefined) query = query.where('account', '=', filter.account);
    if (filter.currency !== undefined) query = query.where('currency', '=', filter.currency);
    const total = adapter.decimalSum('amount');
    rows = await query
      .select(['accounting_config', 'node', 'account', 'currency', total.as('balance')])
      .groupBy(['accounting_config', 'node', 'account', 'currency'])
      .orderBy('accounting_config')
      .orderBy('node')
      .orderBy('account')
      .orderBy('currency')
      .execute();
  }
  return rows.map((r) => ({
    accountingConfig: r.accounting_config,
    node: JSON.parse(r.node) as Record<string, string>,
    account: r.account,
    currency: r.currency,
    balance: String(r.balance),
  }));
}
