import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import type { ChunkWrite } from '../../src/modules/ingestion/store.js';
import { acceptedRecordsOf } from '../../src/modules/ingestion/store.js';
import { createIngestionStore } from '../../src/storage/ingestion-store.js';
import { migrateToLatest } from '../../src/storage/migrations/index.js';
import { openStore, type Store } from '../../src/storage/store.js';

/**
 * The database the suite runs on: `TEST_DATABASE_URL` (a `postgres://` server URL, or
 * `sqlite:...`), SQLite in memory by default. vitest.config.ts sets it per project, so one run
 * covers both dialects (`integration-sqlite`, `integration-postgres`).
 */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'sqlite::memory:';
export const TEST_DIALECT = TEST_DATABASE_URL.startsWith('postgres') ? 'postgres' : 'sqlite';

/**
 * A URL of a brand-new empty database: on PostgreSQL a database made for this test (dropped by
 * `dropTestDatabase`), on SQLite a fresh in-memory store or a temporary file when `file` is set
 * (needed when two processes share it).
 */
export async function createTestDatabaseUrl(options: { file?: boolean } = {}): Promise<string> {
  if (TEST_DIALECT === 'sqlite') {
    if (!options.file && TEST_DATABASE_URL === 'sqlite::memory:') return 'sqlite::memory:';
    return `sqlite:/tmp/ledgerflow-test-${randomBytes(6).toString('hex')}/ledgerflow.db`;
  }
  const name = `lf_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops a database made by `createTestDatabaseUrl` (PostgreSQL only; SQLite needs nothing). */
export async function dropTestDatabase(url: string): Promise<void> {
  if (!url.startsWith('postgres')) return;
  const name = new URL(url).pathname.slice(1);
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name} with (force)`);
  } finally {
    await admin.end();
  }
}

/** The migrations' folder: what a migrated template is made from. */
const MIGRATIONS_DIR = new URL('../../src/storage/migrations/', import.meta.url);

/**
 * The name of the PostgreSQL database migrated to the migrations as their files are now, made
 * once by whichever test needs it first (an advisory lock keeps the workers of a run from making
 * it twice). A new database copied from it is a migrated store in one statement, instead of
 * every migration run again for each test (about a fifth of a second each, more on a loaded
 * machine). Edited migrations make another template: its name is the hash of their files.
 */
let template: Promise<string> | undefined;

function migratedTemplate(): Promise<string> {
  template ??= makeTemplate();
  return template;
}

async function makeTemplate(): Promise<string> {
  const digest = createHash('sha256');
  for (const file of readdirSync(MIGRATIONS_DIR).sort())
    digest.update(file).update(readFileSync(new URL(file, MIGRATIONS_DIR)));
  const name = `lf_template_${digest.digest('hex').slice(0, 16)}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query('select pg_advisory_lock(hashtext($1))', [name]);
    const found = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) {
      // Made under another name and renamed once migrated: a template is whole or absent.
      const making = `${name}_making`;
      await admin.query(`drop database if exists ${making} with (force)`);
      await admin.query(`create database ${making}`);
      const url = new URL(TEST_DATABASE_URL);
      url.pathname = `/${making}`;
      const store = openStore(url.toString());
      try {
        await migrateToLatest(store);
      } finally {
        await store.close();
      }
      await admin.query(`alter database ${making} rename to ${name}`);
    }
  } finally {
    await admin.query('select pg_advisory_unlock(hashtext($1))', [name]).catch(() => {});
    await admin.end();
  }
  return name;
}

/**
 * A URL of a fresh database already migrated: on PostgreSQL a copy of the migrated template
 * (dropped by `dropTestDatabase`), on SQLite as `createTestDatabaseUrl`, migrated by the caller.
 */
async function migratedTestDatabaseUrl(options: { file?: boolean }): Promise<string> {
  if (TEST_DIALECT === 'sqlite') return createTestDatabaseUrl(options);
  const from = await migratedTemplate();
  const name = `lf_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`create database ${name} template ${from}`);
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A migrated store on a fresh database, and a function that closes and drops it. */
export async function createTestStore(
  options: { file?: boolean } = {},
): Promise<{ store: Store; url: string; dispose(): Promise<void> }> {
  const url = await migratedTestDatabaseUrl(options);
  const store = openStore(url);
  // Nothing left to run on a copy of the template; SQLite's stores are migrated here.
  await migrateToLatest(store);
  return {
    store,
    url,
    dispose: async () => {
      await store.close();
      await dropTestDatabase(url);
    },
  };
}

/** Sessions opened straight in a store stay open for an hour, longer than any test or benchmark. */
const SESSION_TIMEOUT_MS = 3_600_000;

/**
 * Opens an ingestion session straight in a store, as the service's `POST /api/v1/ingestions`
 * would, so that chunks and records written by hand (a benchmark's limit, a storage test) have
 * their session row.
 */
export async function insertOpenSession(
  store: Store,
  ingestionId: string,
  namespace: string,
  entity: string,
): Promise<void> {
  const at = new Date().toISOString();
  await createIngestionStore(store).insertSession({
    ingestionId,
    ingestionName: null,
    namespace,
    entity,
    state: 'pending',
    timeout: 'PT1H',
    timeoutMs: SESSION_TIMEOUT_MS,
    openedBy: 'bench',
    openedOn: at,
    closedBy: null,
    closedOn: null,
    closeReason: null,
    lastActivityOn: at,
    expiresAtMs: Date.now() + SESSION_TIMEOUT_MS,
    chunks: 0,
    apiCalls: 0,
    totalRows: 0,
    successRows: 0,
    failedRows: 0,
    processedRows: 0,
    processingFailedRows: 0,
  });
}

/**
 * A closed session row of a `ledger` entity (`journal` unless named) with the columns every
 * schema since migration 0001 has, for migration tests that fill a store migrated to an older
 * migration (`insertOpenSession` writes today's columns).
 */
export function closedSessionRow(
  ingestionId: string,
  at: string,
  entity = 'journal',
): Record<string, unknown> {
  return {
    ingestion_id: ingestionId,
    ingestion_name: null,
    namespace: 'ledger',
    entity,
    state: 'closed',
    timeout: 'PT15M',
    timeout_ms: 900_000,
    opened_by: 'someone@example.test',
    opened_on: at,
    closed_by: 'someone@example.test',
    closed_on: at,
    close_reason: 'manual',
    last_activity_on: at,
    expires_at_ms: Date.parse(at) + 900_000,
    chunk_seq_next: 0,
    chunks: 0,
    api_calls: 1,
    total_rows: 0,
    success_rows: 0,
    failed_rows: 0,
    processed_rows: 0,
    processing_failed_rows: 0,
  };
}

/**
 * A chunk of `records` business events for `ingestionId`, all accepted and waiting for
 * processing, as `commitChunk` takes it; no configuration stored (revision 0).
 */
export function chunkWriteOf(ingestionId: string, records: number, at: string): ChunkWrite {
  return {
    ingestionId,
    namespace: 'ledger',
    entity: 'businessEvent',
    chunkName: null,
    idempotencyKey: null,
    bodySha256: null,
    accepted: acceptedRecordsOf(
      Array.from({ length: records }, (_, index) => ({ index, value: { n: index } })),
    ),
    failed: [],
    failedKept: [],
    failedOmitted: 0,
    totalRows: records,
    rejected: false,
    awaitsProcessing: true,
    reference: 'test',
    at,
    nowMs: Date.parse(at),
    revision: 0,
  };
}
