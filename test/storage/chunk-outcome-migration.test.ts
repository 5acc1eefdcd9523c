import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices } from '../../src/composition/services.js';
import { buildApp } from '../../src/http/app.js';
import { migrateTo, migrateToLatest } from '../../src/storage/migrations/index.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { testClock } from '../helpers/clock.js';
import { createTestDatabaseUrl, dropTestDatabase } from '../helpers/store.js';

const ingestionId = `in_${'a'.repeat(32)}`;
const createdAt = '2026-03-01T10:00:00.000Z';
const failed = [
  {
    index: 1,
    record: { zeta: 1, alpha: { nested: [1, 'two', null] }, amount: 'ten' },
    errors: [{ field: 'amount', code: 'invalid-decimal', message: 'must be a decimal' }],
  },
];
const rejectedBody = JSON.stringify({ data: [{ ok: true }, failed[0]?.record] });
const storedBody = JSON.stringify({ chunkName: 'partial', data: [{ ok: true }, failed[0]?.record] });
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The answers migration 0001 stored verbatim, as the service rendered them then. */
const oldRejected = {
  type: 'urn:ledgerflow:problem:chunk-invalid',
  title: 'Records of the chunk failed validation',
  status: 400,
  detail:
    '1 of 2 records failed validation; nothing of the chunk was kept (send ?partial=true to keep the valid records)',
  instance: `/api/v1/ingestions/${ingestionId}`,
  timestamp: '2026-03-01T10:00:00.123Z',
  reference: 'b1946ac9-2f4a-4b7e-9c1d-6f2e1d3a4b5c',
  ingestionId,
  chunkName: null,
  chunkSeq: 1,
  acceptedRows: 0,
  failedRows: 2,
  errors: failed,
};
const oldStored = {
  ingestionId,
  chunkName: 'partial',
  chunkSeq: 2,
  acceptedRows: 1,
  failedRows: 1,
  errors: failed,
};

/**
 * Migration 0003 turns the rendered answers stored by 0001 into chunk outcomes; a replay of an
 * old chunk then renders exactly the answer given before (the 400 with its reference and
 * timestamp). Runs on the dialect of TEST_DATABASE_URL.
 */
