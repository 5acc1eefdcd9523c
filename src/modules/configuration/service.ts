import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { canonicalConfiguration, emptyConfiguration, sectionCounts } from './document.js';
import { CONFIGURATION_FORMAT_VERSION, type ConfigurationDocument } from './model.js';
import type { ConfigurationSnapshots } from './snapshot.js';
import type { AuditEntry, ConfigurationStore } from './store.js';
import { validateConfigurationDocument } from './validate.js';

/** The answer to a successful upload (contract 3). */
export interface UploadResult {
  version: string;
  sections: Record<string, number>;
}

/**
 * Configuration Data as a whole (seed 4.8-4.10, contract 3): download, all-or-nothing upload
 * and deletion, each recorded in the audit log. Uploads are validated completely and prepared
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
   * Replaces the configuration and wipes the processing data. Errors: `configuration-invalid`
   * (400) with every problem as `{ path, message }`.
   */
  async upload(body: unknown, actor: string): Promise<UploadResult> {
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
    await this.#store.replace({
      version,
      configuration,
      at: this.#clock.now().toISOString(),
      actor,
      action: 'configuration.upload',
      sections,
    });
    return { version, sections };
  }

  /** Empties the configuration and wipes the processing data; users and credentials stay. */
  async wipe(actor: string): Promise<void> {
    const configuration = emptyConfiguration();
    await this.#store.replace({
      version: CONFIGURATION_FORMAT_VERSION,
      configuration,
      at: this.#clock.now().toISOString(),
      actor,
      action: 'configuration.delete',
      sections: sectionCounts(configuration),
    });
  }

  /** The audit log, newest first. */
  audit(page: number, limit: number): Promise<{ rows: AuditEntry[]; total: number }> {
    return this.#store.listAudit(page, limit);
  }
}
