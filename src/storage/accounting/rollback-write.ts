/**
 * The write path's settling of rollback records (docs/domain/accounting.md, Rollback of business
 * events), inside the claim's transaction: each record's twin is looked up by its fingerprint
 * (`journals_event_fingerprint`, migration 0021), its journals are withdrawn, and the reversal
 * journals the module drafted (`modules/accounting/event-rollback.ts`) are handed back to
 * `writeOutcome`, which writes them as any journals of an outcome: lines, kept balances and
 * counters follow.
 *
 * The withdrawal itself is the one guarded update reversals by selection use too (`withdraw` of
 * `reversal-write.ts`): `withdrawn_by` and, where null, `reversed_by` of the original, so a
 * journal is withdrawn at most once whoever withdraws it.
 */
import type { Kysely, Transaction } from 'kysely';
import type {
  ChunkOutcome,
  ClaimedChunk,
  RollbackRequest,
  TwinJournal,
} from '../../modules/accounting/store.js';
import type { Database } from '../schema.js';
import type { DialectAdapter } from '../store.js';
import { type OutcomeRows, outcomeRows } from './rows.js';
import { withdraw } from './withdraw.js';

/**
 * Lookups of one rollback's twin in a transaction. A lookup is repeated only when every journal
 * of the twin it found was withdrawn meanwhile by a concurrent transaction (PostgreSQL): the next
 * lookup sees that commit and takes the next twin, or reports them all rolled back.
 */
const ROLLBACK_LOOKUPS_MAX = 4;

/** Withdrawn journals read to name them in an `already-rolled-back` error. */
const WITHDRAWN_READ_MAX = 6;

/** What a rollback reads of a twin's journals. */
const TWIN_COLUMNS = [
  'journal_id',
  'ingestion_id',
  'record_id',
  'core_date',
  'journal_type',
  'accounting_config',
  'node',
  'reverses',
  'withdrawn_by',
] as const;

/** The journals of `recordId` with one of `fingerprints`, in the order written, with their lines. */
async function journalsOfTwin(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
  fingerprints: readonly string[],
  recordId: number,
): Promise<TwinJournal[]> {
  const rows = await trx
    .selectFrom('journals')
    .select(TWIN_COLUMNS)
    .where(adapter.textIn('event_fingerprint', fingerprints))
    .where('record_id', '=', recordId)
    .orderBy('created_at')
    .orderBy('journal_id')
    .execute();
  if (rows.length === 0) return [];
  const lines = await trx
    .selectFrom('journal_lines')
    .select(['journal_id', 'account', 'amount', 'currency', 'extras'])
    .where(
      'journal_id',
      'in',
      rows.map((r) => r.journal_id),
    )
    .orderBy('journal_id')
    .orderBy('line_no')
    .execute();
  const byJournal = new Map<string, TwinJournal['lines']>();
  for (const line of lines) {
    const list = byJournal.get(line.journal_id) ?? [];
    list.push({
      account: line.account,
      amount: String(line.amount),
      currency: line.currency,
      extras: JSON.parse(line.extras) as Record<string, unknown>,
    });
    byJournal.set(line.journal_id, list);
  }
  return rows.map((row) => ({
    journalId: row.journal_id,
    ingestionId: row.ingestion_id,
    recordId: Number(row.record_id),
    coreDate: row.core_date,
    journalType: row.journal_type,
    accountingConfig: row.accounting_config,
    node: JSON.parse(row.node) as Record<string, string>,
    reverses: row.reverses,
    withdrawnBy: row.withdrawn_by,
    lines: byJournal.get(row.journal_id) ?? [],
  }));
}

/**
 * Settles one rollback on its own, when the journals its chunk chose for it were withdrawn by
 * another transaction first: the journals it withdrew, as reversal drafts of its record, or its
 * processing error. The earliest journal with the fingerprint that is not withdrawn names the
 * record whose events are the candidates (one index range read, past the withdrawn journals of
 * earlier identical events only).
 */
async function settleRollback(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
  request: RollbackRequest,
): Promise<ChunkOutcome> {
  const failed = (error: { code: string; message: string }): ChunkOutcome => ({
    journals: [],
    errors: [{ recordId: request.recordId, ...error, record: request.record }],
  });
  for (let lookup = 0; lookup < ROLLBACK_LOOKUPS_MAX; lookup += 1) {
    const first = await trx
      .selectFrom('journals')
      .select('record_id')
      .where(adapter.textIn('event_fingerprint', request.fingerprints))
      .where('withdrawn_by', 'is', null)
      .orderBy('created_at')
      .orderBy('journal_id')
      .limit(1)
      .executeTakeFirst();
    if (first === undefined) {
      const withdrawn = await trx
        .selectFrom('journals')
        .select(['journal_id', 'withdrawn_by'])
        .where(adapter.textIn('event_fingerprint', request.fingerprints))
        .orderBy('created_at')
        .orderBy('journal_id')
        .limit(WITHDRAWN_READ_MAX)
        .execute();
      if (withdrawn.length === 0) return failed(request.notFound());
      return failed(
        request.alreadyRolledBack(
          withdrawn.map((j) => ({ journalId: j.journal_id, withdrawnBy: j.withdrawn_by ?? '' })),
        ),
      );
    }
    const reversals = request.reverse(
      await journalsOfTwin(trx, adapter, request.fingerprints, Number(first.record_id)),
    );
    if (!Array.isArray(reversals)) return failed(reversals);
    const journals: ChunkOutcome['journals'] = [];
    for (const { original, draft } of reversals) {
      if (
        (await withdraw(trx, adapter, [{ journalId: original, reversalJournalId: draft.journalId }])).length >
        0
      )
        journals.push({ recordId: request.recordId, draft });
    }
    if (journals.length > 0) return { journals, errors: [] };
  }
  throw new Error(
    `the twin of rollback record ${request.recordId} was withdrawn by others ${ROLLBACK_LOOKUPS_MAX} times in a row`,
  );
}

