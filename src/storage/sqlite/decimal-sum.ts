import type SqliteDatabase from 'better-sqlite3';
import { add, type Decimal, decimal, toDecimalString, ZERO } from '../../lib/decimal.js';

/**
 * `decimal_sum(text)`: an exact sum of decimal strings for SQLite, which has no decimal type
 * (its NUMERIC affinity means binary floats). PostgreSQL uses `sum` over `NUMERIC` instead.
 */
export function registerDecimalSum(sqlite: SqliteDatabase.Database): void {
  sqlite.aggregate('decimal_sum', {
    start: () => ZERO,
    step: (total: Decimal, value: unknown) =>
      typeof value === 'string' ? add(total, decimal(value)) : total,
    result: (total: Decimal) => toDecimalString(total),
  });
}

/**
 * `decimal_add(text, text)`: the exact sum of two decimal strings, for the upserts that keep the
 * balances on SQLite (`accounting/balances.ts`); PostgreSQL adds `NUMERIC` instead.
 */
export function registerDecimalAdd(sqlite: SqliteDatabase.Database): void {
  sqlite.function('decimal_add', { deterministic: true }, (a: unknown, b: unknown) =>
    toDecimalString(add(decimal(String(a)), decimal(String(b)))),
  );
}
