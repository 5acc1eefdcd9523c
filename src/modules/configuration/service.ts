/**
 * The configuration service: download, the upload, the upload that keeps the processing data,
 * the wipe, their dry runs and the bound variants an approval runs. They share private checks
 * (`#checked`, `#keepCheck`, `#uploadChecked`), the change of a revision through the change
 * runner (`#change`, `changes.ts`) and the snapshot cache, so they stay one class; the errors of
 * a change that cannot be made are in change-errors.ts, and what an approved change is bound to
 * and comes to in bound-changes.ts.
 */
import type { Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import type { AuditActor } from '../audit/entry.js';
import { BindingMoved, type ChangeOptions, type ChangeRunner } from '../changes/runner.js';
import { type BoundChange, type BoundOutcome, revisionMoved } from './bound-changes.js';
import { changeUnsafe, configurationChanged } from './change-errors.js';
import {
  type ConfigurationChanged,
  type ConfigurationChangeKind,
  type ConfigurationChangeRequest,
  type ConfigurationChangeTables,
  NOTHING_DELETED,
  revisionDocument,
  runConfigurationChange,
} from './changes.js';
import { type ConfigurationError, pointer } from './configuration-errors.js';
import { type ConfigurationDiff, diffConfigurations } from './diff.js';
import {
  canonicalConfiguration,
  canonicalConfigurationText,
  downloadMembers,
  emptyConfiguration,
  sectionCounts,
} from './document.js';
import type {
  BlockingChange,
  KeepPossibility,
  StoredDataRisk,
  StoredDataRisks,
  WhatIfAnswer,
} from './keep-data.js';
import { CONFIGURATION_FORMAT_VERSION, type Configuration, type ConfigurationDocument } from './model.js';
import type { ConfigurationSnapshots } from './snapshot.js';
import type { ConfigurationStore, KeepCheck, ProcessingDataCounts, StoredConfiguration } from './store.js';

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
 * unchanged one after a dry run). A dry run says whether the upload could keep the processing
 * data, and a dry run that keeps it how many failed records would post (`whatIf`, when the
 * composition root gives the function that tells).
 */
export type UploadResult = {
  version: string;
  sections: Record<string, number>;
  revision: number;
} & (
  | {
      deleted: ProcessingDataCounts;
      /** The first answer of its `Idempotency-Key`, given again. */
      replayed?: true;
    }
  | { wouldDelete: ProcessingDataCounts; keepProcessingData: KeepPossibility; whatIf?: WhatIfAnswer }
);

/**
 * Runs the records that failed processing through a candidate configuration without writing
 * anything, and tells how many would post. Given by the composition root, which prepares the
 * candidate as processing does and decides which failed records are run.
 */
export type WhatIf = (candidate: StoredConfiguration) => Promise<WhatIfAnswer>;

/** What the configuration service is given besides its store: how changes are judged against stored data. */
export interface ConfigurationServiceOptions {
  risks: StoredDataRisks;
  whatIf?: WhatIf | undefined;
}

/**
 * Times a change that keeps the processing data is checked and tried when another change lands
 * between its check and its write; then it answers `configuration-changed`.
 */
const KEEP_ATTEMPTS_MAX = 3;

/**
 * The risks with their paths made JSON Pointers into the uploaded document, as the problems of a
 * 400 are (`/configuration/entities/0/attributes/3/type`): the risks are read from two
 * configurations, so their paths start inside one. A user then finds a member under one name
 * whether the upload was refused as invalid or as unsafe for the stored data, and only a
 * document pointer can name every problem of a 400 (`/version` is outside the configuration).
 */
function inDocument(risks: readonly StoredDataRisk[]): StoredDataRisk[] {
  const configuration = pointer('configuration');
  return risks.map((risk) => ({ ...risk, path: `${configuration}${risk.path}` }));
}

/**
 * The revisions a change is made against: it is made only when the stored revision is one of
 * them (checked in the transaction that makes it), so that what was read or checked is what is
 * replaced. Undefined: whatever is stored.
 */
export type RevisionCondition = readonly number[] | undefined;

/**
 * Options of an upload: a dry run checks and counts, and changes nothing; `keepProcessingData`
 * keeps every session, record, journal and error, when the stored data allows the change.
 */