/** A journal with a fingerprint of the chunk's rollbacks, as read before they are settled. */
type Candidate = Omit<TwinJournal, 'lines'> & { createdAt: string };

/** The candidates of the rollbacks read at once: by fingerprint, and the lines of those that may be reversed. */
interface Candidates {
  byFingerprint: Map<string, Candidate[]>;
  lines: Map<string, TwinJournal['lines']>;
}

/**
 * The journals of every fingerprint of `requests`, in the order written per fingerprint (one read
 * of `journals_event_fingerprint` per fingerprint), and the lines of those whose record still has
 * a journal standing: the only ones a rollback may reverse. A read: a dry run makes it outside any
 * write transaction.
 */
async function candidatesOf(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  requests: readonly RollbackRequest[],
): Promise<Candidates> {
  const fingerprints = [...new Set(requests.flatMap((r) => r.fingerprints))];
  const byFingerprint = new Map<string, Candidate[]>();
  const lines = new Map<string, TwinJournal['lines']>();
  if (fingerprints.length === 0) return { byFingerprint, lines };
  const rows = await db
    .selectFrom('journals')
    .select([...TWIN_COLUMNS, 'event_fingerprint', 'created_at'])
    .where(adapter.textIn('event_fingerprint', fingerprints))
    .orderBy('event_fingerprint')
    .orderBy('created_at')
    .orderBy('journal_id')
    .execute();
  const standing = new Set<string>();
  for (const row of rows) {
    const fingerprint = row.event_fingerprint ?? '';
    const list = byFingerprint.get(fingerprint) ?? [];
    list.push({
      journalId: row.journal_id,
      ingestionId: row.ingestion_id,
      recordId: Number(row.record_id),
      coreDate: row.core_date,
      journalType: row.journal_type,
      accountingConfig: row.accounting_config,
      node: JSON.parse(row.node) as Record<string, string>,
      reverses: row.reverses,
      withdrawnBy: row.withdrawn_by,
      createdAt: row.created_at,
    });
    byFingerprint.set(fingerprint, list);
    if (row.withdrawn_by === null) standing.add(`${fingerprint}\u0000${row.record_id}`);
  }
  const wanted = rows
    .filter((row) => standing.has(`${row.event_fingerprint ?? ''}\u0000${row.record_id}`))
    .map((row) => row.journal_id);
  if (wanted.length === 0) return { byFingerprint, lines };
  const lineRows = await db
    .selectFrom('journal_lines')
    .select(['journal_id', 'account', 'amount', 'currency', 'extras'])
    .where(adapter.textIn('journal_id', wanted))
    .orderBy('journal_id')
    .orderBy('line_no')
    .execute();
  for (const line of lineRows) {
    const list = lines.get(line.journal_id) ?? [];
    list.push({
      account: line.account,
      amount: String(line.amount),
      currency: line.currency,
      extras: JSON.parse(line.extras) as Record<string, unknown>,
    });
    lines.set(line.journal_id, list);
  }
  return { byFingerprint, lines };
}

/** The candidates of one rollback: the journals of each of its fingerprints, in the order written. */
function candidatesOfRequest(candidates: Candidates, request: RollbackRequest): Candidate[] {
  const found = request.fingerprints.flatMap((f) => candidates.byFingerprint.get(f) ?? []);
  if (request.fingerprints.length === 1) return found;
  return found.sort((a, b) =>
    a.createdAt === b.createdAt
      ? a.journalId < b.journalId
        ? -1
        : a.journalId > b.journalId
          ? 1
          : 0
      : a.createdAt < b.createdAt
        ? -1
        : 1,
  );
}

/**
 * Settles `requests` in order against `candidates`, in memory: each rollback sees what the ones
 * before it withdrew (`taken`, journal id → its reversal's id, which it extends). Answers each
 * rollback's outcome: the reversal journals it would write, or its processing error. Writes
 * nothing: the write path then withdraws what `taken` holds, a dry run only counts.
 */
