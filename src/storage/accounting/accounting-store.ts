/**
 * The accounting port over Kysely. The unit of work is one chunk: its unprocessed records are
 * claimed, processed by the pure engine, and their results written with the processed marks in
 * one transaction, by the claim protocol of the store's dialect (`claim-sqlite.ts`,
 * `claim-postgres.ts`, which say the lock order they rely on) and the one write path
 * (`write-path.ts`), which keeps the balances too (`balances.ts`, as does posting). The reads
 * of journals, balances (from the kept tables) and processing errors are here too.
 */
import { type Selectable, sql } from 'kysely';
import type {
  AccountingStore,
  ChunkProcessing,
  ChunkRef,
  JournalFilter,
  ProcessingErrorFilter,
  StoredJournal,
} from '../../modules/accounting/store.js';
import { createBulkInsert } from '../bulk-insert.js';
import { countRows } from '../count.js';
import { isRetryableStoreError } from '../errors.js';
import { keyedPageOf } from '../keyed-page.js';
import { readPeriodStates } from '../period-store.js';
import { byDialect, type Store } from '../store.js';
import type { JournalLinesTable, JournalsTable } from '../tables/accounting.js';
import { postDueJournals, readBalances } from './balances.js';
import type { ClaimHold } from './claim.js';
import { postgresClaims } from './claim-postgres.js';
import { sqliteClaims } from './claim-sqlite.js';
import { canonicalNodeJson } from './rows.js';
import { writeFailure } from './write-path.js';

/** What a chunk's processing did when it threw: nothing was written, the caller decides. */
function failed(chunk: ChunkRef, error: unknown): ChunkProcessing {
  return { kind: 'failed', chunk, error, transient: isRetryableStoreError(error) };
}

function toJournal(row: Selectable<JournalsTable>, lines: StoredJournal['lines']): StoredJournal {
  return {
    journalId: row.journal_id,
    status: Number(row.posted) === 1 ? 'posted' : 'unposted',
    coreDate: row.core_date,
    originalCoreDate: row.original_core_date,
    journalType: row.journal_type,
    accountingConfig: row.accounting_config,
    ingestionId: row.ingestion_id,
    reverses: row.reverses,
    reversedBy: row.reversed_by,
    withdrawnBy: row.withdrawn_by,
    reversalId: row.reversal_id,
    originJournalId: row.origin_journal_id,
    node: JSON.parse(row.node) as Record<string, string>,
    revision: Number(row.revision),
    lines,
  };
}

