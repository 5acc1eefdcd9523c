import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { revisionDocumentText, sectionCounts } from '../../src/modules/configuration/document.js';
import type { Configuration } from '../../src/modules/configuration/model.js';
import { ConfigurationRevisions } from '../../src/modules/configuration/revisions.js';
import { createConfigurationStore } from '../../src/storage/configuration-store.js';
import { migrateTo, migrateToLatest } from '../../src/storage/migrations/index.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { closedSessionRow, createTestDatabaseUrl, dropTestDatabase } from '../helpers/store.js';

const ingestionId = `in_${'d'.repeat(32)}`;
const AT = '2026-11-20T10:00:00.000Z';
const UPLOADED_AT = '2026-11-19T08:30:00.000Z';

type Rows = Kysely<Record<string, Record<string, unknown>>>;

/**
 * Migration 0017 on a database that holds data: the stored configuration becomes its revision's
 * row (dated and signed by the audit log), and the journals and processing errors stored get
 * that revision. Runs on the dialect of TEST_DATABASE_URL.
 */
describe('migration 0017: configuration revisions, backfilled from the stored configuration', () => {
  let url: string;
  let store: Store;
  const configuration = realisticConfiguration().configuration as unknown as Configuration;
  beforeAll(async () => {
    url = await createTestDatabaseUrl();
    store = openStore(url);
    await migrateTo(store, '0016-session-counters');
    const db = store.db as unknown as Rows;
    await db
      .insertInto('configuration')
      .values({
        id: 1,
        revision: 3,
        version: 'v20230211',
        document: JSON.stringify(configuration),
        updated_at: UPLOADED_AT,
        updated_by: 'row@example.test',
      })
      .execute();
    for (const [revision, actor, at] of [
      [2, 'older@example.test', '2026-11-18T00:00:00.000Z'],
      [3, 'admin@example.test', UPLOADED_AT],
    ] as const) {
      await db
        .insertInto('audit_log')
        .values({
          at,
          actor,
          action: 'configuration.upload',
          version: 'v20230211',
          revision,
          sections: '{}',
          deleted: null,
        })
        .execute();
    }
    await db
      .insertInto('ingestions')
      .values(closedSessionRow(ingestionId, AT, 'businessEvent'))
      .execute();
    await db
      .insertInto('journals')
      .values(
        [1, 2].map((n) => ({
          journal_id: `j-${n}`,
          ingestion_id: ingestionId,
          record_id: n,
          core_date: '2026-11-20',
          original_core_date: null,
          journal_type: 'PERM',
          accounting_config: 'IFRS',
          node: '{}',
          posted: 1,
          reverses: null,
          reversed_by: null,
          origin_journal_id: null,
          line_count: 0,
          created_at: AT,
        })),
      )
      .execute();
    await db
      .insertInto('processing_errors')
      .values({
        ingestion_id: ingestionId,
        record_id: 3,
        namespace: 'ledger',
        entity: 'businessEvent',
        code: 'no-account',
        message: 'no account',
        record: '{}',
        created_at: AT,
      })
      .execute();
    await migrateToLatest(store);
  });
  afterAll(async () => {
    await store?.close();
    await dropTestDatabase(url);
  });

  it('makes the stored configuration its revision, dated and signed by the audit log', async () => {
    const revisions = new ConfigurationRevisions(
      createConfigurationStore(store),
      new ManualClock(new Date(AT)),
    );
    const listed = await revisions.list(0, 10);
    expect(listed.total).toBe(1);
    const text = revisionDocumentText(configuration);
    expect(listed.rows).toEqual([
      {
        revision: 3,
        at: UPLOADED_AT,
        actor: 'admin@example.test',
        action: 'upload',
        version: 'v20230211',
        sha256: createHash('sha256').update(text).digest('hex'),
        sections: sectionCounts(configuration),
      },
    ]);
    const diff = await revisions.diff(3);
    expect(diff.from).toBeNull();
    expect(diff.changes.length).toBeGreaterThan(0);
  });

  it('gives the stored journals and processing errors that revision', async () => {
    const journals = await store.db.selectFrom('journals').select('revision').execute();
    expect(journals.map((j) => Number(j.revision))).toEqual([3, 3]);
    const errors = await store.db.selectFrom('processing_errors').select('revision').execute();
    expect(errors.map((e) => Number(e.revision))).toEqual([3]);
  });

  it('leaves an empty database without revisions', async () => {
    const emptyUrl = await createTestDatabaseUrl();
    const empty = openStore(emptyUrl);
    try {
      await migrateToLatest(empty);
      const rows = await empty.db.selectFrom('configuration_revisions').selectAll().execute();
      expect(rows).toEqual([]);
    } finally {
      await empty.close();
      await dropTestDatabase(emptyUrl);
    }
  });
});
