import type { Env } from '../env.js';
import type { Clock } from '../lib/clock.js';
import { JournalQueries } from '../modules/accounting/journal-queries.js';
import { AccountingProcessor, processChunk } from '../modules/accounting/processor.js';
import { AccessDirectory } from '../modules/auth/access-directory.js';
import type { Wait } from '../modules/auth/failure-limiter.js';
import {
  RATE_LIMIT_MAX_DEFAULT,
  RATE_LIMIT_WINDOW_MS_DEFAULT,
  RequestLimiter,
} from '../modules/auth/request-limiter.js';
import { SignIns } from '../modules/auth/sign-ins.js';
import { TokenService } from '../modules/auth/token-service.js';
import { ConfigurationService } from '../modules/configuration/service.js';
import { ConfigurationSnapshots } from '../modules/configuration/snapshot.js';
import { EntityCatalog } from '../modules/entities/catalog.js';
import { FlowRunner } from '../modules/flows/runner.js';
import { FLOW_SCRIPT_MEMORY_MB_DEFAULT, FLOW_SCRIPT_TIMEOUT_MS_DEFAULT } from '../modules/flows/sandbox.js';
import { inlineChunkWorker, threadChunkWorker } from '../modules/ingestion/chunk-pool.js';
import { IngestionService } from '../modules/ingestion/service.js';
import { StatisticsService } from '../modules/statistics/service.js';
import { createAccountingStore } from '../storage/accounting-store.js';
import { createAuthStore } from '../storage/auth-store.js';
import { createConfigurationStore } from '../storage/configuration-store.js';
import type { Store } from '../storage/database.js';
import { createIngestionStore } from '../storage/ingestion-store.js';
import { createRequestCountStore } from '../storage/request-count-store.js';
import { createSignInStore } from '../storage/sign-in-store.js';
import { createStatisticsStore } from '../storage/statistics-store.js';
import { CONFIGURATION_CHECKS } from './configuration-checks.js';
import { type PreparedConfiguration, prepareConfiguration } from './prepared-configuration.js';

/** Processing rounds side by side per instance on PostgreSQL. */
const PROCESSING_ROUNDS_POSTGRES = 4;

/** The settings of `Env` that the modules use. */
export type ServiceSettings = Pick<Env, 'accessTokenTtlSeconds' | 'refreshTokenTtlSeconds' | 'businessDate'> &
  Partial<Pick<Env, 'flowScriptTimeoutMs' | 'flowScriptMemoryMb'>> & {
    /** How often unposted journals are checked against business dates (tests shorten it). */
    postingIntervalMs?: number;
    /** Worker threads for the CPU work of large chunks (INGEST_WORKER_THREADS); none by default. */
    ingestWorkerThreads?: number;
    /** How attempts slowed by failed authentications wait (tests record instead of sleeping). */
    authFailureWait?: Wait;
    /** REFRESH_REUSE_GRACE_SECONDS; `REFRESH_REUSE_GRACE_SECONDS_DEFAULT` when unset. */
    refreshReuseGraceSeconds?: number;
    /** RATE_LIMIT_MAX (0 = off); `RATE_LIMIT_MAX_DEFAULT` when unset. */
    rateLimitMax?: number;
    /** RATE_LIMIT_WINDOW_MS; `RATE_LIMIT_WINDOW_MS_DEFAULT` when unset. */
    rateLimitWindowMs?: number;
  };

/** The settings the background processor uses. */
export type ProcessingSettings = Pick<
  ServiceSettings,
  'businessDate' | 'flowScriptTimeoutMs' | 'flowScriptMemoryMb' | 'postingIntervalMs'
>;

/** Every module service, wired to one store and one clock; shared by the app, main and the CLI. */
export interface Services {
  tokens: TokenService;
  access: AccessDirectory;
  /** Sign-in sessions of the administration interface. */
  signIns: SignIns;
  snapshots: ConfigurationSnapshots<PreparedConfiguration>;
  configuration: ConfigurationService<PreparedConfiguration>;
  catalog: EntityCatalog;
  ingestion: IngestionService;
  statistics: StatisticsService;
  /**
   * The processor on this thread, built on first use: never, when the processing thread runs
   * processing (docs/adr/0013-processing-thread.md), unless it falls back to this thread.
   */
  readonly processor: AccountingProcessor<PreparedConfiguration>;
  journals: JournalQueries;
  /** Counts requests per client for the rate limit, shared through the store. */
  requestLimiter: RequestLimiter;
  /** Releases what the services hold besides the store (worker threads, script isolates, timers). */
  close(): Promise<void>;
}

