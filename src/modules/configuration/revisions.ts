import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import type { KeyedPage } from '../../lib/keyed-page.js';
import { type ConfigurationDiff, diffConfigurations } from './diff.js';
import { downloadMembers, emptyConfiguration } from './document.js';
import type { Configuration } from './model.js';
import type { ConfigurationStore, RevisionDocument, RevisionSummary } from './store.js';

/** Two revisions compared, by their summaries, and the changes from the first to the second. */
export interface RevisionDiff extends ConfigurationDiff {
  /** Null when the revision compared has none kept before it (it is compared with the empty configuration). */
  from: RevisionSummary | null;
  to: RevisionSummary;
}

function summaryOf(revision: RevisionDocument): RevisionSummary {
  const { documentText: _text, ...summary } = revision;
  return summary;
}

function configurationOf(revision: RevisionDocument): Configuration {
  return JSON.parse(revision.documentText) as Configuration;
}

/**
 * The configuration revisions, read side: every upload and deletion made one, kept with its
 * document in canonical order (`ConfigurationService` writes them with each change). Lists
 * newest first, one revision as a download gives a document, and the changes between two.
 */
export class ConfigurationRevisions {
  readonly #store: ConfigurationStore;
  readonly #clock: Clock;

  constructor(store: ConfigurationStore, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
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

  /** One revision with its document text. Errors: `not-found` (404). */
  async #read(revision: number): Promise<RevisionDocument> {
    const found = await this.#store.readRevisionDocument(revision);
    if (found === undefined) throw new AppError('not-found', `no configuration revision ${revision} is kept`);
    return found;
  }

  /**
   * Revision `revision` as a download gives a document, in pieces to write out (joined, the JSON
   * text of a `ConfigurationDocument`, which an upload takes back as it is), with its summary.
   * Errors: `not-found` (404).
   */
  async download(
    revision: number,
    downloadedBy: string,
  ): Promise<{ summary: RevisionSummary; text: Iterable<string> }> {
    const found = await this.#read(revision);
    const about = downloadMembers(this.#clock.now().getTime(), downloadedBy, found.version);
    // The kept text is the canonical configuration already: it is written out as it is.
    return {
      summary: summaryOf(found),
      text: ['{"configuration":', found.documentText, `,${JSON.stringify(about).slice(1)}`],
    };
  }

  /**
   * The changes that lead to revision `revision`: from revision `from` (older or newer), or by
   * default from the revision kept before it, to it, by JSON Pointer into the configuration each
   * change is found in (`diff.ts`). The first revision kept is compared with the empty
   * configuration, and `from` is then null. Errors: `not-found` (404) naming a revision that is
   * not kept.
   */
  async diff(revision: number, from?: number): Promise<RevisionDiff> {
    const to = await this.#read(revision);
    let base: RevisionDocument | undefined;
    if (from !== undefined) base = await this.#read(from);
    else {
      const before = (await this.#store.listRevisions({ after: revision }, 1)).rows[0];
      if (before !== undefined) base = await this.#read(before.revision);
    }
    return {
      from: base === undefined ? null : summaryOf(base),
      to: summaryOf(to),
      ...diffConfigurations(
        base === undefined ? emptyConfiguration() : configurationOf(base),
        configurationOf(to),
      ),
    };
  }
}