describe('migration 0003: stored chunk answers become outcomes', () => {
  let url: string;
  let store: Store;
  beforeAll(async () => {
    url = await createTestDatabaseUrl();
    store = openStore(url);
    await migrateTo(store, '0001-initial');
    const db = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    await db
      .insertInto('ingestions')
      .values({
        ingestion_id: ingestionId,
        ingestion_name: null,
        namespace: 'loans',
        entity: 'loanTransaction',
        state: 'closed',
        timeout: 'PT15M',
        timeout_ms: 900_000,
        opened_by: 'someone@example.test',
        opened_on: createdAt,
        closed_by: 'someone@example.test',
        closed_on: createdAt,
        close_reason: 'manual',
        last_activity_on: createdAt,
        expires_at_ms: Date.parse(createdAt) + 900_000,
        chunk_seq_next: 3,
        chunks: 3,
        api_calls: 4,
        total_rows: 5,
        success_rows: 2,
        failed_rows: 3,
        processed_rows: 2,
        processing_failed_rows: 0,
      })
      .execute();
    const chunk = (
      seq: number,
      key: string | null,
      body: string | null,
      status: number,
      answer: unknown,
    ) => ({
      ingestion_id: ingestionId,
      chunk_seq: seq,
      chunk_name: null,
      idempotency_key: key,
      body_sha256: body === null ? null : sha256(body),
      status_code: status,
      response: JSON.stringify(answer),
      accepted_rows: (answer as { acceptedRows: number }).acceptedRows,
      failed_rows: (answer as { failedRows: number }).failedRows,
      created_at: createdAt,
    });
    await db
      .insertInto('chunks')
      .values([
        chunk(1, 'rejected-1', rejectedBody, 400, oldRejected),
        { ...chunk(2, 'stored-2', storedBody, 201, oldStored), chunk_name: 'partial' },
        chunk(3, null, null, 201, { ...oldStored, chunkSeq: 3, chunkName: null, errors: [], failedRows: 0 }),
      ])
      .execute();
    await migrateToLatest(store);
  });
  afterAll(async () => {
    await store?.close();
    if (url !== undefined) await dropTestDatabase(url);
  });

  it('keeps the outcome in columns and drops the rendered answer', async () => {
    const rows = await store.db.selectFrom('chunks').selectAll().orderBy('chunk_seq').execute();
    expect(
      rows.map((row) => ({
        seq: Number(row.chunk_seq),
        rejected: row.rejected,
        failed: JSON.parse(row.failed_records) as unknown,
        reference: row.answer_reference,
        answeredAt: row.answered_at,
      })),
    ).toEqual([
      { seq: 1, rejected: 1, failed, reference: oldRejected.reference, answeredAt: oldRejected.timestamp },
      { seq: 2, rejected: 0, failed, reference: null, answeredAt: createdAt },
      { seq: 3, rejected: 0, failed: [], reference: null, answeredAt: createdAt },
    ]);
    // The records as sent keep their members in order (PostgreSQL `json`, not `jsonb`).
    expect(rows[0]?.failed_records).toBe(JSON.stringify(failed));
    expect(Object.keys(rows[0] ?? {})).not.toContain('response');
    expect(Object.keys(rows[0] ?? {})).not.toContain('status_code');
  });

  it('takes the chunk and rows of the rejected chunk out of the session counters (0009)', async () => {
    // Stored before: 3 chunks, 5 rows, 3 failed, of which the rejected chunk 1 had 2 rows.
    const session = await store.db
      .selectFrom('ingestions')
      .select(['chunks', 'total_rows', 'success_rows', 'failed_rows', 'api_calls'])
      .where('ingestion_id', '=', ingestionId)
      .executeTakeFirstOrThrow();
    expect(Object.fromEntries(Object.entries(session).map(([name, value]) => [name, Number(value)]))).toEqual(
      {
        chunks: 2,
        total_rows: 3,
        success_rows: 2,
        failed_rows: 1,
        api_calls: 4,
      },
    );
  });

  it('replays an old answer exactly as it was given', async () => {
    const clock = testClock();
    const services = createServices(store, clock, {
      accessTokenTtlSeconds: 300,
      refreshTokenTtlSeconds: 1800,
      businessDate: undefined,
    });
    const app = await buildApp({ store, services, logger: false });
    try {
      const email = `migration-${Date.now()}@example.test`;
      await services.access.createUser({ email, roles: ['api-client'] }, { actor: { user: 'test-setup' } });
      const { answer: credential } = await services.access.createCredential(
        { ownerEmail: email },
        { actor: { user: 'test-setup' } },
      );
      const { access_token: token } = await services.tokens.clientCredentialsGrant(credential);
      const replay = (key: string, payload: string) =>
        app.inject({
          method: 'POST',
          url: `/api/v1/ingestions/${ingestionId}`,
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'idempotency-key': key,
          },
          payload,
        });
      const rejected = await replay('rejected-1', rejectedBody);
      expect(rejected.statusCode).toBe(400);
      expect(rejected.headers['idempotent-replayed']).toBe('true');
      expect(rejected.headers['content-type']).toContain('application/problem+json');
      expect(rejected.body).toBe(JSON.stringify(oldRejected));
      const stored = await replay('stored-2', storedBody);
      expect(stored.statusCode).toBe(201);
      expect(stored.headers['idempotent-replayed']).toBe('true');
      expect(stored.body).toBe(JSON.stringify(oldStored));
      expect((await replay('stored-2', rejectedBody)).statusCode).toBe(422);
    } finally {
      await app.close();
    }
  });
});
