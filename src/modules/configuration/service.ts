import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { canonicalConfiguration, emptyConfiguration, sectionCounts } from './document.js';
import { CONFIGURATION_FORMAT_VERSION, type ConfigurationDocument } from './model.js';
import type { ConfigurationSnapshots } from './snapshot.js';
import type { AuditEntry, ConfigurationStore, ProcessingDataCounts } from './store.js';
import { validateConfigurationDocument } from './validate.js';

/** The answer to a successful upload, or to its dry run. */
export type UploadResult = {
  version: string;
  sections: Record<string, number>;
} & ({ deleted: ProcessingDataCounts } | { wouldDelete: ProcessingDataCounts });

/** Options of an upload: a dry run checks and counts, and changes nothing. */
export interface UploadOptions {
  dryRun?: boolean;
}

/**
 * Configuration Data as a whole: download, all-or-nothing upload and deletion (each with a dry
 * run that only counts what would be wiped), each recorded in the audit log. Uploads are validated completely and prepared
 * (entity validators, accounting tables) before anything is written, so a configuration that
 * cannot be used is refused with a 400 and the stored one stays as it was.
 */
export class ConfigurationService<T> {
  readonly #store: ConfigurationStore;
  readonly #snapshots: ConfigurationSnapshots<T>;
  readonly #clock: Clock;

  constructor(store: ConfigurationStore, snapshots: ConfigurationSnapshots<T>, clock: Clock) {
    this.#store = store;
    this.#snapshots = snapshots;
    this.#clock = clock;
  }

  /** The whole document of the current revision, keys in canonical order. */
  async download(downloadedBy: string): Promise<ConfigurationDocument> {
    const { stored } = await this.#snapshots.current();
    const nowMs = this.#clock.now().getTime();
    return {
      configuration: canonicalConfiguration(stored.configuration),
      downloadTime: { seconds: Math.floor(nowMs / 1000), nanos: (nowMs % 1000) * 1_000_000 },
      downloadedBy,
      version: stored.version as ConfigurationDocument['version'],
    };
  }

  /**
   * Replaces the configuration and wipes the processing data, answering with the section counts
   * and what was deleted. A dry run validates and prepares exactly as an upload does, and
   * answers with what would be deleted instead, changing nothing. Errors:
   * `configuration-invalid` (400) with every problem as `{ path, message }`.
   */
  async upload(body: unknown, actor: string, options: UploadOptions = {}): Promise<UploadResult> {
    const result = validateConfigurationDocument(body);
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
      return { version, sections, wouldDelete: await this.#store.countProcessingData() };
    }
    const { deleted } = await this.#store.replace({
      version,
      configuration,
      at: this.#clock.now().toISOString(),
      actor,
      action: 'configuration.upload',
      sections,
    });
    return { version, sections, deleted };
  }

  /**
   * Empties the configuration and wipes the processing data; users, credentials and the audit
   * log stay. Answers with what was deleted, as the audit entry records it.
   */
  async wipe(actor: string): Promise<{ deleted: ProcessingDataCounts }> {
    const configuration = emptyConfiguration();
    const { deleted } = await this.#store.replace({
      version: CONFIGURATION_FORMAT_VERSION,
      configuration,
      at: this.#clock.now().toISOString(),
      actor,
      action: 'configuration.delete',
      sections: sectionCounts(configuration),
    });
    return { deleted };
  }

  /** The dry run of {@link wipe}: what it would delete now. Changes nothing. */
  async wipeDryRun(): Promise<{ wouldDelete: ProcessingDataCounts }> {
    return { wouldDelete: await this.#store.countProcessingData() };
  }

  /** The audit log, newest first. */
  audit(page: number, limit: number): Promise<{ rows: AuditEntry[]; total: number }> {
    return this.#store.listAudit(page, limit);
  }
}
