import type { Env } from '../env.js';
import type { Clock } from '../lib/clock.js';
import { AccountingProcessor, type ChunkHandler, processChunk } from '../modules/accounting/processor.js';
import { ReprocessingService } from '../modules/accounting/reprocessing.js';
import { ChangeRunner } from '../modules/changes/runner.js';
import { ConfigurationSnapshots } from '../modules/configuration/snapshot.js';
import { EXTRACTS_IN_BULK_FLAG, ExtractExecutions } from '../modules/extracts/executions.js';
import { ExtractService } from '../modules/extracts/service.js';
import { FlowRunner } from '../modules/flows/runner.js';
import { FLOW_SCRIPT_MEMORY_MB_DEFAULT, FLOW_SCRIPT_TIMEOUT_MS_DEFAULT } from '../modules/flows/sandbox.js';
import { processingPauseMs } from '../processing/requests-in-progress.js';
import { stoppingFlagReader } from '../processing/stopping.js';
import { createAccountingStore } from '../storage/accounting/accounting-store.js';
import { createReprocessStore } from '../storage/accounting/reprocess-store.js';
import { createChangeStore } from '../storage/changes/change-store.js';
import { createConfigurationStore } from '../storage/configuration-store.js';
import { createExecutionStore } from '../storage/extracts/execution-store.js';
import { createExtractStore } from '../storage/extracts/extract-store.js';
import { sweepEndedSessions } from '../storage/session-counters.js';
import { byDialect, type Store } from '../storage/store.js';
import { type PreparedConfiguration, prepareConfiguration } from './prepared-configuration.js';

/** Processing rounds side by side per instance on PostgreSQL. */
const PROCESSING_ROUNDS_POSTGRES = 4;

/**
 * How often the sessions that expired without being closed are counted into the session
 * counters (`storage/session-counters.ts`); until then the statistics read them one by one.
 */
const SESSION_SWEEP_INTERVAL_MS = 60_000;

/**
 * How often the processor's instance looks whether a scheduled reprocessing run is due
 * (`ReprocessingService.tick`): a run starts at most this long after its time.
 */
const REPROCESS_SCHEDULE_CHECK_INTERVAL_MS = 60_000;

/**
 * The engine work of a claimed chunk: records of an entity a flow reads go through the flow, the
 * rest to the engine directly. Processing and the dry runs of reprocessing use it alike.
 */
export function chunkWork(flows: FlowRunner): ChunkHandler<PreparedConfiguration> {
  return (prepared, chunk, ctx) =>
    flows.reads(prepared, chunk) ? flows.process(prepared, chunk, ctx) : processChunk(prepared, chunk, ctx);
}

/** The settings of `Env` that the background processor uses. */
export type ProcessingSettings = Pick<Env, 'businessDate'> &
  Partial<Pick<Env, 'flowScriptTimeoutMs' | 'flowScriptMemoryMb'>> & {
    /** How often unposted journals are checked against business dates (tests shorten it). */
    postingIntervalMs?: number;
    /** How often ended sessions are swept into the session counters (tests shorten it). */
    sessionSweepIntervalMs?: number;
    /** How often a due scheduled reprocessing run is looked for (tests shorten it). */
    reprocessScheduleCheckIntervalMs?: number;
    /**
     * Where the main thread counts the requests in progress (shared memory): processing pauses
     * after each chunk while they are many (`processing/requests-in-progress.ts`); never when absent.
     */
    requestsInProgress?: SharedArrayBuffer;
    /**
     * Where the main thread says that the service stops (shared memory): the chunk in progress
     * is given up between two records (`processing/stopping.ts`); only `stop` says so when absent.
     */
    stopping?: SharedArrayBuffer;
  };

/** The background processor and what it holds besides the store. */
export interface Processing {
  processor: AccountingProcessor<PreparedConfiguration>;
  /** The reprocessing schedule's runs, started by this instance when due (`tick`). */
  reprocessing: ReprocessingService<PreparedConfiguration>;
  /**
   * Starts the processor, the session sweep, the reprocessing schedule's check and, unless told
   * otherwise, the maker of asynchronous extractions.
   */
  start(): void;
  /** Stops the timers and the processor, then releases the script isolates of its flows. */
  close(): Promise<void>;
}

