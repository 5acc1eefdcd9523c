import { AppError } from '../../lib/errors.js';
import type {
  BalanceFilter,
  BalanceRow,
  JournalFilter,
  ProcessingErrorRow,
  ProcessingStore,
  StoredJournal,
} from './store.js';

/** A journal line as the API gives it: the record keyed by journal definition field names, plus `drCr`. */
export type JournalLineView = Record<string, unknown> & { drCr: 'DR' | 'CR' };

/** A journal as the API gives it (contract 6): as stored, with lines as records plus `drCr`. */
export type JournalView = Omit<StoredJournal, 'lines'> & { lines: JournalLineView[] };

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function checkDate(name: string, value: string | undefined): void {
  if (value === undefined) return;
  const ms = Date.parse(`${value}T00:00:00Z`);
  if (!DATE.test(value) || Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value) {
    throw new AppError('validation-failed', `${name} must be a date YYYY-MM-DD`, {
      errors: [{ path: `/querystring/${name}`, message: 'must be a date YYYY-MM-DD' }],
    });
  }
}

function view(journal: StoredJournal): JournalView {
  return {
    ...journal,
    // Debit lines are positive, credit lines negative (accounting.md 2).
    lines: journal.lines.map((line) => ({ ...line.record, drCr: line.amount.startsWith('-') ? 'CR' : 'DR' })),
  };
}

/**
 * The read side of accounting (contract 6): journals, balances and processing errors.
 * Balances sum the signed line amounts of posted journals exactly, in SQL (NUMERIC on
 * PostgreSQL, an exact decimal aggregate on SQLite).
 */
export class JournalQueries {
  readonly #store: ProcessingStore;

  constructor(store: ProcessingStore) {
    this.#store = store;
  }

  /** Journals by core date. Errors: `validation-failed` for a `from`/`to` that is not a date. */
  async list(
    filter: JournalFilter,
    page: number,
    limit: number,
  ): Promise<{ rows: JournalView[]; total: number }> {
    checkDate('from', filter.from);
    checkDate('to', filter.to);
    const { rows, total } = await this.#store.listJournals(filter, page, limit);
    return { rows: rows.map(view), total };
  }

  /** One journal. Errors: `not-found`. */
  async get(journalId: string): Promise<JournalView> {
    const journal = await this.#store.findJournal(journalId);
    if (journal === undefined) throw new AppError('not-found', `no journal ${journalId}`);
    return view(journal);
  }

  /**
   * Balances per accounting configuration, node, account and currency over posted journals
   * with core date on or before `asOf`. Without `asOf`, every posted journal counts: a journal
   * is posted exactly when its core date has reached its node's business date, which is the
   * default the contract names.
   */
  async balances(filter: BalanceFilter): Promise<BalanceRow[]> {
    checkDate('asOf', filter.asOf);
    return this.#store.balances(filter);
  }

  processingErrors(
    filter: { ingestionId?: string; code?: string },
    page: number,
    limit: number,
  ): Promise<{ rows: ProcessingErrorRow[]; total: number }> {
    return this.#store.listProcessingErrors(filter, page, limit);
  }
}