function planRollbacks(
  candidates: Candidates,
  requests: readonly RollbackRequest[],
  taken: Map<string, string>,
): { request: RollbackRequest; outcome: ChunkOutcome }[] {
  const settled: { request: RollbackRequest; outcome: ChunkOutcome }[] = [];
  for (const request of requests) {
    const failed = (error: { code: string; message: string }): ChunkOutcome => ({
      journals: [],
      errors: [{ recordId: request.recordId, ...error, record: request.record }],
    });
    const journals = candidatesOfRequest(candidates, request).map((j) => ({
      ...j,
      withdrawnBy: j.withdrawnBy ?? taken.get(j.journalId) ?? null,
    }));
    const first = journals.find((j) => j.withdrawnBy === null);
    if (first === undefined) {
      settled.push({
        request,
        outcome:
          journals.length === 0
            ? failed(request.notFound())
            : failed(
                request.alreadyRolledBack(
                  journals
                    .slice(0, WITHDRAWN_READ_MAX)
                    .map((j) => ({ journalId: j.journalId, withdrawnBy: j.withdrawnBy ?? '' })),
                ),
              ),
      });
      continue;
    }
    const twin = journals
      .filter((j) => j.recordId === first.recordId)
      .map(({ createdAt: _createdAt, ...j }) => ({ ...j, lines: candidates.lines.get(j.journalId) ?? [] }));
    const reversals = request.reverse(twin);
    if (!Array.isArray(reversals)) {
      settled.push({ request, outcome: failed(reversals) });
      continue;
    }
    for (const { original, draft } of reversals) taken.set(original, draft.journalId);
    settled.push({
      request,
      outcome: {
        journals: reversals.map(({ draft }) => ({ recordId: request.recordId, draft })),
        errors: [],
      },
    });
  }
  return settled;
}

/**
 * What `requests` would do if settled now, for a dry run: each rollback's error, or none when it
 * would roll its event back. `taken` carries the journals earlier rollbacks of the same dry run
 * would withdraw (journal id → reversal id), so a run over many chunks answers record by record
 * what the real run, settling them in the same order, does. Reads only.
 */
export async function dryRunRollbacks(
  db: Kysely<Database>,
  adapter: DialectAdapter,
  requests: readonly RollbackRequest[],
  taken: Map<string, string>,
): Promise<ChunkOutcome['errors']> {
  if (requests.length === 0) return [];
  const settled = planRollbacks(await candidatesOf(db, adapter, requests), requests, taken);
  return settled.flatMap(({ outcome }) => outcome.errors);
}

/**
 * Withdraws each journal of `withdrawals` (journal id → reversal id) still standing, in one
 * statement after locking the rows in id order (`lockRows`: two transactions never wait on each
 * other in a cycle), and returns those this call withdrew.
 */
async function withdrawAll(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
  withdrawals: ReadonlyMap<string, string>,
): Promise<Set<string>> {
  const ids = [...withdrawals.keys()].sort();
  await adapter.lockRows(
    trx
      .selectFrom('journals')
      .select('journal_id')
      .where(adapter.textIn('journal_id', ids))
      .orderBy('journal_id'),
  );
  const pairs = ids.map((journalId) => ({ journalId, reversalJournalId: withdrawals.get(journalId) ?? '' }));
  return new Set((await withdraw(trx, adapter, pairs)).map((row) => row.journal_id));
}

/**
 * The rows of a chunk of rollback records once settled, in the caller's transaction, which holds
 * the chunk: what `writeOutcome` writes instead of `rows`. A chunk is of one entity, so `rows`
 * (made before the transaction) holds nothing else.
 *
 * The chunk's twins are read at once and settled in record order in memory, each rollback seeing
 * what the ones before it withdrew, then withdrawn together: a few statements per chunk, not per
 * record. A rollback whose journals were all withdrawn meanwhile by another transaction
 * (PostgreSQL) is settled again on its own (`settleRollback`), which sees that commit.
 */
export async function settleRollbacks(
  trx: Transaction<Database>,
  adapter: DialectAdapter,
  chunk: ClaimedChunk,
  rows: OutcomeRows,
): Promise<OutcomeRows> {
  if (rows.journals.length > 0 || rows.errors.length > 0)
    throw new Error('a chunk of rollback records produced journals or errors before they were settled');
  /** Journals withdrawn by this chunk: journal id → its reversal's id. */
  const taken = new Map<string, string>();
  const settled = planRollbacks(await candidatesOf(trx, adapter, rows.rollbacks), rows.rollbacks, taken);
  const withdrawn = taken.size === 0 ? new Set<string>() : await withdrawAll(trx, adapter, taken);
  const outcome: ChunkOutcome = { journals: [], errors: [] };
  for (const { request, outcome: one } of settled) {
    const kept = one.journals.filter(
      ({ draft }) => draft.reverses !== undefined && withdrawn.has(draft.reverses),
    );
    // Every journal it meant to withdraw was withdrawn by another transaction meanwhile.
    const again =
      one.journals.length > 0 && kept.length === 0 ? await settleRollback(trx, adapter, request) : undefined;
    outcome.journals.push(...(again?.journals ?? kept));
    outcome.errors.push(...(again?.errors ?? one.errors));
  }
  return outcomeRows(chunk, outcome, rows.at, rows.revision);
}
