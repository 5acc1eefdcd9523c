import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import type { ConfigurationError } from './configuration-errors.js';
import {
  canonicalConfiguration,
  canonicalConfigurationText,
  emptyConfiguration,
  sectionCounts,
} from './document.js';
import { CONFIGURATION_FORMAT_VERSION, type Configuration, type ConfigurationDocument } from './model.js';
import type { ConfigurationSnapshots } from './snapshot.js';
import type { AuditEntry, ConfigurationStore, ProcessingDataCounts, StoredConfiguration } from './store.js';

/**
 * What checking an upload found: a valid document (every section present), the problems of an
 * invalid one, or why a document that passed every check could not be prepared.
 */
export type CheckedUpload =
  | { readonly kind: 'valid'; readonly version: string; readonly configuration: Configuration }
  | { readonly kind: 'invalid'; readonly errors: ConfigurationError[] }
  | { readonly kind: 'unprepared'; readonly message: string };

/**
 * Checks an upload body completely: structure, every module's semantic checks and a whole
 * preparation (entity validators, accounting tables). A function given by the composition root,
 * so that it decides where the CPU work of a large document runs (a worker thread takes it off the
 * event loop) and this module stays free of thread plumbing. The body is a parsed value, or the
 * raw bytes of a request (a `Uint8Array`), which the validator parses and refuses as a request
 * (`malformed-json`, `validation-failed`) when it cannot be read.
 */
export type ConfigurationValidator = (body: unknown) => Promise<CheckedUpload>;

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
 * run that only counts what would be wiped), each recorded in the audit log. Uploads are
 * validated completely and prepared (entity validators, accounting tables) before anything is
 * written, so a configuration that cannot be used is refused with a 400 and the stored one stays
 * as it was. The check (every module's semantic checks and the preparation,
 * `src/composition/configuration-reader.ts`) is given by the caller, as the preparation of the
 * snapshots is.
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
    const { stored, about } = await this.#downloaded(downloadedBy);
    return {
      document: { configuration: canonicalConfiguration(stored.configuration), ...about },
      revision: stored.revision,
    };
  }

  /**
   * The JSON text of {@link download}'s document, in pieces of at most one section element each
   * (`canonicalConfigurationText`), and its revision: joined, the pieces are exactly
   * `JSON.stringify` of that document, and a large one is written out without holding the event
   * loop for the whole ordering and printing.
   */
  async downloadText(downloadedBy: string): Promise<{ text: Iterable<string>; revision: number }> {
    const { stored, about } = await this.#downloaded(downloadedBy);
    function* text(): Generator<string> {
      yield '{"configuration":';
      yield* canonicalConfigurationText(stored.configuration);
      yield `,${JSON.stringify(about).slice(1)}`;
    }
    return { text: text(), revision: stored.revision };
  }

  /** The stored configuration of a download, and the members a download adds to it, in their order. */
  async #downloaded(downloadedBy: string): Promise<{
    stored: StoredConfiguration;
    about: Omit<ConfigurationDocument, 'configuration'>;
  }> {
    const { stored } = await this.#snapshots.current();
    const nowMs = this.#clock.now().getTime();
    return {
      stored,
      about: {
        downloadTime: { seconds: Math.floor(nowMs / 1000), nanos: (nowMs % 1000) * 1_000_000 },
        downloadedBy,
        version: stored.version as ConfigurationDocument['version'],
      },
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
   * `configuration-changed` (412) when the revision condition fails; for a raw body the
   * validator cannot read, `malformed-json` or `validation-failed` (400).
   */
  async upload(body: unknown, actor: string, options: UploadOptions = {}): Promise<UploadResult> {
    const checked = await this.#validate(body);
    if (checked.kind === 'invalid') {
      const first = checked.errors[0];
      throw new AppError(
        'configuration-invalid',
        `the configuration has ${checked.errors.length} problem(s)${first === undefined ? '' : `; first: ${first.path} ${first.message}`}`,
        { errors: checked.errors },
      );
    }
    if (checked.kind === 'unprepared') {
      throw new AppError(
        'configuration-invalid',
        `the configuration cannot be prepared: ${checked.message}`,
        {
          errors: [{ path: '/configuration', message: checked.message }],
        },
      );
    }
    const { configuration, version } = checked;
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
