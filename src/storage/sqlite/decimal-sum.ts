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
