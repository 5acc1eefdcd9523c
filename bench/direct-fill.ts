import Database from 'better-sqlite3';
import pg from 'pg';
import { registerDecimalSum } from '../src/storage/sqlite/decimal-sum.js';
import type { BenchService, Dialect } from './service.js';

/**
 * What the read benchmarks (`admin.ts`, `reads.ts`) share to fill a store directly, beside the
 * running service, and to sign in to its administration interface.
 */

/** The administrator the read benchmarks start the service with. */
export const ADMIN_EMAIL = 'bench-admin@example.test';
/** The sign-in cookie of the administration interface. */
export const SESSION_COOKIE = 'lf_admin_session';

/** Runs statements on the service's database, beside the running service. */
export interface Filler {
  run(statement: string): Promise<void>;
  /** The first row a query answers, if any. */
  first(query: string): Promise<Record<string, unknown> | undefined>;
  /** Every row a query answers. */
  all(query: string): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

/** A connection of `dialect`; on SQLite with `decimal_sum`, which a backfill of balances needs. */
export async function fillerOf(dialect: Dialect, databaseUrl: string): Promise<Filler> {
  if (dialect === 'sqlite') {
    const sqlite = new Database(databaseUrl.slice('sqlite:'.length));
    sqlite.pragma('busy_timeout = 30000');
    registerDecimalSum(sqlite);
    return {
      run: async (statement) => {
        sqlite.exec(statement);
      },
      first: async (query) => sqlite.prepare(query).get() as Record<string, unknown> | undefined,
      all: async (query) => sqlite.prepare(query).all() as Record<string, unknown>[],
      close: async () => {
        // The fill went to the write-ahead log (gigabytes at ten million journals); copied into
        // the database here, so that the service's next write does not do it meanwhile.
        sqlite.pragma('wal_checkpoint(TRUNCATE)');
        sqlite.close();
      },
    };
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  return {
    run: async (statement) => {
      await client.query(statement);
    },
    first: async (query) => (await client.query(query)).rows[0] as Record<string, unknown> | undefined,
    all: async (query) => (await client.query(query)).rows as Record<string, unknown>[],
    close: () => client.end(),
  };
}

/** A FROM item of the numbers 0 to count - 1, as column `i`, on either dialect. */
export function series(dialect: Dialect, count: number): string {
  return dialect === 'postgres'
    ? `generate_series(0, ${count - 1}) as n(i)`
    : `(with recursive s(i) as (select 0 union all select i + 1 from s where i < ${count - 1}) select i from s) as n`;
}

/** Signs in to the interface with e-mail and password; returns the cookie. */
export async function signIn(service: BenchService, password: string): Promise<string> {
  const response = await fetch(`${service.url}/admin/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email: ADMIN_EMAIL, password }),
    redirect: 'manual',
  });
  const cookie = response.headers
    .getSetCookie()
    .map((c) => c.split(';')[0] ?? '')
    .find((c) => c.startsWith(`${SESSION_COOKIE}=`));
  if (response.status !== 303 || cookie === undefined) {
    throw new Error(
      `sign-in: expected 303 with a session cookie, got ${response.status}: ${await response.text()}`,
    );
  }
  return cookie;
}
