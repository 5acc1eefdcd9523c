import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHUNK_ERRORS_SHOWN_MAX,
  CHUNK_RECORDS_MAX,
  FAILED_RECORD_KEPT_BYTES_MAX,
  SESSION_ERRORS_KEPT_MAX,
} from '../../src/modules/ingestion/chunk-body.js';
import type { Store } from '../../src/storage/store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { openLoanSession, uploadRealisticConfiguration } from '../helpers/fixtures.js';

/**
 * What a failed record kept in the error list costs beyond the JSON of its record and errors:
 * the row's other columns (ids, chunk number, index, time: about 80 bytes), the row's header and
 * its index entry (about 60 bytes), and the room a page leaves unused (measured: about 1,100
 * bytes a row of 830 bytes of JSON on both stores).
 */
const ROW_OVERHEAD_BYTES = 512;
/**
 * What a chunk's row costs beside its outcome's failed records: its numbers, name, key, body
 * digest, reference and times (at most 200 + 200 + 64 + 60 characters), its two index entries.
 */
const CHUNK_ROW_BYTES_MAX = 1024;
/**
 * How much a store may grow beyond the rows it was given: both allocate whole pages (SQLite 4
 * KiB, PostgreSQL 8 KiB per table, index and TOAST table, and the free space maps of three
 * pages a relation that PostgreSQL adds as a table grows).
 */
const PAGES_SLACK_BYTES = 256 * 1024;

/**
 * The bytes the store holds for the tables a chunk writes. SQLite: the whole database, pages in
 * use and free, as this connection sees it (the in-memory store of the tests has no write-ahead
 * log to checkpoint). PostgreSQL: the tables of sessions, chunks, records and failed records,
 * with their indexes, TOAST tables and free space maps.
 */
async function storeBytes(store: Store): Promise<number> {
  if (store.dialect === 'sqlite') {
    const { rows } = await sql<{ bytes: number }>`
      select page_count * page_size as bytes from pragma_page_count(), pragma_page_size()
    `.execute(store.db);
    return Number(rows[0]?.bytes);
  }
  const { rows } = await sql<{ bytes: string }>`
    select sum(pg_total_relation_size(relation::regclass)) as bytes
    from unnest(array['ingestions', 'chunks', 'records', 'record_errors']) as relation
  `.execute(store.db);
  return Number(rows[0]?.bytes);
}

/** The failed records a session holds in its error list, and those it counted. */
async function sample(store: Store, ingestionId: string): Promise<{ kept: number; counted: number }> {
  const kept = await store.db
    .selectFrom('record_errors')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('ingestion_id', '=', ingestionId)
    .executeTakeFirstOrThrow();
  const session = await store.db
    .selectFrom('ingestions')
    .select('validation_failures')
    .where('ingestion_id', '=', ingestionId)
    .executeTakeFirstOrThrow();
  return { kept: Number(kept.n), counted: Number(session.validation_failures) };
}

/**
 * A client that sends failing chunks again and again cannot grow the store without bound. A
 * session keeps its first SESSION_ERRORS_KEPT_MAX failed records for its error list and only
 * counts the others; a chunk sent without an idempotency key keeps the count of its failed
 * records alone, and one sent with a key its outcome, which a replay answers and which lists at
 * most CHUNK_ERRORS_SHOWN_MAX. Measured with ten rejected 60 KB chunks of 20,000 empty loan
 * records, each with its own key: before, every chunk kept 5,000 error rows and the ten grew
 * the store by 55 MB (54.8 MB SQLite, 55.9 MB PostgreSQL), and ten more without a key by as
 * much again; now the ten grow it by 6.2 MB (SQLite) and 5.7 MB (PostgreSQL): the sample and
 * ten outcomes of 84 KB; the next ten by 4 KB and nothing.
 */
