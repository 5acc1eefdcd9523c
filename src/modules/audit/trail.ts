import type { KeyedPage, PageStart } from '../../lib/keyed-page.js';
import type { AuditEntry, ChainHead } from './entry.js';
import type { AuditStore } from './store.js';
import { type ChainReport, verifyChain } from './verify.js';

/** Entries read per query by an export or a verification: memory stays bounded whatever the length. */
export const AUDIT_CHAIN_READ_ROWS = 500;

/**
 * The audit trail as readers see it (docs/reference.md, Audit trail): its pages, its export in
 * the order it was written, and the verification of the stored chain against its head. The
 * entries are written by the stores of the changes themselves, in the same transaction.
 */
export class AuditTrail {
  readonly #store: AuditStore;

  constructor(store: AuditStore) {
    this.#store = store;
  }

  /** A page of entries, newest first; `total` only for a numbered page (it costs a count). */
  async list(
    start: PageStart<number>,
    limit: number,
  ): Promise<KeyedPage<AuditEntry, number> & { total?: number }> {
    const page = await this.#store.listEntries(start, limit);
    return 'page' in start ? { ...page, total: await this.#store.countEntries() } : page;
  }

  /** Every entry at a position past `afterSeq` (0: all), in the order written, read page by page. */
  async *entries(afterSeq = 0): AsyncGenerator<AuditEntry> {
    let afterId = afterSeq === 0 ? 0 : await this.#store.idBeforeSeq(afterSeq);
    for (;;) {
      const rows = await this.#store.readChain(afterId, AUDIT_CHAIN_READ_ROWS);
      yield* rows;
      const last = rows.at(-1);
      if (last === undefined || rows.length < AUDIT_CHAIN_READ_ROWS) return;
      afterId = last.id;
    }
  }

  /** The chain head: the last position handed out and its hash. */
  head(): Promise<ChainHead> {
    return this.#store.readHead();
  }

  /**
   * Verifies the whole stored chain from its first entry to its head; names the first bad
   * entry (changed, deleted, reordered or inserted). Reads every entry once.
   */
  async verify(): Promise<ChainReport> {
    const head = await this.#store.readHead();
    return verifyChain(this.entries(), {
      start: 'genesis',
      head,
      hasSeq: (seq) => this.#store.hasSeq(seq),
      refreshHead: () => this.#store.readHead(),
    });
  }
}
