import pg from 'pg';

/** The PostgreSQL server `npm test` looks for when `TEST_DATABASE_URL` is not set. */
export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** How long the default server has to answer before the integration tests run on SQLite only. */
const POSTGRES_ANSWER_TIMEOUT_MS = 1_000;

/** The stores the integration tests run on: SQLite always, PostgreSQL when one answers. */
export interface IntegrationDialects {
  sqliteUrl: string;
  postgresUrl: string | undefined;
}

/** A URL fit for the console: the password, if any, hidden. */
function shown(url: string): string {
  const parsed = new URL(url);
  if (parsed.password !== '') parsed.password = '***';
  return parsed.toString();
}

/** Undefined when the server at `url` answers `select 1` in time, else why not. */
async function unanswered(url: string): Promise<string | undefined> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: POSTGRES_ANSWER_TIMEOUT_MS,
    query_timeout: POSTGRES_ANSWER_TIMEOUT_MS,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Where the decision is kept: Vitest loads vitest.config.ts once per project of the run. */
const DECIDED = Symbol.for('ledgerflow.test.integrationDialects');

/**
 * Decides, once per `vitest` run, which stores the integration tests run on, and says so on the
 * console (`decide` does the work, this keeps its answer for the later loads of the config).
 */
export function integrationDialects(): Promise<IntegrationDialects> {
  const kept = globalThis as { [DECIDED]?: Promise<IntegrationDialects> };
  kept[DECIDED] ??= decide(process.env.TEST_DATABASE_URL);
  return kept[DECIDED];
}

/**
 * Which stores the integration tests run on. `TEST_DATABASE_URL` set to a PostgreSQL URL must answer (CI sets it, so it never falls
 * back to SQLite alone in silence); set to a SQLite URL it asks for SQLite only; unset, the
 * default server is tried for a second and SQLite alone is used, with a notice, when it does not
 * answer. Each test file makes its own database on the server (test/helpers/store.ts).
 */
async function decide(requested: string | undefined): Promise<IntegrationDialects> {
  if (requested?.startsWith('sqlite')) {
    console.log(`tests: integration tests on SQLite only (${requested}), as TEST_DATABASE_URL asks`);
    return { sqliteUrl: requested, postgresUrl: undefined };
  }
  if (requested !== undefined && requested !== '') {
    if (!requested.startsWith('postgres')) {
      throw new Error(`TEST_DATABASE_URL must be a postgres:// or sqlite: URL, not ${requested}`);
    }
    const why = await unanswered(requested);
    if (why !== undefined) {
      throw new Error(`TEST_DATABASE_URL (${shown(requested)}) does not answer: ${why}`);
    }
    console.log(`tests: integration tests on SQLite and on PostgreSQL (${shown(requested)})`);
    return { sqliteUrl: 'sqlite::memory:', postgresUrl: requested };
  }
  const why = await unanswered(DEFAULT_POSTGRES_URL);
  if (why !== undefined) {
    console.log(
      `tests: integration tests on SQLITE ONLY: no PostgreSQL answers at ${DEFAULT_POSTGRES_URL} (${why}); ` +
        'start one there or set TEST_DATABASE_URL to run them on PostgreSQL too',
    );
    return { sqliteUrl: 'sqlite::memory:', postgresUrl: undefined };
  }
  console.log(`tests: integration tests on SQLite and on PostgreSQL (${DEFAULT_POSTGRES_URL})`);
  return { sqliteUrl: 'sqlite::memory:', postgresUrl: DEFAULT_POSTGRES_URL };
}
