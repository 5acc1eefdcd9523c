/**
 * A change of the configuration as the change runner (`modules/changes/runner.ts`) makes it: an
 * upload or a deletion, each stored as the next revision. The service reads and checks the
 * document first, and for an upload that keeps the processing data reads the stored data in
 * bounded steps (`service.ts`); the change, in the runner's transaction, takes the locks of a
 * change of the configuration, refuses a revision other than those asked for (`If-Match`, or the
 * one the keep check read), checks the data stored since the keep check or counts and wipes the
 * processing data, stores the revision, and answers it with what was deleted; the runner writes
 * its audit entry and its `configuration.changed` or `configuration.wiped` event. A change run for
 * an approved request is made only while the revision and what it wipes are those the approver
 * saw, else it throws `BindingMoved`.
 */
import { createHash } from 'node:crypto';
import { BindingMoved, type Change, type ChangeOptions, type ChangeRunner } from '../changes/runner.js';
import { changeEventOf } from '../events/types.js';
import { revisionMovedDetail } from './bound-changes.js';
import { changeUnsafe, configurationChanged } from './change-errors.js';
import { revisionDocumentText, sectionCounts } from './document.js';
import type { Configuration } from './model.js';
import type { ConfigurationTables, KeepCheck, ProcessingDataCounts } from './store.js';

/** The tables a change of the configuration writes. */
export interface ConfigurationChangeTables {
  configuration: ConfigurationTables;
}

/** What a change of the configuration is made with, as the service prepared it. */
export interface ConfigurationChangeInput {
  version: string;
  configuration: Configuration;
  /** The revision's canonical document text and its SHA-256 (hex). */
  document: { text: string; sha256: string };
  sections: Record<string, number>;
  /** The revisions it may replace (`If-Match`); unset: any. Another is 412 `configuration-changed`. */
  ifRevisionIn?: readonly number[] | undefined;
  /** Keep the processing data, checking what was stored since this check; unset: wipe it. */
  keep?: KeepCheck | undefined;
  /** For an approved request: the revision and, for a change that wipes, the counts it was bound to. */
  bound?: { revision: number; wouldDelete: ProcessingDataCounts | undefined } | undefined;
}

/** What a change of the configuration answers: the revision stored, and what it deleted. */
export interface ConfigurationChanged {
  revision: number;
  deleted: ProcessingDataCounts;
}

/** What a change that keeps the processing data deletes. */
export const NOTHING_DELETED: ProcessingDataCounts = {
  ingestions: 0,
  records: 0,
  journals: 0,
  journalLines: 0,
  processingErrors: 0,
};

/** Whether two counts of processing data are equal, member by member. */
function sameCounts(a: ProcessingDataCounts, b: ProcessingDataCounts): boolean {
  return (Object.keys(NOTHING_DELETED) as (keyof ProcessingDataCounts)[]).every((key) => a[key] === b[key]);
}

/** The change of `action`: an upload stores the given document, a deletion the empty one. */
function configurationChangeOf(
  action: 'configuration.upload' | 'configuration.delete',
): Change<ConfigurationChangeInput, ConfigurationChanged, ConfigurationChangeTables> {
  return {
    action,
    // The keep check and the binding are read for this attempt; the document by its hash.
    requestOf: ({ document, version, ifRevisionIn, keep }) => ({
      sha256: document.sha256,
      version,
      ifRevisionIn: ifRevisionIn ?? null,
      keepProcessingData: keep !== undefined,
    }),
    async apply(tx, input, { at, actor }) {
      const { version, document, sections, keep, bound } = input;
      const revision = await tx.configuration.lockForChange(at);
      if (bound !== undefined && revision !== bound.revision)
        throw new BindingMoved(revisionMovedDetail(bound.revision, revision));
      if (input.ifRevisionIn !== undefined && !input.ifRevisionIn.includes(revision))
        throw configurationChanged(revision);
      let deleted = NOTHING_DELETED;
      if (keep !== undefined) {
        const blocking = await tx.configuration.blockingChanges(keep.risks, keep.checkedUpTo);
        if (blocking.length > 0) throw changeUnsafe(blocking);
      } else {
        deleted = await tx.configuration.countProcessingData();
        if (bound?.wouldDelete !== undefined && !sameCounts(deleted, bound.wouldDelete))
          throw new BindingMoved(
            `the processing data it would delete changed: it would delete ${JSON.stringify(deleted)} now, not ${JSON.stringify(bound.wouldDelete)}`,
          );
        await tx.configuration.wipeProcessingData();
      }
      const next = revision + 1;
      const kind = action === 'configuration.delete' ? 'delete' : 'upload';
      await tx.configuration.storeRevision({ ...input, revision: next, at, actor: actor.user, action: kind });
      return {
        answer: { revision: next, deleted },
        audit: {
          before: { revision },
          after: { revision: next, version, sha256: document.sha256 },
          configuration: { version, revision: next, sections, deleted: { ...deleted } },
        },
        events: [
          kind === 'delete'
            ? changeEventOf('configuration.wiped', {
                revision: next,
                actor: actor.user,
                deleted: { ...deleted },
              })
            : changeEventOf('configuration.changed', {
                revision: next,
                version,
                actor: actor.user,
                processingData: keep === undefined ? 'wiped' : 'kept',
                deleted: { ...deleted },
              }),
        ],
      };
    },
  };
}

/** The upload and the deletion of the configuration. */
export const configurationChanges = {
  upload: configurationChangeOf('configuration.upload'),
  delete: configurationChangeOf('configuration.delete'),
} as const;

/** Which change of the configuration: an upload or a deletion. */
export type ConfigurationChangeKind = keyof typeof configurationChanges;

/** The text and hash a revision keeps of its configuration. */
export function revisionDocument(configuration: Configuration): { text: string; sha256: string } {
  const text = revisionDocumentText(configuration);
  return { text, sha256: createHash('sha256').update(text).digest('hex') };
}

/** A change's input but what it works out from the configuration (its document when not given). */
export type ConfigurationChangeRequest = Omit<ConfigurationChangeInput, 'document' | 'sections'> & {
  document?: ConfigurationChangeInput['document'];
};

/**
 * Runs the change `kind` of `request` through `runner`: the revision stored and what it deleted,
 * with `replayed` only when it is the first answer of its `Idempotency-Key` given again.
 */
export async function runConfigurationChange(
  runner: ChangeRunner<ConfigurationChangeTables>,
  kind: ConfigurationChangeKind,
  request: ConfigurationChangeRequest,
  options: ChangeOptions,
): Promise<ConfigurationChanged & { replayed?: true }> {
  const { configuration } = request;
  const input: ConfigurationChangeInput = {
    ...request,
    document: request.document ?? revisionDocument(configuration),
    sections: sectionCounts(configuration),
  };
  const outcome = await runner.run(configurationChanges[kind], input, options);
  return outcome.replayed ? { ...outcome.answer, replayed: true } : outcome.answer;
}
