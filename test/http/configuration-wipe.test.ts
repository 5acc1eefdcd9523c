import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/storage/schema.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { businessEvent, loanRecord } from '../helpers/records.js';

const BULK = '/api/v1/configuration/bulk';

/** Every table a configuration upload or deletion empties. */
const PROCESSING_TABLES = [
  'ingestions',
  'chunks',
  'records',
  'record_errors',
  'processing_errors',
  'journals',
  'journal_lines',
] as const satisfies readonly (keyof Database)[];

/** Tables that are not configuration nor processing data: they survive every wipe. */
const KEPT_TABLES = [
  'users',
  'credentials',
  'token_families',
  'oauth_tokens',
] as const satisfies readonly (keyof Database)[];

/**
 * What a configuration upload or deletion wipes, counted and audited, and its dry run, which
 * changes nothing (business date pinned to Friday 2026-11-20, as the fixture's calendars need).
 */
describe('configuration upload and deletion: what they wipe, and their dry runs', () => {
  let t: TestApp;
  let operator: string;
  beforeAll(async () => {
    t = await createTestApp({ businessDate: '2026-11-20' });
    operator = await t.tokenFor(['bulk-operator']);
  });
  afterAll(async () => t?.close());

  const call = (method: 'PUT' | 'DELETE' | 'GET', url: string, payload?: unknown) =>
    t.call(operator, { method, url, ...(payload === undefined ? {} : { payload: payload as object }) });

  async function rowCounts(tables: readonly (keyof Database)[]): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const table of tables) {
      const row = await t.store.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      counts[table] = Number(row.n);
    }
    return counts;
  }

  async function ingest(namespace: string, entity: string, data: unknown[], query = ''): Promise<void> {
    const opened = await t.call(operator, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace, entity },
    });
    expect(opened.statusCode, opened.body).toBe(201);
    const chunk = await t.call(operator, {
      method: 'POST',
      url: `/api/v1/ingestions/${opened.json().ingestionId}${query}`,
      payload: { data },
    });
    expect(chunk.statusCode, chunk.body).toBe(201);
  }

  /**
   * A fresh configuration with two sessions: business events that become journals (one of an
   * unknown event type, so a processing error), and loan transactions with one rejected record.
   */
  async function populate(): Promise<void> {
    expect((await call('PUT', BULK, realisticConfiguration())).statusCode).toBe(200);
    await ingest('ledger', 'businessEvent', [
      businessEvent({ amount: '100.00' }),
      businessEvent({ amount: '-25.50' }),
      businessEvent({ eventType: 'NOT_CONFIGURED' }),
    ]);
    await ingest(
      'loans',
      'loanTransaction',
      [loanRecord(1), loanRecord(2), loanRecord(3, { amount: '12,5' })],
      '?partial=true',
    );
    expect(await t.services.processor.drain()).toBeGreaterThan(0);
  }

  /** The counts the API reports, read from the tables. */
  async function expectedCounts() {
    const rows = await rowCounts(PROCESSING_TABLES);
    return {
      ingestions: rows.ingestions,
      records: rows.records,
      journals: rows.journals,
      journalLines: rows.journal_lines,
      processingErrors: rows.processing_errors,
    };
  }

  async function latestAudit() {
    const page = (await call('GET', '/api/v1/audit-log?limit=1')).json();
    return { total: page.totalSize as number, entry: page.data[0] };
  }

  it('fills every processing table, so the counts below are not trivially zero', async () => {
    await populate();
    const rows = await rowCounts(PROCESSING_TABLES);
    for (const table of PROCESSING_TABLES) expect(rows[table], table).toBeGreaterThan(0);
    expect(await expectedCounts()).toEqual({
      ingestions: 2,
      records: 5,
      // Two business events and two loan records (through the fixture's flow), two journals each.
      journals: 8,
      journalLines: 16,
      processingErrors: 1,
    });
  });

  it('dry-runs an upload: the same checks, the counts of what would go, and no change', async () => {
    await populate();
    const before = await rowCounts([...PROCESSING_TABLES, ...KEPT_TABLES]);
    const configurationBefore = (await call('GET', BULK)).json().configuration;
    const auditBefore = await latestAudit();

    const changed = realisticConfiguration();
    changed.configuration.businessEventTypes = [];
    changed.configuration.postingComponentIdentifications = [];
    const dryRun = await call('PUT', `${BULK}?dryRun=true`, changed);
    expect(dryRun.statusCode, dryRun.body).toBe(200);
    expect(dryRun.json()).toEqual({
      version: 'v20230211',
      sections: expect.objectContaining({ businessEventTypes: 0, nodes: 2 }),
      wouldDelete: await expectedCounts(),
      // Rules change, entities do not: the stored records still conform, so it could keep them.
      keepProcessingData: { possible: true },
    });
    expect(dryRun.json()).not.toHaveProperty('deleted');

    const broken = realisticConfiguration();
    (broken.configuration.postingComponents as Record<string, unknown>[])[0] = {
      ...(broken.configuration.postingComponents as Record<string, unknown>[])[0],
      journalType: 'NOPE',
    };
    const refusedDryRun = await call('PUT', `${BULK}?dryRun=true`, broken);
    const refused = await call('PUT', BULK, broken);
    expect(refusedDryRun.statusCode).toBe(400);
    expect(refusedDryRun.json().errors).toEqual(refused.json().errors);

    expect(await rowCounts([...PROCESSING_TABLES, ...KEPT_TABLES])).toEqual(before);
    expect((await call('GET', BULK)).json().configuration).toEqual(configurationBefore);
    expect(await latestAudit()).toEqual(auditBefore);
  });

  it('dry-runs a deletion: the counts of what would go, and no change', async () => {
    await populate();
    const before = await rowCounts([...PROCESSING_TABLES, ...KEPT_TABLES]);
    const configurationBefore = (await call('GET', BULK)).json().configuration;
    const auditBefore = await latestAudit();
    const dryRun = await call('DELETE', `${BULK}?dryRun=true`);
    expect(dryRun.statusCode).toBe(200);
    expect(dryRun.json()).toEqual({ wouldDelete: await expectedCounts() });
    expect(await rowCounts([...PROCESSING_TABLES, ...KEPT_TABLES])).toEqual(before);
    expect((await call('GET', BULK)).json().configuration).toEqual(configurationBefore);
    expect(await latestAudit()).toEqual(auditBefore);
  });

  it('an upload answers and audits exactly what it deleted; users, credentials, tokens and the audit log stay', async () => {
    await populate();
    const expected = await expectedCounts();
    const kept = await rowCounts(KEPT_TABLES);
    const auditBefore = await latestAudit();
    const response = await call('PUT', BULK, realisticConfiguration());
    expect(response.statusCode).toBe(200);
    expect(response.json().deleted).toEqual(expected);
    expect(response.json()).not.toHaveProperty('wouldDelete');
    for (const [table, count] of Object.entries(await rowCounts(PROCESSING_TABLES))) {
      expect(count, table).toBe(0);
    }
    expect(await rowCounts(KEPT_TABLES)).toEqual(kept);
    const audit = await latestAudit();
    expect(audit.total).toBe(auditBefore.total + 1);
    expect(audit.entry).toMatchObject({ action: 'configuration.upload', deleted: expected });
  });

  it('a deletion answers 204 and audits exactly what it deleted; users, credentials and tokens stay', async () => {
    await populate();
    const expected = await expectedCounts();
    const kept = await rowCounts(KEPT_TABLES);
    const response = await call('DELETE', BULK);
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
    for (const [table, count] of Object.entries(await rowCounts(PROCESSING_TABLES))) {
      expect(count, table).toBe(0);
    }
    expect(await rowCounts(KEPT_TABLES)).toEqual(kept);
    expect((await latestAudit()).entry).toMatchObject({ action: 'configuration.delete', deleted: expected });
    // dryRun=false is a real deletion too, of nothing now.
    expect((await call('DELETE', `${BULK}?dryRun=false`)).statusCode).toBe(204);
    expect((await latestAudit()).entry.deleted).toEqual({
      ingestions: 0,
      records: 0,
      journals: 0,
      journalLines: 0,
      processingErrors: 0,
    });
  });

  it('refuses an unknown or malformed query parameter and changes nothing', async () => {
    await populate();
    const before = await rowCounts(PROCESSING_TABLES);
    for (const [method, url] of [
      ['PUT', `${BULK}?dryrun=true`],
      ['PUT', `${BULK}?dryRun=maybe`],
      ['DELETE', `${BULK}?dry-run=1`],
    ] as const) {
      const response = await call(method, url, method === 'PUT' ? realisticConfiguration() : undefined);
      expect(response.statusCode, url).toBe(400);
      expect(response.headers['content-type']).toContain('application/problem+json');
    }
    expect(await rowCounts(PROCESSING_TABLES)).toEqual(before);
  });

  it('lists the audit log newest first', async () => {
    await call('PUT', BULK, realisticConfiguration());
    await call('DELETE', BULK);
    await call('PUT', BULK, realisticConfiguration());
    const page = (await call('GET', '/api/v1/audit-log?limit=3')).json();
    expect(page.data.map((e: { action: string }) => e.action)).toEqual([
      'configuration.upload',
      'configuration.delete',
      'configuration.upload',
    ]);
    const ids = page.data.map((e: { id: number }) => e.id);
    const revisions = page.data.map((e: { revision: number }) => e.revision);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(revisions).toEqual([revisions[0], revisions[0] - 1, revisions[0] - 2]);
  });
});
