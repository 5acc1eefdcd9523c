import { AppError } from '../../lib/errors.js';
import type { KeyedPage, PageStart } from '../../lib/keyed-page.js';
import type { ConfigurationSnapshots } from '../configuration/snapshot.js';
import { lineRecord } from './line-record.js';
import type { PreparedAccountingRevision, PreparedJournalDefinition } from './prepare.js';
import type {
  AccountingStore,
  BalanceFilter,
  BalanceRow,
  JournalFilter,
  JournalKey,
  ProcessingErrorFilter,
  ProcessingErrorRow,
  StoredJournal,
} from './store.js';

/** A journal line as the API gives it: the record keyed by journal definition field names, plus `drCr`. */
export type JournalLineView = Record<string, unknown> & { drCr: 'DR' | 'CR' };

/** A journal as the API gives it (docs/reference.md, Journals). */
export type JournalView = Omit<StoredJournal, 'lines' | 'originJournalId'> & { lines: JournalLineView[] };

function view(journal: StoredJournal, definition: PreparedJournalDefinition): JournalView {
  const { lines, originJournalId: _origin, ...rest } = journal;
  return {
    ...rest,
    // Debit lines are positive, credit lines negative (docs/domain/accounting.md, Posting
    // patterns).
    lines: lines.map((line) => ({
      ...lineRecord(definition, journal, line),
      drCr: line.amount.startsWith('-') ? 'CR' : 'DR',
    })),
  };
}

/**
 * The read side of accounting (docs/reference.md, Journals): journals, balances and processing
 * errors. Balances sum the signed line amounts of posted journals exactly, in SQL (NUMERIC on
 * PostgreSQL, an exact decimal aggregate on SQLite).
 */
export class JournalQueries {
  readonly #store: AccountingStore;
  readonly #snapshots: ConfigurationSnapshots<PreparedAccountingRevision>;

  /** Line records are rebuilt with the journal definition of the current configuration. */
  constructor(store: AccountingStore, snapshots: ConfigurationSnapshots<PreparedAccountingRevision>) {
    this.#store = store;
    this.#snapshots = snapshots;
  }

  async #definition(): Promise<PreparedJournalDefinition> {
    return (await this.#snapshots.current()).prepared.accounting.journalDefinition;
  }

  /**
   * A page of journals by core date, by page number, with the number of journals matching
   * `filter`; `from` and `to` are calendar days (checked by the route).
   */
  async list(
    filter: JournalFilter,
    page: number,
    limit: number,
  ): Promise<KeyedPage<JournalView, JournalKey> & { total: number }> {
    const [found, total] = await Promise.all([
      this.#page(filter, { page }, limit),
      this.#store.countJournals(filter),
    ]);
    return { ...found, total };
  }

  /**
   * A page of journals by core date after the journal whose key is `after`, counting nothing:
   * every page costs the same however deep (docs/decisions.md, Cursor paging).
   */
  listAfter(
    filter: JournalFilter,
    after: JournalKey,
    limit: number,
  ): Promise<KeyedPage<JournalView, JournalKey>> {
    return this.#page(filter, { after }, limit);
  }

  async #page(
    filter: JournalFilter,
    start: PageStart<JournalKey>,
    limit: number,
  ): Promise<KeyedPage<JournalView, JournalKey>> {
    const { rows, next } = await this.#store.listJournals(filter, start, limit);
    const definition = await this.#definition();
    return { rows: rows.map((journal) => view(journal, definition)), next };
  }

  /** One journal. Errors: `not-found`. */
  async get(journalId: string): Promise<JournalView> {
    const journal = await this.#store.findJournal(journalId);
    if (journal === undefined) throw new AppError('not-found', `no journal ${journalId}`);
    return view(journal, await this.#definition());
  }

  /**
   * Balances per accounting configuration, node, account and currency over posted journals
   * with core date on or before `asOf`. Without `asOf`, every posted journal counts: a journal
   * is posted exactly when its core date has reached its node's business date, so the balances
   * are those of today (docs/domain/accounting.md, Balances).
   */
  async balances(filter: BalanceFilter): Promise<BalanceRow[]> {
    return this.#store.balances(filter);
  }

  /** A page of processing errors in the order written, by page number, with their number. */
  async processingErrors(
    filter: ProcessingErrorFilter,
    page: number,
    limit: number,
  ): Promise<KeyedPage<ProcessingErrorRow, number> & { total: number }> {
    const [found, total] = await Promise.all([
      this.#store.listProcessingErrors(filter, { page }, limit),
      this.#store.countProcessingErrors(filter),
    ]);
    return { ...found, total };
  }

  /** A page of processing errors after the one whose id is `after`, counting nothing. */
  processingErrorsAfter(
    filter: ProcessingErrorFilter,
    after: number,
    limit: number,
  ): Promise<KeyedPage<ProcessingErrorRow, number>> {
    return this.#store.listProcessingErrors(filter, { after }, limit);
  }
}
