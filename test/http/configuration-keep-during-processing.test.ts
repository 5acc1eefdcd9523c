import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices, type ServicesProcessingHere } from '../../src/composition/services.js';
import { ManualClock } from '../../src/lib/clock.js';
import { acceptedRecordsOf } from '../../src/modules/ingestion/store.js';
import { createIngestionStore } from '../../src/storage/ingestion-store.js';
import { openStore, type Store } from '../../src/storage/store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { loanRecords } from '../helpers/records.js';
import { TEST_DIALECT } from '../helpers/store.js';

const BULK = '/api/v1/configuration/bulk';

/** Loan records per chunk and chunks ingested: a backlog that takes several claims to process. */
const RECORDS_PER_CHUNK = 400;
const CHUNKS = 6;

/**
 * A keep-data upload that lands while a backlog is being processed, by two processors on two
 * connections to one database (two instances): every record is processed exactly once, under
 * the revision its claim checked, and nothing accepted is lost. Business date pinned to Friday
 * 2026-11-20, as the fixture's calendars need.
 */
describe('a keep-data upload during processing loses and doubles nothing', () => {
  let t: TestApp;
  let other: { store: Store; services: ServicesProcessingHere };
  let operator: string;
  beforeAll(async () => {
    t = await createTestApp({ businessDate: '2026-11-20' }, { file: true });
    operator = await t.tokenFor(['bulk-operator']);
    const store = openStore(t.url);
    other = {
      store,
      services: createServices(
        store,
        new ManualClock(t.clock.now()),
        { accessTokenTtlSeconds: 300, refreshTokenTtlSeconds: 1800, businessDate: '2026-11-20' },
        { processing: 'here' },
      ),
    };
  });
  afterAll(async () => {
    await other?.services.close();
    await other?.store.close();
    await t?.close();
  });

  it('processes every record once, under the revision its claim checked', async () => {
    const put = await t.call(operator, { method: 'PUT', url: BULK, payload: realisticConfiguration() });
    expect(put.statusCode).toBe(200);
    const before = Number(/revision-(\d+)/.exec(String(put.headers.etag))?.[1]);
    for (let c = 0; c < CHUNKS; c += 1) {
      const opened = await t.call(operator, {
        method: 'POST',
        url: '/api/v1/ingestions',
        payload: { namespace: 'loans', entity: 'loanTransaction' },
      });
      const chunk = await t.call(operator, {
        method: 'POST',
        url: `/api/v1/ingestions/${opened.json().ingestionId}`,
        payload: { data: loanRecords(RECORDS_PER_CHUNK, c * RECORDS_PER_CHUNK) },
      });
      expect(chunk.statusCode, chunk.body).toBe(201);
    }
    const total = RECORDS_PER_CHUNK * CHUNKS;

    const draining = [t.services.processor.drain(), other.services.processor.drain()];
    // Lands once processing has begun and before it ends (checked below).
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const row = await t.store.db
        .selectFrom('journals')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      if (Number(row.n) > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const changed = realisticConfiguration();
    (changed.configuration.entities[0]?.attributes ?? []).push({
      name: 'note',
      type: { typeName: 'TEXT' },
    });
    const keep = await t.call(operator, {
      method: 'PUT',
      url: `${BULK}?keep=processing-data`,
      payload: changed,
    });
    expect(keep.statusCode, keep.body).toBe(200);
    await Promise.all(draining);
    await t.services.processor.drain();

    const waiting = await t.store.db
      .selectFrom('records')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('processing', '=', 1)
      .executeTakeFirstOrThrow();
    expect(Number(waiting.n)).toBe(0);
    const perRecord = await t.store.db
      .selectFrom('journals')
      .select(['record_id', (eb) => eb.fn.countAll().as('n')])
      .groupBy('record_id')
      .execute();
    // Each loan record makes two journals through the fixture's flow, and no record failed.
    expect(perRecord).toHaveLength(total);
    expect(perRecord.every((r) => Number(r.n) === 2)).toBe(true);
    const errors = await t.store.db
      .selectFrom('processing_errors')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(errors.n)).toBe(0);
    const revisions = await t.store.db.selectFrom('journals').select('revision').distinct().execute();
    // The upload landed mid-backlog: journals of both revisions.
    expect(revisions.map((r) => Number(r.revision)).sort()).toEqual([before, before + 1]);
    const session = await t.store.db
      .selectFrom('ingestions')
      .select((eb) => [
        eb.fn.sum<number>('processed_rows').as('processed'),
        eb.fn.sum<number>('total_rows').as('rows'),
      ])
      .executeTakeFirstOrThrow();
    expect(Number(session.processed)).toBe(total);
    expect(Number(session.rows)).toBe(total);
  });

  /** A session of loan records, and the write of one valid chunk of it as the service makes it. */
  async function loanChunkWrite() {
    const opened = await t.call(operator, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace: 'loans', entity: 'loanTransaction' },
    });
    const ingestionId = opened.json().ingestionId as string;
    const { revision } = await t.services.configuration.download('x');
    const write = {
      ingestionId,
      namespace: 'loans',
      entity: 'loanTransaction',
      chunkName: null,
      idempotencyKey: null,
      bodySha256: null,
      accepted: acceptedRecordsOf([{ index: 0, value: loanRecords(1)[0] }]),
      failed: [],
      failedKept: [],
      failedOmitted: 0,
      totalRows: 1,
      rejected: false,
      awaitsProcessing: true,
      reference: 'test',
      at: new Date().toISOString(),
      nowMs: Date.now(),
      revision,
    };
    const chunksOf = () =>
      t.store.db.selectFrom('chunks').selectAll().where('ingestion_id', '=', ingestionId).execute();
    /** What a chunk's write adds to: the session's records and counters, the entity's counters. */
    const writtenOf = async () => ({
      records: await t.store.db
        .selectFrom('records')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('ingestion_id', '=', ingestionId)
        .executeTakeFirstOrThrow(),
      session: await t.store.db
        .selectFrom('ingestions')
        .select(['chunks', 'total_rows', 'success_rows', 'api_calls'])
        .where('ingestion_id', '=', ingestionId)
        .executeTakeFirstOrThrow(),
      entity: await t.store.db
        .selectFrom('entity_record_counts')
        // Waiting or done: a processor may have processed the record since.
        .select(sql<number>`coalesce(sum(waiting + done), 0)`.as('records'))
        .where('namespace', '=', 'loans')
        .where('entity', '=', 'loanTransaction')
        .executeTakeFirstOrThrow(),
    });
    return { write, chunksOf, writtenOf };
  }

  it('writes nothing of a chunk validated under a revision that is no longer stored', async () => {
    const { write, chunksOf, writtenOf } = await loanChunkWrite();
    const ingestion = createIngestionStore(t.store);
    const before = await writtenOf();
    expect((await ingestion.commitChunk({ ...write, revision: write.revision - 1 })).kind).toBe('stale');
    expect(await chunksOf()).toEqual([]);
    expect(await writtenOf()).toEqual(before);
    expect((await ingestion.commitChunk(write)).kind).toBe('stored');
    const after = await writtenOf();
    expect(Number(after.records.n)).toBe(1);
    expect(Number(after.session.success_rows)).toBe(Number(before.session.success_rows) + 1);
    expect(Number(after.entity.records)).toBe(Number(before.entity.records) + 1);
  });

  it.skipIf(TEST_DIALECT !== 'postgres')(
    'finds stale a chunk whose write waited for an upload that changed the revision',
    async () => {
      const { write, chunksOf } = await loanChunkWrite();
      // An upload as the configuration store makes it: the chunks table locked, a new revision.
      // The chunk is written on a store of its own, whose connections no processor waits on.
      const upload = new pg.Client({ connectionString: t.url });
      const writer = openStore(t.url);
      await upload.connect();
      try {
        await upload.query('begin');
        await upload.query('lock table chunks in exclusive mode');
        await upload.query('update configuration set revision = revision + 1 where id = 1');
        const pending = createIngestionStore(writer).commitChunk(write);
        // The chunk's insert waits for the upload's lock on the chunks table (a processor's claim
        // would ask for a row share lock).
        const deadline = Date.now() + 20_000;
        for (;;) {
          const { rows } = await upload.query(
            `select count(*)::int as n from pg_locks
             where relation = 'chunks'::regclass and mode = 'RowExclusiveLock' and not granted`,
          );
          if (rows[0].n > 0) break;
          if (Date.now() > deadline) throw new Error('the chunk never waited for the upload');
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        await upload.query('commit');
        expect((await pending).kind).toBe('stale');
        expect(await chunksOf()).toEqual([]);
      } finally {
        await upload.end();
        await writer.close();
      }
      const { revision } = await t.services.configuration.download('x');
      expect(revision).toBe(write.revision + 1);
      expect((await createIngestionStore(t.store).commitChunk({ ...write, revision })).kind).toBe('stored');
    },
  );

  /**
   * The realistic configuration stored afresh, and a loan session with one chunk stored through
   * this instance, which so prepares the configuration of now; the session's id.
   */
  async function sessionWithAChunk(): Promise<string> {
    const put = await t.call(operator, { method: 'PUT', url: BULK, payload: realisticConfiguration() });
    expect(put.statusCode).toBe(200);
    const opened = await t.call(operator, {
      method: 'POST',
      url: '/api/v1/ingestions',
      payload: { namespace: 'loans', entity: 'loanTransaction' },
    });
    const ingestionId = opened.json().ingestionId as string;
    const first = await t.call(operator, {
      method: 'POST',
      url: `/api/v1/ingestions/${ingestionId}`,
      payload: { data: loanRecords(1) },
    });
    expect(first.statusCode, first.body).toBe(201);
    return ingestionId;
  }

  it("validates a chunk again when another instance's upload changed the rules since this one last prepared them", async () => {
    const ingestionId = await sessionWithAChunk();
    const session = `/api/v1/ingestions/${ingestionId}`;
    // The other instance adds an optional attribute, keeping the data.
    const changed = realisticConfiguration();
    (changed.configuration.entities[0]?.attributes ?? []).push({
      name: 'branchNote',
      type: { typeName: 'TEXT' },
    });
    await other.services.configuration.upload(
      changed,
      { user: 'other-instance' },
      { keepProcessingData: true },
    );
    // Refused under the rules this instance prepared last, accepted under the stored ones.
    const record = { ...loanRecords(1, 1)[0], branchNote: 'from the new rules' };
    const second = await t.call(operator, { method: 'POST', url: session, payload: { data: [record] } });
    expect(second.statusCode, second.body).toBe(201);
    expect(second.json()).toMatchObject({ acceptedRows: 1, failedRows: 0 });
    const stored = await t.store.db
      .selectFrom('records')
      .select('data')
      .where('ingestion_id', '=', ingestionId)
      .orderBy('record_id')
      .execute();
    expect(JSON.parse(stored[1]?.data ?? '{}')).toMatchObject({ branchNote: 'from the new rules' });
  });

  it("takes chunks for an entity that another instance's upload added since this one last prepared the rules", async () => {
    await sessionWithAChunk();
    // The other instance adds a second loan entity, and a session of it is opened there.
    const changed = realisticConfiguration();
    const loans = changed.configuration.entities[0];
    if (loans === undefined) throw new Error('the fixture has no entity');
    changed.configuration.entities.push({
      ...structuredClone(loans),
      name: 'loanTransactionCopy',
    } as typeof loans);
    await other.services.configuration.upload(
      changed,
      { user: 'other-instance' },
      { keepProcessingData: true },
    );
    const copy = await other.services.ingestion.createSession(
      { namespace: 'loans', entity: 'loanTransactionCopy' },
      'other-instance',
    );
    const chunk = await t.call(operator, {
      method: 'POST',
      url: `/api/v1/ingestions/${copy.ingestionId}`,
      payload: { data: loanRecords(2) },
    });
    expect(chunk.statusCode, chunk.body).toBe(201);
    expect(chunk.json()).toMatchObject({ acceptedRows: 2, failedRows: 0 });
  });
});