/** The background processor and what it holds besides the store. */
export interface Processing {
  processor: AccountingProcessor<PreparedConfiguration>;
  /** Stops the processor, then releases the script isolates of its flows. */
  close(): Promise<void>;
}

/**
 * Wires the background processor (its flows, its posting timer) to a store: `createServices` uses
 * it for the processor that runs on the event loop, and the processing thread for its own
 * (docs/adr/0013-processing-thread.md). Does not start it.
 */
export function createProcessing(
  store: Store,
  snapshots: ConfigurationSnapshots<PreparedConfiguration>,
  clock: Clock,
  settings: ProcessingSettings,
  onBackgroundError: (error: unknown) => void,
): Processing {
  const flows = new FlowRunner({
    timeoutMs: settings.flowScriptTimeoutMs ?? FLOW_SCRIPT_TIMEOUT_MS_DEFAULT,
    memoryMb: settings.flowScriptMemoryMb ?? FLOW_SCRIPT_MEMORY_MB_DEFAULT,
  });
  const processor = new AccountingProcessor(createAccountingStore(store), snapshots, clock, {
    businessDatePinned: settings.businessDate,
    // Records of an entity a flow reads go through the flow; the rest to the engine directly.
    work: (prepared, chunk, ctx) =>
      flows.reads(prepared, chunk) ? flows.process(prepared, chunk, ctx) : processChunk(prepared, chunk, ctx),
    onError: onBackgroundError,
    // PostgreSQL claims chunks with SKIP LOCKED, so rounds can overlap one's engine work with
    // another's writes; SQLite has one writer.
    concurrency: store.dialect === 'postgres' ? PROCESSING_ROUNDS_POSTGRES : 1,
    ...(settings.postingIntervalMs === undefined ? {} : { postingIntervalMs: settings.postingIntervalMs }),
  });
  return {
    processor,
    close: async () => {
      await processor.stop();
      flows.close();
    },
  };
}

/** Configuration snapshots of a store, prepared for the modules. */
export function createSnapshots(store: Store): ConfigurationSnapshots<PreparedConfiguration> {
  return new ConfigurationSnapshots(createConfigurationStore(store), prepareConfiguration);
}

/**
 * Wires the module services to their storage adapters. New records wake `services.processor`
 * once it is built (on first use), unless `wakeProcessing` says where else they are processed
 * (main's processing thread).
 */
export function createServices(
  store: Store,
  clock: Clock,
  settings: ServiceSettings,
  onBackgroundError: (error: unknown) => void = () => {},
  wakeProcessing?: () => void,
): Services {
  const authStore = createAuthStore(store.db, store.dialect);
  const configurationStore = createConfigurationStore(store);
  const snapshots = new ConfigurationSnapshots(configurationStore, prepareConfiguration);
  const catalog = new EntityCatalog(snapshots, clock, settings.businessDate);
  const threads = settings.ingestWorkerThreads ?? 0;
  const chunkWorker = threads > 0 ? threadChunkWorker(threads) : inlineChunkWorker;
  let processing: Processing | undefined;
  const processingHere = (): Processing => {
    processing ??= createProcessing(store, snapshots, clock, settings, onBackgroundError);
    return processing;
  };
  const requestLimiter = new RequestLimiter(
    createRequestCountStore(store.db),
    clock,
    {
      max: settings.rateLimitMax ?? RATE_LIMIT_MAX_DEFAULT,
      windowMs: settings.rateLimitWindowMs ?? RATE_LIMIT_WINDOW_MS_DEFAULT,
    },
    onBackgroundError,
  );
  return {
    tokens: new TokenService(authStore, clock, settings),
    access: new AccessDirectory(authStore, clock),
    signIns: new SignIns(authStore, createSignInStore(store.db), clock, settings.authFailureWait),
    snapshots,
    configuration: new ConfigurationService(configurationStore, snapshots, clock, CONFIGURATION_CHECKS),
    catalog,
    ingestion: new IngestionService(createIngestionStore(store), catalog, clock, {
      chunkWorker,
      // A processor not built yet is not running: there is nothing to wake.
      onRecordsAwaitProcessing: wakeProcessing ?? (() => processing?.processor.wake()),
    }),
    statistics: new StatisticsService(createStatisticsStore(store), clock),
    get processor() {
      return processingHere().processor;
    },
    journals: new JournalQueries(createAccountingStore(store), snapshots),
    requestLimiter,
    close: async () => {
      await requestLimiter.close();
      await processing?.close();
      await chunkWorker.close();
    },
  };
}