/**
 * Wires the background processor (its flows, its posting timer) and the session sweep to a
 * store, wherever it runs:
 * on the processing thread (`processing/entry.ts`, docs/adr/0013-processing-thread.md), on the
 * event loop of `main.ts` when there is no thread or it fell back, or in the services of a test
 * or the CLI (`createServices` with `processing: 'here'`). Does not start it.
 */
export function createProcessing(
  store: Store,
  snapshots: ConfigurationSnapshots<PreparedConfiguration>,
  clock: Clock,
  settings: ProcessingSettings,
  onBackgroundError: (error: unknown) => void,
  options: { makesExtracts: boolean } = { makesExtracts: true },
): Processing {
  // Asynchronous extractions are made where processing runs, off the event loop that answers
  // requests when that is the processing thread (docs/adr/0023-extract-executions.md).
  const changes = new ChangeRunner(createChangeStore(store), clock);
  const extractMaker = new ExtractExecutions(
    createExecutionStore(store),
    changes,
    new ExtractService(createExtractStore(store), changes, snapshots, clock),
    clock,
    extractsInBulkOf(snapshots),
    onBackgroundError,
    { makes: options.makesExtracts },
  );
  const flows = new FlowRunner(flowLimitsOf(settings));
  const work = chunkWork(flows);
  const processor = createProcessor(store, snapshots, clock, settings, work, onBackgroundError);
  const reprocessing = new ReprocessingService(createReprocessStore(store), changes, snapshots, clock, work, {
    businessDatePinned: settings.businessDate,
    onRunQueued: () => processor.wake(),
  });
  const timers = periodicWork(store, clock, settings, reprocessing, onBackgroundError);
  return {
    processor,
    reprocessing,
    start: () => {
      processor.start();
      extractMaker.start();
      timers.start();
    },
    close: async () => {
      await timers.stop();
      await extractMaker.close();
      await processor.stop();
      flows.close();
    },
  };
}

/** The time and memory a flow script may take (FLOW_SCRIPT_TIMEOUT_MS, FLOW_SCRIPT_MEMORY_MB). */
export function flowLimitsOf(settings: ProcessingSettings): { timeoutMs: number; memoryMb: number } {
  return {
    timeoutMs: settings.flowScriptTimeoutMs ?? FLOW_SCRIPT_TIMEOUT_MS_DEFAULT,
    memoryMb: settings.flowScriptMemoryMb ?? FLOW_SCRIPT_MEMORY_MB_DEFAULT,
  };
}

/** The processor of stored records, doing `work` on each claimed chunk; not started. */
function createProcessor(
  store: Store,
  snapshots: ConfigurationSnapshots<PreparedConfiguration>,
  clock: Clock,
  settings: ProcessingSettings,
  work: ChunkHandler<PreparedConfiguration>,
  onBackgroundError: (error: unknown) => void,
): AccountingProcessor<PreparedConfiguration> {
  const requests = settings.requestsInProgress;
  const stopping = settings.stopping;
  return new AccountingProcessor(createAccountingStore(store), snapshots, clock, {
    businessDatePinned: settings.businessDate,
    work,
    onError: onBackgroundError,
    // PostgreSQL claims chunks with SKIP LOCKED, so rounds can overlap one's engine work with
    // another's writes; SQLite has one writer.
    concurrency: byDialect(store.dialect, { postgres: PROCESSING_ROUNDS_POSTGRES, sqlite: 1 }),
    ...(requests === undefined
      ? {}
      : { pauseAfterChunkMs: (chunkMs: number) => processingPauseMs(requests, chunkMs) }),
    ...(stopping === undefined ? {} : { stopping: stoppingFlagReader(stopping) }),
    ...(settings.postingIntervalMs === undefined ? {} : { postingIntervalMs: settings.postingIntervalMs }),
  });
}

