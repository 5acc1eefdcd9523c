import {
  type Expression,
  type Kysely,
  type OperationNodeSource,
  type RawBuilder,
  type SqlBool,
  sql,
} from 'kysely';
import { type ChunkWrite, SESSION_ERRORS_KEPT_MAX } from '../modules/ingestion/store.js';
import { storedRevisionQuery } from './configuration-store.js';
import type { Database } from './schema.js';
import { type LateSessionWork, lateSessionWorkUpdate } from './session-counters.js';
import { entityRecordCountsUpsert } from './statistics-counters.js';

/** A chunk's write on PostgreSQL, serialised and numbered by `commitChunk`. */
export interface PostgresChunkWrite {
  write: ChunkWrite;
  /** The columns and values of the chunk's row, its sequence number taken (`chunkRow`). */
  chunkRow: Record<string, unknown>;
  /**
   * The failed records the session's error list may keep, serialised, in chunk order: the
   * statement keeps those its sample still has room for.
   */
  failedTexts: readonly { index: number; record: string; errors: string }[];
  /** Every failed record of the chunk, which the session update adds to its count. */
  failedCount: number;
  /**
   * The update of the session row that counts the chunk (its failed records in
   * `validation_failures` too) and admits its request, without a sequence number (taken
   * before), returning `counted`, `opened_on` and `validation_failures`.
   */
  sessionUpdate: (onlyIf: Expression<SqlBool>) => OperationNodeSource;
  /** What the chunk adds to its session's day counters when the session was counted already. */
  lateWork: LateSessionWork;
}

/** The chunk's rows of one table as one text parameter, a line each, split by `string_to_table`. */
function lines(texts: readonly string[]): string | null {
  // JSON.stringify writes no line feed of its own and escapes every one inside a string, so a
  // serialised record or error list is one line. No rows: null, which `string_to_table` reads
  // as none (an empty text would be one empty row).
  return texts.length === 0 ? null : texts.join('\n');
}

/**
 * Writes a chunk on PostgreSQL in one statement, so in one round trip and a transaction of its
 * own, rather than a transaction of about six statements (begin, the chunk's row, the records'
 * COPY, the errors, the counters, commit): each costs the event loop a socket write and wakes a
 * server process, and under 64 clients both compete for the same cores (ADR 0034).
 *
 * Each part of the statement is a data-modifying WITH that reads the chunk's row, and the row is
 * inserted only while the stored configuration revision is the one the records were validated
 * under: when it changed, nothing at all is written and the answer is `stale`. The chunks table
 * is the first the statement names (PostgreSQL locks an insert's target before what its select
 * reads, and the parts of a WITH in their order), so it takes its lock on that table before the
 * sessions table's, in the order of a configuration upload (`configuration-store.ts`), which it
 * waits for; its snapshot is taken after that wait, so the revision read is the one it commits
 * under. The records and the failed records travel as one text parameter each, a line per row,
 * beside an array of their indexes: no escaping on either side. The failed records are written
 * after the session row, whose update adds them to the session's count and so numbers them
 * (`validation_failures` less the chunk's failed records, plus their place in the chunk); those
 * numbered up to `SESSION_ERRORS_KEPT_MAX` are kept. The update reads the row as the last chunk
 * of the session committed it (it waits for that chunk's lock), so two chunks of one session
 * never take the same numbers. The main query reads the parts in the order their locks are
 * taken, which is the order of every other writer: the chunk, its records, the session row (a
 * configuration upload deletes sessions, then their errors by cascade), its errors, the entity's
 * record counters, the session's day counters (`statistics-counters.ts`).
 */
export async function writeChunkInOneStatement(
  db: Kysely<Database>,
  chunk: PostgresChunkWrite,
): Promise<'written' | 'stale'> {
  const { write, chunkRow, failedTexts, failedCount } = chunk;
  const { accepted } = write;
  const columns = Object.keys(chunkRow);
  const chunkWritten = sql<boolean>`exists (select 1 from chunk)`;
  const { counters, late } = counterParts(db, chunk, chunkWritten);
  const { rows } = await sql<{ written: number }>`
    with chunk as (
      insert into chunks (${sql.join(columns.map((c) => sql.ref(c)))})
      select ${sql.join(columns.map((c) => chunkRow[c]))}
      where coalesce((${storedRevisionQuery(db)}), 0) = ${write.revision}
      returning chunk_seq
    ),
    records_written as (
      insert into records (ingestion_id, chunk_seq, record_index, namespace, entity, data, processing, created_at)
      select ${write.ingestionId}, chunk.chunk_seq, r.record_index, ${write.namespace}, ${write.entity},
        r.data, ${write.awaitsProcessing ? 1 : 0}, ${write.at}
      from chunk, rows from (
        unnest(${accepted.indexes}::int4[]),
        string_to_table(${accepted.indexes.length === 0 ? null : accepted.lines}::text, E'\\n')
      ) as r(record_index, data)
      returning 1
    ),
    session as (${chunk.sessionUpdate(chunkWritten)}),
    errors_written as (
      insert into record_errors (ingestion_id, chunk_seq, record_index, record, errors, created_at)
      select ${write.ingestionId}, chunk.chunk_seq, e.record_index, e.record, e.errors, ${write.at}
      from chunk, session, rows from (
        unnest(${failedTexts.map((f) => f.index)}::int4[]),
        string_to_table(${lines(failedTexts.map((f) => f.record))}::text, E'\\n'),
        string_to_table(${lines(failedTexts.map((f) => f.errors))}::text, E'\\n')
      ) with ordinality as e(record_index, record, errors, place)
      where session.validation_failures - ${failedCount}::int8 + e.place <= ${SESSION_ERRORS_KEPT_MAX}::int8
      returning 1
    ),
    ${counters.part}
    late as (${late})
    select
      (select count(*) from chunk)::int as written,
      (select count(*) from records_written) as records,
      (select counted from session) as counted,
      (select count(*) from errors_written) as errors,
      ${counters.read}
      (select count(*) from late) as late`.execute(db);
  // Nothing can go between the chunk's row and the session's: the chunk's foreign key makes the
  // statement fail (`gone`) when the session was deleted since its sequence number was taken.
  return rows[0]?.written === 1 ? 'written' : 'stale';
}

/**
 * The statement's parts that count the chunk, with their reads in its main query: the entity's
 * record counters (`entity_counts`, only while the chunk's row is written) and the session's day
 * counters (`late`, only when the session was counted already).
 */
function counterParts(db: Kysely<Database>, chunk: PostgresChunkWrite, chunkWritten: RawBuilder<boolean>) {
  const { write } = chunk;
  const { accepted } = write;
  const entityCounts = entityRecordCountsUpsert(
    {
      ingestionId: write.ingestionId,
      namespace: write.namespace,
      entity: write.entity,
      waiting: write.awaitsProcessing ? accepted.indexes.length : 0,
      done: write.awaitsProcessing ? 0 : accepted.indexes.length,
      errors: 0,
    },
    chunkWritten,
  );
  const late = lateSessionWorkUpdate(db, write.ingestionId, chunk.lateWork)
    .where(sql<boolean>`day = (select substr(opened_on, 1, 10) from session where counted = 1)`)
    .returning(sql<number>`1`.as('one'));
  // An empty chunk (every record failed) counts no records: no counter part.
  const counters =
    entityCounts === undefined
      ? { part: sql``, read: sql`` }
      : {
          part: sql`entity_counts as (${entityCounts(db).returning(sql<number>`1`.as('one'))}),`,
          read: sql`(select count(*) from entity_counts) as entity_counts,`,
        };
  return { counters, late };
}
