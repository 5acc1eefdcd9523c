import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { canonicalConfiguration, emptyConfiguration, sectionCounts } from './document.js';
import { CONFIGURATION_FORMAT_VERSION, type ConfigurationDocument } from './model.js';
import type { ConfigurationSnapshots } from './snapshot.js';
import type { AuditEntry, ConfigurationStore, ProcessingDataCounts } from './store.js';
import type { ConfigurationValidation } from './validate.js';

/**
 * Checks an upload body completely (structure and every module's semantic checks). A function
 * given by the composition root, so that it decides where the CPU work of a large document
 * runs (a worker thread can take it off the event loop) and this module stays free of thread plumbing.
 */
export type ConfigurationValidator = (body: unknown) => Promise<ConfigurationValidation>;

/**
 * The answer to a successful upload, or to its dry run, with the revision stored after it (the
 * unchanged one after a dry run).
 */
export type UploadResult = {
  version: string;
  sections: Record<string, number>;
  revision: number;
} & ({ deleted: ProcessingDataCounts } | { wouldDelete: ProcessingDataCounts });

/**
 * The revisions a change is made against: it is made only when the stored revision is one of
 * them (checked in the transaction that makes it), so that what was read or checked is what is
 * replaced. Undefined: whatever is stored.
 */
export type RevisionCondition = readonly number[] | undefined;

/** Options of an upload: a dry run checks and counts, and changes nothing. */
export interface UploadOptions {
  dryRun?: boolean;
  ifRevisionIn?: RevisionCondition;
}

/** The error of a change whose revision condition failed (`configuration-changed`, 412). */
function configurationChanged(revision: number): AppError {
  return new AppError(
    'configuration-changed',
    `the configuration changed since it was read: it is at revision ${revision} now, so nothing was changed; read it again and decide anew`,
    { revision },
  );
}

/**
 * Configuration Data as a whole: download, all-or-nothing upload and deletion (each with a dry
 * run that only counts what would be wiped), each recorded in the audit log. Uploads are validated completely and prepared
 * (entity validators, accounting tables) before anything is written, so a configuration that
 * cannot be used is refused with a 400 and the stored one stays as it was. The validation (with
 * every module's semantic checks, `src/composition/configuration-checks.ts`) is given by the
 * caller, as the preparation is.
 */
export class ConfigurationService<T> {
  readonly #store: ConfigurationStore;
  readonly #snapshots: ConfigurationSnapshots<T>;
  readonly #clock: Clock;
  readonly #validate: ConfigurationValidator;

  constructor(
    store: ConfigurationStore,
    snapshots: ConfigurationSnapshots<T>,
    clock: Clock,
    validate: ConfigurationValidator,
  ) {
    this.#store = store;
    this.#snapshots = snapshots;
    this.#clock = clock;
    this.#validate = validate;
  }

  /** The whole document of the current revision, keys in canonical order, and that revision. */
  async download(downloadedBy: string): Promise<{ document: ConfigurationDocument; revision: number }> {
    const { stored } = await this.#snapshots.current();
    const nowMs = this.#clock.now().getTime();
    return {
      document: {
        configuration: canonicalConfiguration(stored.configuration),
        downloadTime: { seconds: Math.floor(nowMs / 1000), nanos: (nowMs % 1000) * 1_000_000 },
        downloadedBy,
        version: stored.version as ConfigurationDocument['version'],
      },
      revision: stored.revision,
    };
  }

  /**
   * The stored revision, read before what a dry run counts (so that counts read after a change
   * go with the revision before it, and a change made against that revision is refused), checked
   * against the condition. Errors: `configuration-changed` (412).
   */
  async #checkedRevision(condition: RevisionCondition): Promise<number> {
    const revision = await this.#store.readRevision();
    if (condition !== undefined && !condition.includes(revision)) throw configurationChanged(revision);
    return revision;
  }

  /**
   * Replaces the configuration and wipes the processing data, answering with the section counts
   * and what was deleted. A dry run validates and prepares exactly as an upload does, and
   * answers with what would be deleted instead, changing nothing. With `ifRevisionIn`, the
   * upload (or the dry run) is made only when the stored revision is one of those. Errors:
   * `configuration-invalid` (400) with every problem as `{ path, message }`;
   * `configuration-changed` (412) when the revision condition fails.
   */
  async upload(body: unknown, actor: string, options: UploadOptions = {}): Promise<UploadResult> {
    const result = await this.#validate(body);
    if (!result.ok) {
      const first = result.errors[0];
      throw new AppError(
        'configuration-invalid',
        `the configuration has ${result.errors.length} problem(s)${first === undefined ? '' : `; first: ${first.path} ${first.message}`}`,
        { errors: result.errors },
      );
    }
    const { configuration, version } = result.document;
    const stored = { revision: -1, version, configuration, updatedAt: null, updatedBy: actor };
    try {
      this.#snapshots.prepare(stored);
    } catch (error) {
      throw new AppError(
        'configuration-invalid',
        `the configuration cannot be prepared: ${(error as Error).message}`,
        {
          errors: [{ path: '/configuration', message: (error as Error).message }],
        },
      );
    }
    const sections = sectionCounts(configuration);
    if (options.dryRun === true) {
      const revision = await this.#checkedRevision(options.ifRevisionIn);
      return { version, sections, revision, wouldDelete: await this.#store.countProcessingData() };
    }
    const outcome = await this.#store.replace({
      version,
      configuration,
      at: this.#clock.now().toISOString(),
      actor,
      action: 'configuration.upload',
      sections,
      ifRevisionIn: options.ifRevisionIn,
    });
    if (!outcome.replaced) throw configurationChanged(outcome.revision);
    return { version, sections, revision: outcome.revision, deleted: outcome.deleted };
  }

  /**
   * Empties the configuration and wipes the processing data; users, credentials and the audit
   * log stay. Answers with what was deleted, as the audit entry records it, and the new
   * revision. With `ifRevisionIn`, only when the stored revision is one of those. Errors:
   * `configuration-changed` (412) when that condition fails.
   */
  async wipe(
    actor: string,
    ifRevisionIn?: RevisionCondition,
  ): Promise<{ deleted: ProcessingDataCounts; revision: number }> {
    const configuration = emptyConfiguration();
    const outcome = await this.#store.replace({
      version: CONFIGURATION_FORMAT_VERSION,
      configuration,
      at: this.#clock.now().toISOString(),
      actor,
      action: 'configuration.delete',
      sections: sectionCounts(configuration),
      ifRevisionIn,
    });
    if (!outcome.replaced) throw configurationChanged(outcome.revision);
    return { deleted: outcome.deleted, revision: outcome.revision };
  }

  /**
   * The dry run of {@link wipe}: what it would delete now, and the revision it was counted
   * against. Changes nothing. Errors: `configuration-changed` (412) when the revision
   * condition fails.
   */
  async wipeDryRun(
    ifRevisionIn?: RevisionCondition,
  ): Promise<{ wouldDelete: ProcessingDataCounts; revision: number }> {
    const revision = await this.#checkedRevision(ifRevisionIn);
    return { wouldDelete: await this.#store.countProcessingData(), revision };
  }

  /** The audit log, newest first. */
  audit(page: number, limit: number): Promise<{ rows: AuditEntry[]; total: number }> {
    return this.#store.listAudit(page, limit);
  }
}