/** Work on timers: `start` starts the timers, `stop` clears them and waits for the runs in flight. */
interface PeriodicWork {
  start(): void;
  stop(): Promise<void>;
}

/**
 * The session sweep and the check of the reprocessing schedule, each on a timer of its own. One
 * sweep and one look at the schedule at a time on this instance; other instances' may overlap
 * them.
 */
function periodicWork(
  store: Store,
  clock: Clock,
  settings: ProcessingSettings,
  reprocessing: ReprocessingService<PreparedConfiguration>,
  onBackgroundError: (error: unknown) => void,
): PeriodicWork {
  const sweep = oneAtATime(() => sweepEndedSessions(store.db, clock.now().getTime()), onBackgroundError);
  const tick = oneAtATime(() => reprocessing.tick(), onBackgroundError);
  let sweepTimer: NodeJS.Timeout | undefined;
  let scheduleTimer: NodeJS.Timeout | undefined;
  return {
    start: () => {
      sweepTimer ??= setInterval(
        sweep.run,
        settings.sessionSweepIntervalMs ?? SESSION_SWEEP_INTERVAL_MS,
      ).unref();
      scheduleTimer ??= setInterval(
        tick.run,
        settings.reprocessScheduleCheckIntervalMs ?? REPROCESS_SCHEDULE_CHECK_INTERVAL_MS,
      ).unref();
    },
    stop: async () => {
      clearInterval(sweepTimer);
      sweepTimer = undefined;
      clearInterval(scheduleTimer);
      scheduleTimer = undefined;
      await sweep.inFlight();
      await tick.inFlight();
    },
  };
}

/**
 * A task that runs at most once at a time: `run` starts it unless a run is in flight, and hands
 * its failure to `onError`; `inFlight` is the run in flight, if any.
 */
function oneAtATime(
  task: () => Promise<unknown>,
  onError: (error: unknown) => void,
): { run: () => void; inFlight: () => Promise<void> | undefined } {
  let running: Promise<void> | undefined;
  return {
    run: () => {
      running ??= task()
        .then(() => undefined, onError)
        .finally(() => {
          running = undefined;
        });
    },
    inFlight: () => running,
  };
}

/** A processor that is built when it is first started, and only then. */
export interface ProcessingOnDemand {
  start(): void;
  /** Asks the processor for a round; nothing before it was started. */
  wake(): void;
  /** Stops the processor and releases its flows; nothing when it was never started. */
  stop(): Promise<void>;
}

/**
 * The processor of `main.ts`'s event loop, built on its first start: at once when there is no
 * processing thread, else only if the thread cannot be kept running and processing falls back to
 * the event loop (docs/adr/0013-processing-thread.md), so that a service whose thread runs holds
 * no idle second processor.
 */
export function processingOnDemand(
  store: Store,
  snapshots: ConfigurationSnapshots<PreparedConfiguration>,
  clock: Clock,
  settings: ProcessingSettings,
  onBackgroundError: (error: unknown) => void,
): ProcessingOnDemand {
  let processing: Processing | undefined;
  return {
    start: () => {
      processing ??= createProcessing(store, snapshots, clock, settings, onBackgroundError);
      processing.start();
    },
    wake: () => processing?.processor.wake(),
    stop: async () => processing?.close(),
  };
}

/** Whether the feature flag of asynchronous extractions is on in the current configuration. */
export function extractsInBulkOf(
  snapshots: ConfigurationSnapshots<PreparedConfiguration>,
): () => Promise<boolean> {
  return async () =>
    (await snapshots.current()).stored.configuration.featureFlags[EXTRACTS_IN_BULK_FLAG] === true;
}

/** Configuration snapshots of a store, prepared for the modules. */
export function createSnapshots(store: Store): ConfigurationSnapshots<PreparedConfiguration> {
  return new ConfigurationSnapshots(createConfigurationStore(store), prepareConfiguration);
}