describe('failed records sent again and again', () => {
  let t: TestApp;
  let writer: string;
  beforeAll(async () => {
    t = await createTestApp();
    writer = await t.tokenFor(['api-client']);
    await uploadRealisticConfiguration(t);
  });
  afterAll(async () => t?.close());

  const emptyRecords = (count: number) => JSON.stringify({ data: Array.from({ length: count }, () => ({})) });
  const fullChunk = emptyRecords(CHUNK_RECORDS_MAX);
  const send = (id: string, body: string, key?: string) =>
    t.call(writer, {
      method: 'POST',
      url: `/api/v1/ingestions/${id}`,
      headers: {
        'content-type': 'application/json',
        ...(key === undefined ? {} : { 'idempotency-key': key }),
      },
      payload: body,
    });

  /** The JSON of the failed records an answer lists, which a kept row holds one of. */
  const listedBytes = (answer: { errors: unknown[] }) => Buffer.byteLength(JSON.stringify(answer.errors));

  it('keeps one sample per session however often its chunks are sent, and answers a replay as before', async () => {
    const id = await openLoanSession(t, writer);
    const start = await storeBytes(t.store);
    const first = await send(id, fullChunk, 'again-0');
    expect(first.statusCode).toBe(400);
    const answer = first.json();
    expect(answer).toMatchObject({
      failedRows: CHUNK_RECORDS_MAX,
      errorsOmitted: CHUNK_RECORDS_MAX - CHUNK_ERRORS_SHOWN_MAX,
    });
    // Every failed record is alike: the sample holds rows of one listed failure's size, within
    // the bound a kept row has whatever was sent.
    const failureBytes = listedBytes(answer) / CHUNK_ERRORS_SHOWN_MAX;
    expect(failureBytes).toBeLessThanOrEqual(FAILED_RECORD_KEPT_BYTES_MAX);
    const sampleBytesMax = SESSION_ERRORS_KEPT_MAX * (failureBytes + ROW_OVERHEAD_BYTES);
    // A chunk with a key keeps its outcome for replays: the failed records its answer listed.
    const keyedChunkBytesMax = listedBytes(answer) + CHUNK_ROW_BYTES_MAX;
    for (let i = 1; i < 10; i += 1) expect((await send(id, fullChunk, `again-${i}`)).statusCode).toBe(400);
    const afterTen = await storeBytes(t.store);
    expect(afterTen - start).toBeLessThan(sampleBytesMax + 10 * keyedChunkBytesMax + PAGES_SLACK_BYTES);
    expect(await sample(t.store, id)).toEqual({
      kept: SESSION_ERRORS_KEPT_MAX,
      counted: 10 * CHUNK_RECORDS_MAX,
    });

    // Ten more without a key: a row each, nothing else, however many failed records they carry.
    for (let i = 0; i < 10; i += 1) expect((await send(id, fullChunk)).statusCode).toBe(400);
    const afterTwenty = await storeBytes(t.store);
    expect(afterTwenty - afterTen).toBeLessThan(10 * CHUNK_ROW_BYTES_MAX + PAGES_SLACK_BYTES);
    expect(await sample(t.store, id)).toEqual({
      kept: SESSION_ERRORS_KEPT_MAX,
      counted: 20 * CHUNK_RECORDS_MAX,
    });

    // The first key replays its answer as it was, and the store does not grow.
    const replay = await send(id, fullChunk, 'again-0');
    expect(replay.statusCode).toBe(400);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    expect(await storeBytes(t.store)).toBe(afterTwenty);

    // The error list holds the first chunk's sample and counts every failure of each chunk.
    const byChunk = async (chunkSeq: number) => {
      const found = await t.services.ingestion.listErrors(id, 0, 1, chunkSeq);
      return { total: found.total, failedTotal: found.failedTotal };
    };
    expect(await byChunk(answer.chunkSeq)).toEqual({
      total: SESSION_ERRORS_KEPT_MAX,
      failedTotal: CHUNK_RECORDS_MAX,
    });
    expect(await byChunk(answer.chunkSeq + 19)).toEqual({ total: 0, failedTotal: CHUNK_RECORDS_MAX });
  });

  it('keeps a sample per session, whatever number of sessions', async () => {
    const sessions = 3;
    const chunksPerSession = 3;
    const start = await storeBytes(t.store);
    const ids: string[] = [];
    let failureBytes = 0;
    for (let s = 0; s < sessions; s += 1) {
      const id = await openLoanSession(t, writer);
      ids.push(id);
      for (let c = 0; c < chunksPerSession; c += 1) {
        const response = await send(id, fullChunk);
        expect(response.statusCode).toBe(400);
        failureBytes = listedBytes(response.json()) / CHUNK_ERRORS_SHOWN_MAX;
      }
    }
    const sampleBytesMax = SESSION_ERRORS_KEPT_MAX * (failureBytes + ROW_OVERHEAD_BYTES);
    // Sessions' own rows are part of the growth; a chunk's row bound covers one as well.
    const growth = (await storeBytes(t.store)) - start;
    expect(growth).toBeLessThan(
      sessions * (sampleBytesMax + (chunksPerSession + 1) * CHUNK_ROW_BYTES_MAX) + PAGES_SLACK_BYTES,
    );
    for (const id of ids) {
      expect(await sample(t.store, id)).toEqual({
        kept: SESSION_ERRORS_KEPT_MAX,
        counted: chunksPerSession * CHUNK_RECORDS_MAX,
      });
    }
  });

  it('numbers the failed records of chunks written side by side once: the sample never grows past its bound', async () => {
    const id = await openLoanSession(t, writer);
    // Four chunks of 3,000 failed records: the sample takes all of one, part of another.
    const perChunk = 3_000;
    const chunks = 4;
    const body = emptyRecords(perChunk);
    const answers = await Promise.all(Array.from({ length: chunks }, () => send(id, body)));
    for (const answer of answers) expect(answer.statusCode).toBe(400);
    expect(await sample(t.store, id)).toEqual({ kept: SESSION_ERRORS_KEPT_MAX, counted: chunks * perChunk });
    // The sample took the failed records of the chunks in the order they were written (which
    // on PostgreSQL need not be the order of their numbers), the first ones of each.
    const byChunk = await t.store.db
      .selectFrom('record_errors')
      .select((eb) => [eb.fn.countAll<number | string>().as('n'), eb.fn.max('record_index').as('last')])
      .where('ingestion_id', '=', id)
      .groupBy('chunk_seq')
      .execute();
    const kept = byChunk
      .map((row) => ({ n: Number(row.n), last: Number(row.last) }))
      .sort((a, b) => b.n - a.n);
    expect(kept).toEqual([
      { n: perChunk, last: perChunk - 1 },
      { n: SESSION_ERRORS_KEPT_MAX - perChunk, last: SESSION_ERRORS_KEPT_MAX - perChunk - 1 },
    ]);
  });
});
