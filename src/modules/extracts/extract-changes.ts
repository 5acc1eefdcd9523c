/**
 * The extract changes, as the change runner runs them (`modules/changes/`): a configuration made,
 * changed or deleted, an incremental read acknowledged (`increment`) and an asynchronous
 * extraction queued (`trigger`). Each states what it writes in the extract tables, the refusals
 * it can answer and its audit entry's details; the runner owns the transaction, the
 * `Idempotency-Key`, the dry run and the audit entry. An increment and a trigger move or fix a
 * window by the same conditional single statements a read takes, inside the runner's
 * transaction. What needs a read of the configuration stored now (the feature flag, the entities
 * a `records` extract names) is read before the runner runs and given in the input.
 */
import { AppError } from '../../lib/errors.js';
import { invariant } from '../../lib/invariant.js';
import type { Change as RunnerChange } from '../changes/runner.js';
import {
  activeOf,
  changedConfiguration,
  checkConfiguration,
  type EntitiesNow,
  noConfiguration,
  unknownEntityOf,
  windowOf,
} from './rules.js';
import type {
  ExtractConfigurationChange,
  ExtractFormat,
  ExtractTables,
  NewExtractConfiguration,
  StoredExecution,
  StoredExtractConfiguration,
} from './store.js';

/** The feature flag that turns asynchronous extractions on; absent counts as off. */
export const EXTRACTS_IN_BULK_FLAG = 'extracts-in-bulk';

/** The tables the extract changes touch. */
export interface ExtractChangeTables {
  extracts: ExtractTables;
}

/** An extract change. */
type Change<Input, Answer> = RunnerChange<Input, Answer, ExtractChangeTables>;

/** A configuration as the API gives it. */
export type ExtractConfigurationView = Omit<
  StoredExtractConfiguration,
  'ackedPosition' | 'pendingPosition'
> & {
  /** True while a read is waiting for its acknowledgement. */
  pending: boolean;
};

export function viewOf(config: StoredExtractConfiguration): ExtractConfigurationView {
  const { ackedPosition: _acked, pendingPosition, ...rest } = config;
  return { ...rest, pending: pendingPosition !== null };
}

/** What `increment` did. */
export type IncrementOutcome = 'latest offsets incremented' | 'no extract performed since the last increment';

/** An execution as the API gives it. */
export interface ExecutionView {
  id: number;
  extractConfigurationId: number;
  latestStatus: StoredExecution['status'];
  format: ExtractFormat;
  requestedBy: string;
  requestedAt: string;
  startedAt: string | null;
  completedAt: string | null;
  recordCount: number;
  bytes: number;
  totalRuns: number;
  expiresAt: string | null;
  failure: string | null;
}

export function executionViewOf(execution: StoredExecution): ExecutionView {
  return {
    id: execution.id,
    extractConfigurationId: execution.configurationId,
    latestStatus: execution.status,
    format: execution.format,
    requestedBy: execution.requestedBy,
    requestedAt: execution.requestedAt,
    startedAt: execution.startedAt,
    completedAt: execution.completedAt,
    recordCount: execution.records,
    bytes: execution.bytes,
    totalRuns: execution.runs,
    expiresAt: execution.expiresAt,
    failure: execution.failure,
  };
}

/** A new configuration as asked for, with the entities stored now when it is a `records` extract. */
export interface CreateInput {
  config: NewExtractConfiguration;
  entities: EntitiesNow | undefined;
}

/** A change of a configuration, with the entities stored now when it names a source or filters. */
export interface UpdateInput {
  id: number;
  change: ExtractConfigurationChange;
  entities: EntitiesNow | undefined;
}

/** A trigger, with what the configuration stored now says: the feature flag, the entities. */
export interface TriggerInput {
  id: number;
  format: ExtractFormat | undefined;
  flagOn: boolean;
  entities: EntitiesNow;
}

/** Refuses a `records` extract of an entity `entities` does not hold, naming the filter at fault. */
function refuseUnknownEntity(config: NewExtractConfiguration, entities: EntitiesNow | undefined): void {
  if (config.source !== 'records') return;
  invariant(
    entities !== undefined,
    'a records extract is checked against the entities stored now',
    () => config.name,
  );
  const refusal = unknownEntityOf(config, entities, true);
  if (refusal !== undefined) throw refusal;
}

