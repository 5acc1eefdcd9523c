import pg from 'pg';
import { errorCodeOf, messageOf, StoreUnavailableError } from '../errors.js';

/** How long start-up waits for PostgreSQL to accept a connection before saying it cannot. */
const POSTGRES_CONNECT_TIMEOUT_MS = 10_000;
/** The database every PostgreSQL server has, used to create the service's own one. */
const POSTGRES_MAINTENANCE_DATABASE = 'postgres';

/** SQLSTATE and Node error codes that `ensureDatabase` tells apart. */
const DATABASE_MISSING = '3D000';
const DATABASE_EXISTS = '42P04';
const UNIQUE_VIOLATION = '23505';
const INSUFFICIENT_PRIVILEGE = '42501';
const LOGIN_REFUSED = new Set(['28P01', '28000']);
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** A PostgreSQL identifier in double quotes, any double quote in it doubled. */
function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * The statement that creates the service's database: its text compares byte by byte (the `C`
 * collation, from `template0`, the one template any collation may be copied from). Every key and
 * sort column of the store is text, and every index insert and lookup compares it: under a
 * language's collation each comparison goes through the C library's `strcoll`, under `C` it is
 * a `memcmp` (ingestion about a tenth faster, processing a few per cent,
 * docs/adr/0035-postgresql-c-collation.md). Text then sorts by code point, as it does on SQLite.
 * The character classes (`LC_CTYPE`) stay the server's.
 */
export function createDatabaseStatement(database: string): string {
  return `CREATE DATABASE ${quoteIdentifier(database)} TEMPLATE template0 LC_COLLATE 'C'`;
}

/** Connects, runs `work`, and always disconnects; connection failures become one-line errors. */
async function withClient<T>(url: URL, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({
    connectionString: url.toString(),
    connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
  });
  // A connection the server drops while we hold it must not end the process.
  client.on('error', () => {});
  try {
    await client.connect();
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Makes sure the database named by a `postgres://` `DATABASE_URL` exists, before `openStore` and
 * `migrateToLatest` use it. When it does not, connects to the `postgres` maintenance database of
 * the same server as the same user and creates it (`createDatabaseStatement`, the name quoted
 * as an identifier); another instance creating it at the same time counts as existing. Returns
 * whether this call created it. SQLite URLs need nothing (`openStore` creates the file) and
 * return `{ created: false }`. Errors: `StoreUnavailableError`, whose one-line message says
 * what to do, when the server cannot be reached, refuses the login, or the database is missing
 * and the user may not create it.
 */
export async function ensureDatabase(databaseUrl: string): Promise<{ created: boolean; database: string }> {
  if (databaseUrl.startsWith('sqlite:'))
    return { created: false, database: databaseUrl.slice('sqlite:'.length) };
  const url = new URL(databaseUrl);
  const database =
    decodeURIComponent(url.pathname.slice(1)) || decodeURIComponent(url.username) || 'postgres';
  const server = `${url.hostname || 'localhost'}:${url.port || '5432'}`;
  const user = decodeURIComponent(url.username) || 'the default user';
  const explain = (error: unknown, what: string): StoreUnavailableError => {
    const code = errorCodeOf(error);
    if (code !== undefined && LOGIN_REFUSED.has(code)) {
      return new StoreUnavailableError(
        `PostgreSQL at ${server} refused the login of ${user} (${messageOf(error)}); check the user and password in DATABASE_URL`,
      );
    }
    if ((code !== undefined && UNREACHABLE.has(code)) || /timeout|terminated/i.test(messageOf(error))) {
      return new StoreUnavailableError(
        `cannot reach PostgreSQL at ${server} (${code ?? messageOf(error)}); is the server running, and are the host and port in DATABASE_URL right?`,
      );
    }
    return new StoreUnavailableError(`${what} on PostgreSQL at ${server} failed: ${messageOf(error)}`);
  };
  try {
    await withClient(url, async () => undefined);
    return { created: false, database };
  } catch (error) {
    if (errorCodeOf(error) !== DATABASE_MISSING) throw explain(error, `opening database "${database}"`);
  }
  const maintenance = new URL(url);
  maintenance.pathname = `/${POSTGRES_MAINTENANCE_DATABASE}`;
  try {
    await withClient(maintenance, (client) => client.query(createDatabaseStatement(database)));
    return { created: true, database };
  } catch (error) {
    const code = errorCodeOf(error);
    if (code === DATABASE_EXISTS || code === UNIQUE_VIOLATION) return { created: false, database };
    if (code === INSUFFICIENT_PRIVILEGE) {
      throw new StoreUnavailableError(
        `database "${database}" does not exist on PostgreSQL at ${server}, and ${user} may not create it; create it (createdb --template=template0 --lc-collate=C ${database}) or grant ${user} CREATEDB, then start again`,
      );
    }
    throw explain(error, `creating database "${database}" (it does not exist)`);
  }
}