export interface UploadOptions {
  dryRun?: boolean;
  ifRevisionIn?: RevisionCondition;
  keepProcessingData?: boolean;
  /** The caller's `Idempotency-Key` (not read by a dry run). */
  idempotencyKey?: string | undefined;
}

/**
 * Configuration Data as a whole: download, all-or-nothing upload and deletion (each with a dry
 * run that only counts what would be wiped), each recorded in the audit log and kept as a
 * numbered revision; an upload may keep the processing data when the stored data allows the
 * change (docs/adr/0018-keep-data-safety.md). Uploads are validated completely and prepared
 * (entity validators, accounting tables) before anything is written, so a configuration that
 * cannot be used is refused with a 400 and the stored one stays as it was. The check (every
 * module's semantic checks and the preparation, `src/composition/configuration-reader.ts`), the
 * risks of a change for stored data and the what-if are given by the caller, as the preparation
 * of the snapshots is.
 */
export class ConfigurationService<T> {
  readonly #store: ConfigurationStore;
  readonly #runner: ChangeRunner<ConfigurationChangeTables>;
  readonly #snapshots: ConfigurationSnapshots<T>;
  readonly #clock: Clock;
  readonly #validate: ConfigurationValidator;
  readonly #options: ConfigurationServiceOptions;

  constructor(
    store: ConfigurationStore,
    runner: ChangeRunner<ConfigurationChangeTables>,
    snapshots: ConfigurationSnapshots<T>,
    clock: Clock,
    validate: ConfigurationValidator,
    options: ConfigurationServiceOptions,
  ) {
    this.#store = store;
    this.#runner = runner;
    this.#snapshots = snapshots;
    this.#clock = clock;
    this.#validate = validate;
    this.#options = options;
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
    return { stored, about: downloadMembers(this.#clock.now().getTime(), downloadedBy, stored.version) };
  }

  /**
   * The stored revision, read before what a dry run counts (so that counts read after a change
   * go with the revision before it, and a change made against that revision is refused), checked
   * against the condition; also what an action that waits for approval checks `If-Match`
   * against when it is made. Errors: `configuration-changed` (412).
   */
  async checkedRevision(condition: RevisionCondition): Promise<number> {
    const revision = await this.#store.readRevision();
    if (condition !== undefined && !condition.includes(revision)) throw configurationChanged(revision);
    return revision;
  }

  /**
   * Replaces the configuration and wipes the processing data, answering with the section counts
   * and what was deleted. A dry run validates and prepares exactly as an upload does, and
   * answers with what would be deleted instead, and whether the upload could keep the
   * processing data, changing nothing. With `keepProcessingData`, nothing is wiped: the change
   * is made only when the stored data allows it (docs/adr/0018-keep-data-safety.md), and its dry
   * run adds `whatIf` when the service was given that function. With `ifRevisionIn`, the upload
   * (or the dry run) is made only when the stored revision is one of those. Errors:
   * `configuration-invalid` (400) with every problem as `{ path, message }`;
   * `configuration-change-unsafe` (409) with every blocking change as `{ path, reason }`;
   * `configuration-changed` (412) when the revision condition fails; for a raw body the
   * validator cannot read, `malformed-json` or `validation-failed` (400).
   */
  async upload(body: unknown, actor: AuditActor, options: UploadOptions = {}): Promise<UploadResult> {
    return this.#uploadChecked(await this.#checked(body), actor, options);
  }

  /**
   * The body checked completely. Errors: `configuration-invalid` (400) with every problem; for
   * a raw body the validator cannot read, `malformed-json` or `validation-failed` (400).
   */
  async #checked(body: unknown): Promise<{ configuration: Configuration; version: string }> {
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
    return { configuration: checked.configuration, version: checked.version };
  }

  /** {@link upload} of a checked document. */
  async #uploadChecked(
    checked: { configuration: Configuration; version: string },
    actor: AuditActor,
    options: UploadOptions,
  ): Promise<UploadResult> {
    const { configuration, version } = checked;
    const sections = sectionCounts(configuration);
    if (options.keepProcessingData === true)
      return this.#uploadKeeping(configuration, version, actor, options);
    if (options.dryRun === true) {
      const revision = await this.checkedRevision(options.ifRevisionIn);
      const wouldDelete = await this.#store.countProcessingData();
      const { blocking } = await this.#keepCheck(configuration);
      const keepProcessingData: KeepPossibility =
        blocking.length === 0 ? { possible: true } : { possible: false, blocking };
      return { version, sections, revision, wouldDelete, keepProcessingData };
    }
    const changed = await this.#change(
      'upload',
      { version, configuration, ifRevisionIn: options.ifRevisionIn },
      { actor, idempotencyKey: options.idempotencyKey },
    );
    return { version, sections, ...changed };
  }

  /**
   * The risks of changing the stored configuration to `candidate`, which of them the data stored
   * now makes blocking, and the revision they were judged against.
   */
  async #keepCheck(
    candidate: Configuration,
  ): Promise<KeepCheck & { revision: number; blocking: BlockingChange[] }> {
    // The snapshot of the current revision: its document is parsed once per revision, not here.
    const { stored } = await this.#snapshots.current();
    const risks = inDocument(this.#options.risks(stored.configuration, candidate));
    const { blocking, checkedUpTo } =
      risks.length === 0 ? { blocking: [], checkedUpTo: 0 } : await this.#store.checkStoredData(risks);
    return { revision: stored.revision, risks, checkedUpTo, blocking };
  }

  /**
   * The upload (or dry run) that keeps the processing data: checked against the stored data
   * before the transaction (in bounded steps where the store needs them), then again inside it
   * for what was stored since; tried again when another change lands in between, at most
   * KEEP_ATTEMPTS_MAX times.
   */
  async #uploadKeeping(
    configuration: Configuration,
    version: string,
    actor: AuditActor,
    options: UploadOptions,
  ): Promise<UploadResult> {
    const sections = sectionCounts(configuration);
    const condition = options.ifRevisionIn;
    for (let attempt = 1; ; attempt += 1) {
      const check = await this.#keepCheck(configuration);
      if (condition !== undefined && !condition.includes(check.revision))
        throw configurationChanged(check.revision);
      if (check.blocking.length > 0) throw changeUnsafe(check.blocking);
      if (options.dryRun === true) {
        const whatIf = await this.#options.whatIf?.({
          revision: check.revision + 1,
          version,
          configuration,
          updatedAt: this.#clock.now().toISOString(),
          updatedBy: actor.user,
        });
        const answer: UploadResult = {
          version,
          sections,
          revision: check.revision,
          wouldDelete: NOTHING_DELETED,
          keepProcessingData: { possible: true },
        };
        return whatIf === undefined ? answer : { ...answer, whatIf };
      }
      try {
        const keep = { risks: check.risks, checkedUpTo: check.checkedUpTo };
        const changed = await this.#change(
          'upload',
          { version, configuration, ifRevisionIn: [check.revision], keep },
          { actor, idempotencyKey: options.idempotencyKey },
        );
        return { version, sections, ...changed };
      } catch (error) {
        const moved = error instanceof AppError && error.code === 'configuration-changed';
        if (!moved || condition !== undefined || attempt >= KEEP_ATTEMPTS_MAX) throw error;
      }
    }
  }

  /**
   * Empties the configuration and wipes the processing data; users, credentials and the audit
   * log stay. Answers with what was deleted, as the audit entry records it, and the new
   * revision. With `ifRevisionIn`, only when the stored revision is one of those; under an
   * `Idempotency-Key`, a repeat answers the first answer again (`replayed`). Errors:
   * `configuration-changed` (412) when that condition fails, `idempotency-key-reused`.
   */
  async wipe(
    actor: AuditActor,
    ifRevisionIn?: RevisionCondition,
    idempotencyKey?: string,
  ): Promise<ConfigurationChanged & { replayed?: true }> {
    const configuration = emptyConfiguration();
    return this.#change(
      'delete',
      { version: CONFIGURATION_FORMAT_VERSION, configuration, ifRevisionIn },
      { actor, idempotencyKey },
    );
  }

  /**
   * The dry run of {@link wipe}: what it would delete now, and the revision it was counted
   * against. Changes nothing. Errors: `configuration-changed` (412) when the revision
   * condition fails.
   */
  async wipeDryRun(
    ifRevisionIn?: RevisionCondition,
  ): Promise<{ wouldDelete: ProcessingDataCounts; revision: number }> {
    const revision = await this.checkedRevision(ifRevisionIn);
    return { wouldDelete: await this.#store.countProcessingData(), revision };
  }

  /**
   * What an approver of an upload is shown (docs/domain/approvals.md): the upload's dry run
   * (as {@link upload} with `dryRun` answers it), the SHA-256 of the document's canonical text
   * (as its revision would keep it) and the changes from the stored configuration. Changes
   * nothing. Errors: those of {@link upload}.
   */
  async review(
    body: unknown,
    actor: AuditActor,
    keepProcessingData: boolean,
  ): Promise<{ dryRun: UploadResult; documentSha256: string; diff: ConfigurationDiff }> {
    const checked = await this.#checked(body);
    const dryRun = await this.#uploadChecked(checked, actor, { dryRun: true, keepProcessingData });
    const { stored } = await this.#snapshots.current();
    return {
      dryRun,
      documentSha256: revisionDocument(checked.configuration).sha256,
      diff: diffConfigurations(stored.configuration, checked.configuration),
    };
  }

  /**
   * The upload of an approved request: made only while the document still hashes to
   * `bound.documentSha256`, the stored revision is `bound.revision` and, for an upload that
   * wipes, what it wipes is exactly `bound.wouldDelete` (counted under the upload's locks, in the
   * change's transaction, which marks the request `approved`); otherwise nothing changes and the
   * answer is `moved`, saying what moved. Errors: those of {@link upload}.
   */
  async uploadBound(
    body: unknown,
    actor: AuditActor,
    bound: BoundChange & { documentSha256: string; keepProcessingData: boolean },
  ): Promise<BoundOutcome> {
    const { configuration, version } = await this.#checked(body);
    const document = revisionDocument(configuration);
    if (document.sha256 !== bound.documentSha256)
      return { kind: 'moved', detail: 'the document no longer has the hash that was approved' };
    let keep: KeepCheck | undefined;
    if (bound.keepProcessingData) {
      const check = await this.#keepCheck(configuration);
      if (check.revision !== bound.revision) return revisionMoved(bound.revision, check.revision);
      if (check.blocking.length > 0) throw changeUnsafe(check.blocking);
      keep = { risks: check.risks, checkedUpTo: check.checkedUpTo };
    }
    const wouldDelete = keep === undefined ? bound.wouldDelete : undefined;
    return this.#bound(
      'upload',
      { version, configuration, document, keep, bound: { revision: bound.revision, wouldDelete } },
      actor,
      bound.approvalRequestId,
    );
  }

  /**
   * The deletion of an approved request, made only while the stored revision is
   * `bound.revision` and what it wipes is exactly `bound.wouldDelete`; otherwise `moved`.
   */
  async wipeBound(actor: AuditActor, bound: BoundChange): Promise<BoundOutcome> {
    return this.#bound(
      'delete',
      {
        version: CONFIGURATION_FORMAT_VERSION,
        configuration: emptyConfiguration(),
        bound: { revision: bound.revision, wouldDelete: bound.wouldDelete },
      },
      actor,
      bound.approvalRequestId,
    );
  }

  /** The SHA-256 of the empty configuration's canonical text: the document a deletion stores. */
  emptyDocumentSha256(): string {
    return revisionDocument(emptyConfiguration()).sha256;
  }

  /** The change `kind` of an approved request: `done`, or `moved` when its binding moved. */
  async #bound(
    kind: ConfigurationChangeKind,
    input: ConfigurationChangeRequest,
    actor: AuditActor,
    approvalRequestId: string,
  ): Promise<BoundOutcome> {
    try {
      const { revision, deleted } = await this.#change(kind, input, { actor, approvalRequestId });
      return { kind: 'done', revision, deleted };
    } catch (error) {
      if (error instanceof BindingMoved) return { kind: 'moved', detail: error.detail };
      throw error;
    }
  }

  /** The change `kind` through the change runner (`runConfigurationChange`). */
  #change(
    kind: ConfigurationChangeKind,
    request: ConfigurationChangeRequest,
    options: ChangeOptions,
  ): Promise<ConfigurationChanged & { replayed?: true }> {
    return runConfigurationChange(this.#runner, kind, request, options);
  }
}