/** The members of a change the audit entry gives with their values; the others by name only. */
const AUDITED_VALUES = ['name', 'source', 'format', 'incremental', 'state'] as const;

/** What a change of `config` changed: the members named, and the short ones' values. */
function changeDetails(config: StoredExtractConfiguration, change: ExtractConfigurationChange) {
  const named = Object.entries(change).filter(([, value]) => value !== undefined);
  const values = Object.fromEntries(
    named.filter(([member]) => (AUDITED_VALUES as readonly string[]).includes(member)),
  );
  return {
    configurationId: config.id,
    changed: named.map(([member]) => member),
    ...values,
    ...(change.state !== undefined && change.state !== config.state ? { stateBefore: config.state } : {}),
  };
}

const createConfiguration: Change<CreateInput, ExtractConfigurationView> = {
  action: 'extracts.configuration-create',
  async apply(tx, { config, entities }, { at, actor }) {
    checkConfiguration(config);
    refuseUnknownEntity(config, entities);
    const created = await tx.extracts.create(config, actor.user, at);
    const { id, name, source, format, incremental } = created;
    return {
      answer: viewOf(created),
      audit: { details: { configurationId: id, name, source, format, incremental } },
    };
  },
  requestOf: ({ config }) => config,
};

const updateConfiguration: Change<UpdateInput, ExtractConfigurationView> = {
  action: 'extracts.configuration-update',
  async apply(tx, { id, change, entities }, { at, actor }) {
    const config = await tx.extracts.find(id);
    if (config === undefined) throw noConfiguration(id);
    const changed = changedConfiguration(config, change);
    // A change of name or state leaves the entity to the reads, which refuse it if it is gone.
    if (change.source !== undefined || change.filters !== undefined) refuseUnknownEntity(changed, entities);
    const updated = await tx.extracts.update(id, change, actor.user, at);
    if (updated === undefined) throw noConfiguration(id);
    return { answer: viewOf(updated), audit: { details: changeDetails(config, change) } };
  },
  requestOf: ({ id, change }) => ({ id, change }),
};

const deleteConfiguration: Change<{ id: number }, { id: number }> = {
  action: 'extracts.configuration-delete',
  async apply(tx, { id }) {
    const config = await tx.extracts.find(id);
    if (config === undefined || !(await tx.extracts.delete(id))) throw noConfiguration(id);
    return { answer: { id }, audit: { details: { configurationId: id, name: config.name } } };
  },
};

const increment: Change<{ id: number }, IncrementOutcome> = {
  action: 'extracts.increment',
  async apply(tx, { id }, { at }) {
    const config = await tx.extracts.find(id);
    if (config === undefined) throw noConfiguration(id);
    if (!config.incremental)
      throw new AppError('extract-not-incremental', `extraction configuration ${id} is not incremental`);
    // One conditional statement: of two acknowledgements at once, one moves the offset.
    if (!(await tx.extracts.acknowledge(id, at)))
      return { answer: 'no extract performed since the last increment', audit: null };
    return {
      answer: 'latest offsets incremented',
      audit: { details: { configurationId: id, offsetsMoved: true } },
    };
  },
};

/** The change that queues an asynchronous extraction; `wake` wakes the maker once it is committed. */
export function triggerChange(wake: () => void): Change<TriggerInput, ExecutionView> {
  return {
    action: 'extracts.execution-start',
    async apply(tx, { id, format, flagOn, entities }, { at, actor }) {
      if (!flagOn)
        throw new AppError(
          'conflict',
          `asynchronous extractions are off: the feature flag ${EXTRACTS_IN_BULK_FLAG} is not on`,
        );
      const config = activeOf(id, await tx.extracts.find(id), entities);
      // Fixed as a read fixes it: an incremental configuration's pending window.
      const window = await windowOf(tx.extracts, config, at);
      const execution = await tx.extracts.insertExecution({
        configurationId: id,
        format: format ?? config.format,
        window,
        requestedBy: actor.user,
        at,
      });
      return {
        answer: executionViewOf(execution),
        audit: { details: { configurationId: id, executionId: execution.id, format: execution.format } },
        afterCommit: wake,
      };
    },
    requestOf: ({ id, format }) => ({ id, format }),
  };
}

/** The changes of extraction configurations. */
export const configurationChanges = {
  createConfiguration,
  updateConfiguration,
  deleteConfiguration,
  increment,
};
