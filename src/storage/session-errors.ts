import { type Kysely, sql } from 'kysely';
import type { FieldErrorView, IngestionStore } from '../modules/ingestion/store.js';
import { countRows } from './count.js';
import { failedCountOf } from './ingestion-rows.js';
import { keyedPageOf } from './keyed-page.js';
import type { Database } from './schema.js';

/**
 * The failed records of an ingestion session, as its error list reads them: validation failures
 * (`record_errors`, the session's sample) first, then processing errors, each part in id order,
 * by page number or by cursor, and how many there are in all. A part of the ingestion port
 * (`createIngestionStore`), kept apart because it is the one read that spans two tables.
 */
export function createSessionErrorReads(
  db: Kysely<Database>,
): Pick<IngestionStore, 'listErrors' | 'countErrors'> {
  return {
    listErrors: (ingestionId, chunkSeq, start, limit) => listErrors(db, ingestionId, chunkSeq, start, limit),

    async countErrors(ingestionId, chunkSeq) {
      const { validationQuery, processingQuery } = sessionErrorsMatching(db, ingestionId, chunkSeq);
      // Without a chunk, the count needs no record: every processing error names its session.
      const [validationListed, validationInAll, processingTotal] = await Promise.all([
        countRows(validationQuery),
        validationFailuresInAll(db, ingestionId, chunkSeq),
        chunkSeq === undefined
          ? countRows(
              db
                .selectFrom('processing_errors')
                .where('ingestion_id', '=', ingestionId)
                .where('state', '!=', 'closed'),
            )
          : countRows(processingQuery),
      ]);
      return { listed: validationListed + processingTotal, inAll: validationInAll + processingTotal };
    },
  };
}

/**
 * A session's failed records, in two parts: validation failures and processing errors. One
 * chunk's failures whatever became of it, or those of the stored chunks only: a rejected
 * chunk's records are listed once they are sent again and stored.
 */
function sessionErrorsMatching(db: Kysely<Database>, ingestionId: string, chunkSeq: number | undefined) {
  const validations = db
    .selectFrom('record_errors as e')
    .innerJoin('chunks as c', (join) =>
      join.onRef('c.ingestion_id', '=', 'e.ingestion_id').onRef('c.chunk_seq', '=', 'e.chunk_seq'),
    )
    .where('e.ingestion_id', '=', ingestionId);
  const processing = db
    .selectFrom('processing_errors as e')
    .innerJoin('records as r', 'r.record_id', 'e.record_id')
    .where('e.ingestion_id', '=', ingestionId)
    // An error closed by reprocessing is no longer the session's: its record posted.
    .where('e.state', '!=', 'closed');
  return chunkSeq === undefined
    ? { validationQuery: validations.where('c.rejected', '=', 0), processingQuery: processing }
    : {
        validationQuery: validations.where('e.chunk_seq', '=', chunkSeq),
        processingQuery: processing.where('r.chunk_seq', '=', chunkSeq),
      };
}

/**
 * Every validation failure the list stands for, kept in the sample or not: those of the stored
 * chunks (the session's `failed_rows`), or those of the one chunk, whose `failed_rows` counts
 * every row when it was rejected and whose outcome then counts its failed records.
 */
async function validationFailuresInAll(
  db: Kysely<Database>,
  ingestionId: string,
  chunkSeq: number | undefined,
): Promise<number> {
  if (chunkSeq === undefined) {
    const session = await db
      .selectFrom('ingestions')
      .select('failed_rows')
      .where('ingestion_id', '=', ingestionId)
      .executeTakeFirst();
    return Number(session?.failed_rows ?? 0);
  }
  // Only a rejected chunk's count needs its outcome, which may be large: no other is read.
  const chunk = await db
    .selectFrom('chunks')
    .select([
      'failed_rows',
      sql<string | null>`case when rejected = 1 then failed_records end`.as('rejected_outcome'),
    ])
    .where('ingestion_id', '=', ingestionId)
    .where('chunk_seq', '=', chunkSeq)
    .executeTakeFirst();
  if (chunk === undefined) return 0;
  return chunk.rejected_outcome === null ? Number(chunk.failed_rows) : failedCountOf(chunk.rejected_outcome);
}

/** `IngestionStore.listErrors`: a page of the session's failed records, across both parts. */
async function listErrors(
  db: Kysely<Database>,
  ingestionId: string,
  chunkSeq: number | undefined,
  start: Parameters<IngestionStore['listErrors']>[2],
  limit: number,
): ReturnType<IngestionStore['listErrors']> {
  const { validationQuery, processingQuery } = sessionErrorsMatching(db, ingestionId, chunkSeq);
  const validationPage = validationQuery
    .select(['e.id', 'e.chunk_seq', 'e.record_index', 'e.record', 'e.errors', 'e.created_at'])
    .orderBy('e.id');
  let processingPage = processingQuery
    .select(['e.id', 'e.code', 'e.message', 'e.record', 'e.created_at', 'r.chunk_seq', 'r.record_index'])
    .orderBy('e.id');
  // One row more than the page, across both parts, says whether a next page exists.
  const wanted = limit + 1;
  let validation: Awaited<ReturnType<typeof validationPage.execute>> = [];
  if ('page' in start) {
    const offset = start.page * limit;
    validation = await validationPage.limit(wanted).offset(offset).execute();
    // Fewer validation failures than asked for: they end on this page, and the processing
    // errors start at the offset past all of them (counted only when none is on the page).
    if (validation.length < wanted) {
      const validationTotal =
        validation.length > 0 ? offset + validation.length : await countRows(validationQuery);
      processingPage = processingPage.offset(Math.max(0, offset - validationTotal));
    }
  } else if (start.after.kind === 'validation') {
    validation = await validationPage.where('e.id', '>', start.after.id).limit(wanted).execute();
  } else {
    processingPage = processingPage.where('e.id', '>', start.after.id);
  }
  const rest = wanted - validation.length;
  const processing = rest > 0 ? await processingPage.limit(rest).execute() : [];
  const rows = [
    ...validation.map((r) => ({
      key: { kind: 'validation' as const, id: Number(r.id) },
      row: {
        kind: 'validation' as const,
        chunkSeq: Number(r.chunk_seq),
        index: r.record_index,
        record: r.record,
        errors: JSON.parse(r.errors) as FieldErrorView[],
        at: r.created_at,
      },
    })),
    ...processing.map((r) => ({
      key: { kind: 'processing' as const, id: Number(r.id) },
      row: {
        kind: 'processing' as const,
        chunkSeq: Number(r.chunk_seq),
        index: r.record_index,
        record: r.record,
        errors: [{ field: '', code: r.code, message: r.message }],
        at: r.created_at,
      },
    })),
  ];
  const page = keyedPageOf(rows, limit, (r) => r.key);
  return { rows: page.rows.map((r) => r.row), next: page.next };
}
