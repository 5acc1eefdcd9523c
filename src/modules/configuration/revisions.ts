import { AppError } from '../../lib/errors.js';
import type { KeyedPage } from '../../lib/keyed-page.js';
import { type ConfigurationDiff, diffConfigurations } from './diff.js';
import { canonicalConfiguration, emptyConfiguration } from './document.js';
import type { ConfigurationStore, RevisionDocument, RevisionSummary } from './store.js';

/** Two revisions compared, by their summaries, and the changes from the first to the second. */
export interface RevisionDiff extends ConfigurationDiff {
  /** Null when the revision compared has none kept before it (it is compared with the empty configuration). */
  from: RevisionSummary | null;
  to: RevisionSummary;
}

/**
 * The configuration revisions, read side: every upload and deletion made one, kept with its
 * document (`ConfigurationService` writes them with each change). Lists newest first, one
 * revision with its configuration in canonical order, and the changes between two.
 */
export class ConfigurationRevisions {
  readonly #store: ConfigurationStore;

  constructor(store: ConfigurationStore) {
    this.#store = store;
  }

  /** A page of revisions by page number, newest first, with the number kept. */
  async list(page: number, limit: number): Promise<KeyedPage<RevisionSummary, number> & { total: number }> {
    const [found, total] = await Promise.all([
      this.#store.listRevisions({ page }, limit),
      this.#store.countRevisions(),
    ]);
    return { ...found, total };
  }

  /** The page of revisions older than revision `after`, newest first, counting nothing. */
  listAfter(after: number, limit: number): Promise<KeyedPage<RevisionSummary, number>> {
    return this.#store.listRevisions({ after }, limit);
  }

  /** One revision with its configuration in canonical order. Errors: `not-found` (404). */
  async get(revision: number): Promise<RevisionDocument> {
    const found = await this.#store.readRevisionDocument(revision);
    if (found === undefined) throw new AppError('not-found', `no configuration revision ${revision} is kept`);
    return { ...found, configuration: canonicalConfiguration(found.configuration) };
  }

  /**
   * The changes that lead to revision `revision`: from revision `from` (older or newer), or by
   * default from the revision kept before it, to it, by JSON Pointer into the configuration each
   * change is found in (`diff.ts`). The first revision kept is compared with the empty
   * configuration, and `from` is then null. Errors: `not-found` (404) naming a revision that is
   * not kept.
   */
  async diff(revision: number, from?: number): Promise<RevisionDiff> {
    const to = await this.get(revision);
    let base: RevisionDocument | undefined;
    if (from !== undefined) base = await this.get(from);
    else {
      const before = (await this.#store.listRevisions({ after: revision }, 1)).rows[0];
      if (before !== undefined) base = await this.get(before.revision);
    }
    return {
      from: base === undefined ? null : summaryOf(base),
      to: summaryOf(to),
      ...diffConfigurations(base?.configuration ?? emptyConfiguration(), to.configuration),
    };
  }
}

function summaryOf(revision: RevisionDocument): RevisionSummary {
  const { configuration: _configuration, ...summary } = revision;
  return summary;
}