/** The accounting port over `store` (see the header). */
export function createAccountingStore(store: Store): AccountingStore {
  const { db, adapter } = store;
  const bulkInsert = createBulkInsert(store);
  const claims = byDialect(adapter.dialect, { postgres: postgresClaims, sqlite: sqliteClaims })(
    db,
    bulkInsert,
  );

  /** The journals `filter` selects (the WHERE of their page and of their count). */
  function journalsMatching(filter: JournalFilter) {
    let query = db.selectFrom('journals');
    if (filter.status !== undefined) query = query.where('posted', '=', filter.status === 'posted' ? 1 : 0);
    if (filter.ingestionId !== undefined) query = query.where('ingestion_id', '=', filter.ingestionId);
    if (filter.accountingConfig !== undefined)
      query = query.where('accounting_config', '=', filter.accountingConfig);
    if (filter.from !== undefined) query = query.where('core_date', '>=', filter.from);
    if (filter.to !== undefined) query = query.where('core_date', '<', filter.to);
    if (filter.reversalId !== undefined) query = query.where('reversal_id', '=', filter.reversalId);
    return query;
  }

  /** The processing errors `filter` selects. */
  function processingErrorsMatching(filter: ProcessingErrorFilter) {
    let query = db.selectFrom('processing_errors').where('state', '=', filter.state ?? 'open');
    if (filter.ingestionId !== undefined) query = query.where('ingestion_id', '=', filter.ingestionId);
    if (filter.code !== undefined) query = query.where('code', '=', filter.code);
    return query;
  }

  /**
   * The lines of the journals of one page, in journal and line order, by one index lookup per
   * journal (`rowsByKeys`: the plan must not hang on the planner's statistics).
   */
  async function linesOf(journalIds: string[]) {
    const { rows } = await sql<Selectable<JournalLinesTable>>`
      select l.journal_id, l.line_id, l.line_no, l.account, ${adapter.decimalText('l.amount')} as amount,
        l.currency, l.extras
      from ${adapter.rowsByKeys('journal_lines', 'journal_id', journalIds, 'l')}
      order by l.journal_id, l.line_no`.execute(db);
    return rows;
  }

  async function journalsWithLines(rows: Selectable<JournalsTable>[]): Promise<StoredJournal[]> {
    if (rows.length === 0) return [];
    const lines = await linesOf(rows.map((r) => r.journal_id));
    const byJournal = new Map<string, StoredJournal['lines']>();
    for (const line of lines) {
      const list = byJournal.get(line.journal_id) ?? [];
      list.push({
        lineId: line.line_id,
        lineNo: line.line_no,
        account: line.account,
        amount: String(line.amount),
        currency: line.currency,
        extras: JSON.parse(line.extras) as Record<string, unknown>,
      });
      byJournal.set(line.journal_id, list);
    }
    return rows.map((row) => toJournal(row, byJournal.get(row.journal_id) ?? []));
  }

  return {
    async processNextChunk(revision, at, work, periodsVersion) {
      const hold: ClaimHold = { chunk: undefined };
      try {
        return await claims.processNext(revision, at, work, hold, periodsVersion);
      } catch (error) {
        // Before a chunk was taken the fault is the store's, not a chunk's: the caller's round fails.
        if (hold.chunk === undefined) throw error;
        return failed(hold.chunk, error);
      }
    },

    periodStates: () => readPeriodStates(db),

    async failChunk(chunk, at, failure) {
      return db.transaction().execute(async (trx) => {
        const records = await claims.recordsToFail(trx, chunk);
        const first = records[0];
        const last = records.at(-1);
        if (first === undefined || last === undefined) return 0;
        // A chunk's records are all of one namespace and entity.
        const entityChunk = { ...chunk, namespace: first.namespace, entity: first.entity };
        return writeFailure(
          trx,
          adapter,
          entityChunk,
          { first: first.record_id, last: last.record_id },
          at,
          failure,
        );
      });
    },

    postDue(node, businessDate) {
      return postDueJournals(db, adapter, canonicalNodeJson(node), businessDate);
    },

    async unpostedNodes() {
      // A loose scan of the unposted journals' index (node, core date): one lookup per node,
      // however many journals wait for their date (a DISTINCT read all of them, 1.3 s at 320,000
      // on PostgreSQL, every posting interval).
      const { rows } = await sql<{ node: string | null }>`
        with recursive nodes(node) as (
          select (select min(node) from journals where posted = 0)
          union all
          select (select min(j.node) from journals j where j.posted = 0 and j.node > nodes.node)
          from nodes where nodes.node is not null
        )
        select node from nodes where node is not null`.execute(db);
      return rows.flatMap((r) => (r.node === null ? [] : [JSON.parse(r.node) as Record<string, string>]));
    },

    async listJournals(filter, start, limit) {
      let query = journalsMatching(filter);
      if ('after' in start) {
        const { coreDate, createdAt, journalId } = start.after;
        query = query.where((eb) =>
          eb(
            eb.refTuple('core_date', 'created_at', 'journal_id'),
            '>',
            eb.tuple(coreDate, createdAt, journalId),
          ),
        );
      } else query = query.offset(start.page * limit);
      const rows = await query
        .selectAll()
        .orderBy('core_date')
        .orderBy('created_at')
        .orderBy('journal_id')
        .limit(limit + 1)
        .execute();
      const page = keyedPageOf(rows, limit, (row) => ({
        coreDate: row.core_date,
        createdAt: row.created_at,
        journalId: row.journal_id,
      }));
      return { rows: await journalsWithLines(page.rows), next: page.next };
    },

    async countJournals(filter) {
      // A session's journals are counted on their index (`journals_session_page_order`): as
      // many as it made; a reversal request's on `journals_reversal`: as many as it made.
      if (filter.ingestionId !== undefined || filter.reversalId !== undefined)
        return countRows(journalsMatching(filter));
      // Otherwise every filter is a dimension of the journal counters (`statistics-counters.ts`).
      let counters = db.selectFrom('journal_day_counts');
      if (filter.status !== undefined)
        counters = counters.where('posted', '=', filter.status === 'posted' ? 1 : 0);
      if (filter.accountingConfig !== undefined)
        counters = counters.where('accounting_config', '=', filter.accountingConfig);
      if (filter.from !== undefined) counters = counters.where('core_date', '>=', filter.from);
      if (filter.to !== undefined) counters = counters.where('core_date', '<', filter.to);
      const row = await counters
        .select((eb) => eb.fn.sum<number | string | null>('journals').as('total'))
        .executeTakeFirstOrThrow();
      return Number(row.total ?? 0);
    },

    async findJournal(journalId) {
      const row = await db
        .selectFrom('journals')
        .selectAll()
        .where('journal_id', '=', journalId)
        .executeTakeFirst();
      return row === undefined ? undefined : (await journalsWithLines([row]))[0];
    },

    balances(filter) {
      return readBalances(db, adapter, filter);
    },

    async listProcessingErrors(filter, start, limit) {
      let query = processingErrorsMatching(filter);
      query = 'after' in start ? query.where('id', '>', start.after) : query.offset(start.page * limit);
      const rows = await query
        .selectAll()
        .orderBy('id')
        .limit(limit + 1)
        .execute();
      const page = keyedPageOf(rows, limit, (row) => Number(row.id));
      return {
        rows: page.rows.map((r) => ({
          ingestionId: r.ingestion_id,
          namespace: r.namespace,
          entity: r.entity,
          code: r.code,
          message: r.message,
          record: JSON.parse(r.record) as Record<string, unknown>,
          at: r.created_at,
          revision: Number(r.revision),
          id: Number(r.id),
          recordId: Number(r.record_id),
          state: r.state,
          attempts: Number(r.attempts),
          lastAttemptAt: r.last_attempt_at ?? r.created_at,
          previousCode: r.previous_code,
          closedAt: r.closed_at,
        })),
        next: page.next,
      };
    },

    async countProcessingErrors(filter) {
      // A session's errors are counted on their index (`processing_errors_ingestion`), and the
      // errors queued or closed by reprocessing on `processing_errors_state`.
      if (filter.ingestionId !== undefined || (filter.state ?? 'open') !== 'open')
        return countRows(processingErrorsMatching(filter));
      // Otherwise from the counters of open errors per day and code (`statistics-counters.ts`).
      let counters = db.selectFrom('processing_error_days');
      if (filter.code !== undefined) counters = counters.where('code', '=', filter.code);
      const row = await counters
        .select((eb) => eb.fn.sum<number | string | null>('errors').as('total'))
        .executeTakeFirstOrThrow();
      return Number(row.total ?? 0);
    },
  };
}
