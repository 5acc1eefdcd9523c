import type { Env } from '../env.js';
import type { Clock } from '../lib/clock.js';
import { newTimeOrderedUuid } from '../lib/ids.js';
import { JournalQueries } from '../modules/accounting/journal-queries.js';
import type { AccountingProcessor } from '../modules/accounting/processor.js';
import { ReprocessingService } from '../modules/accounting/reprocessing.js';
import { ReversalService } from '../modules/accounting/reversals.js';
import type { ApprovalKindName } from '../modules/approvals/kinds.js';
import { ApprovalService } from '../modules/approvals/service.js';
import { AuditTrail } from '../modules/audit/trail.js';
import { AccessDirectory } from '../modules/auth/access-directory.js';
import type { Wait } from '../modules/auth/failure-limiter.js';
import {
  RATE_LIMIT_MAX_DEFAULT,
  RATE_LIMIT_WINDOW_MS_DEFAULT,
  RequestLimiter,
} from '../modules/auth/request-limiter.js';
import { SignIns } from '../modules/auth/sign-ins.js';
import { TokenService } from '../modules/auth/token-service.js';
import { ChangeRunner } from '../modules/changes/runner.js';
import { ConfigurationRevisions } from '../modules/configuration/revisions.js';
import { ConfigurationService, type WhatIf } from '../modules/configuration/service.js';
import { ConfigurationSnapshots } from '../modules/configuration/snapshot.js';
import type { ConfigurationStore } from '../modules/configuration/store.js';
import { EntityCatalog } from '../modules/entities/catalog.js';
import { storedDataRisksOf } from '../modules/entities/change-risks.js';
import { DEFAULT_SCHEDULE, type DeliverySchedule, EventDeliverer } from '../modules/events/deliverer.js';
import { createSender } from '../modules/events/sender.js';
import { WebhookService } from '../modules/events/webhooks.js';
import { ExtractExecutions } from '../modules/extracts/executions.js';
import { ExtractService } from '../modules/extracts/service.js';
import { FlowRunner } from '../modules/flows/runner.js';
import { type ChunkWorker, inlineChunkWorker, threadChunkWorker } from '../modules/ingestion/chunk-pool.js';
import { IngestionService } from '../modules/ingestion/service.js';
import { PeriodService } from '../modules/periods/service.js';
import { StatisticsService } from '../modules/statistics/service.js';
import { createAccountingStore } from '../storage/accounting/accounting-store.js';
import { createReprocessStore } from '../storage/accounting/reprocess-store.js';
import { createReversalStore } from '../storage/accounting/reversal-store.js';
import { createApprovalStore } from '../storage/approval-store.js';
import { createAuditStore } from '../storage/audit-trail.js';
import { createAuthStore } from '../storage/auth-store.js';
import { type ChangeTables, createChangeStore } from '../storage/changes/change-store.js';
import { createConfigurationStore } from '../storage/configuration-store.js';
import { createEventStore } from '../storage/events/event-store.js';
import { createExecutionStore } from '../storage/extracts/execution-store.js';
import { createExtractStore } from '../storage/extracts/extract-store.js';
import { createIngestionStore } from '../storage/ingestion-store.js';
import { createPeriodStore } from '../storage/period-store.js';
import { createRequestCountStore } from '../storage/request-count-store.js';
import { createSignInStore } from '../storage/sign-in-store.js';
import { createStatisticsStore } from '../storage/statistics-store.js';
import type { Store } from '../storage/store.js';
import { approvalKinds } from './approval-kinds.js';
import { type ConfigurationReader, configurationReader } from './configuration-reader.js';
import { type PreparedConfiguration, prepareConfiguration } from './prepared-configuration.js';
import {
  chunkWork,
  createProcessing,
  extractsInBulkOf,
  flowLimitsOf,
  type Processing,
  type ProcessingSettings,
} from './processing.js';

/** The settings of `Env` that the modules use. */
export type ServiceSettings = ProcessingSettings &
  Pick<Env, 'accessTokenTtlSeconds' | 'refreshTokenTtlSeconds'> & {
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
    /** WEBHOOK_ALLOW_HTTP_LOOPBACK; off when unset. */
    webhookAllowHttpLoopback?: boolean;
    /** WEBHOOK_SECRETS_KEY; a key kept in the store when unset. */
    webhookSecretsKey?: string | undefined;
    /** The delays and limits of webhook deliveries (tests shorten them); `DEFAULT_SCHEDULE` when unset. */
    webhookSchedule?: DeliverySchedule;
    /** The kinds of action that wait for four-eyes approval (APPROVAL_REQUIRED); none when unset. */
    approvalRequired?: readonly ApprovalKindName[];
  };

/** Every module service, wired to one store and one clock; shared by the app, main and the CLI. */
export interface Services {
  tokens: TokenService;
  access: AccessDirectory;
  /** Sign-in sessions of the administration interface. */
  signIns: SignIns;
  snapshots: ConfigurationSnapshots<PreparedConfiguration>;
  configuration: ConfigurationService<PreparedConfiguration>;
  revisions: ConfigurationRevisions;
  /** The audit trail's reads: pages, export, verification (its entries are written by the changes). */
  audit: AuditTrail;
  catalog: EntityCatalog;
  ingestion: IngestionService;
  statistics: StatisticsService;
  journals: JournalQueries;
  /**
   * Reprocessing of failed records: runs, their dry runs, the what-if of a candidate
   * configuration (`whatIf`), the schedule's settings. Its dry runs work on this thread, with
   * flow isolates of their own; the runs themselves are the processor's work.
   */
  reprocessing: ReprocessingService<PreparedConfiguration>;
  /** Reversals by selection: corrections of posted journals, their dry runs and their list. */
  reversals: ReversalService<PreparedConfiguration>;
  /** Periods closed, locked and reopened by hand, and their trial-balance snapshots. */
  periods: PeriodService<PreparedConfiguration>;
  /** Extraction configurations, their reads and incremental offsets. */
  extracts: ExtractService;
  /**
   * Asynchronous extractions: triggered when the feature flag `extracts-in-bulk` is on, made on
   * this thread once `start` is called (main does), run by run.
   */
  extractExecutions: ExtractExecutions;
  /** Counts requests per client for the rate limit, shared through the store. */
  requestLimiter: RequestLimiter;
  /** Webhook subscriptions, the signing secret, deliveries and their redelivery. */
  webhooks: WebhookService;
  /**
   * Sends the events recorded by every thread and instance to their subscriptions, once `start`
   * is called (main does; tests call `wake` and `idle`).
   */
  deliverer: EventDeliverer;
  /**
   * Four-eyes approval: whether a kind of action waits for a second person, its requests, and
   * their approval (which runs the action), rejection and cancellation.
   */
  approvals: ApprovalService;
  /** Releases what the services hold besides the store (worker threads, script isolates, timers). */
  close(): Promise<void>;
}

/** Services that process the records they store on this thread (`processing: 'here'`). */
export interface ServicesProcessingHere extends Services {
  /**
   * The processor on this thread, built on first use; the caller starts it, or drains it
   * (tests). `close` stops it.
   */
  readonly processor: AccountingProcessor<PreparedConfiguration>;
}

/**
 * Where the records that ingestion stores are processed: `'here'`, by a processor of these
 * services (`ServicesProcessingHere`); or elsewhere, by a processor that `wake` asks for a round
 * (main's processing thread, or its own processor on the event loop,
 * docs/adr/0013-processing-thread.md).
 */
export type ProcessingPlace = 'here' | { wake(): void };

/** How `createServices` wires what runs in the background. */
export interface ServiceOptions {
  /**
   * Where stored records are processed; unset, nowhere these services know of: for callers that
   * store no records to process (the CLI's store commands, the OpenAPI script, tests of other
   * areas).
   */
  processing?: ProcessingPlace;
  /** Errors of background work (processing rounds, the shared request counts), logged by main. */
  onBackgroundError?: (error: unknown) => void;
  /**
   * What a dry-run upload that keeps the processing data answers as `whatIf`: how many failed
   * records would post under the candidate. Unset, the dry run answers without it.
   */
  whatIf?: WhatIf;
}

/**
 * Wires the module services to their storage adapters. `options.processing` says where the
 * records they store are processed: with `'here'`, the services have a processor of their own
 * (`ServicesProcessingHere`, built on first use), which new records wake once built; otherwise
 * they have none, and new records call the given `wake`.
 */
export function createServices(
  store: Store,
  clock: Clock,
  settings: ServiceSettings,
  options: ServiceOptions & { processing: 'here' },
): ServicesProcessingHere;
export function createServices(
  store: Store,
  clock: Clock,
  settings: ServiceSettings,
  options?: ServiceOptions,
): Services;
export function createServices(
  store: Store,
  clock: Clock,
  settings: ServiceSettings,
  options: ServiceOptions = {},
): Services | ServicesProcessingHere {
  const place = options.processing;
  let processing: Processing | undefined;
  const wiring = wiringOf(store, clock, settings, options, () => processing);
  const services = assembleServices(wiring, holdingsOf(settings), options.whatIf, async () =>
    processing?.close(),
  );
  if (place !== 'here') return services;
  return {
    ...services,
    get processor() {
      processing ??= createProcessing(store, wiring.snapshots, clock, settings, wiring.onBackgroundError, {
        makesExtracts: false,
      });
      return processing.processor;
    },
  };
}

/** What the steps of `createServices` share: the store, the clock, the settings and what they wire to. */
interface Wiring {
  store: Store;
  clock: Clock;
  settings: ServiceSettings;
  configurationStore: ConfigurationStore;
  snapshots: ConfigurationSnapshots<PreparedConfiguration>;
  catalog: EntityCatalog;
  /** Where stored records are processed (`ServiceOptions.processing`). */
  place: ProcessingPlace | undefined;
  onBackgroundError: (error: unknown) => void;
  /** Asks whatever processes the stored records for a round, when anything does. */
  wake: () => void;
  /** The one path of the changes that have moved onto it (`modules/changes/runner.ts`). */
  changes: ChangeRunner<ChangeTables>;
}

/**
 * The wiring of the services: the configuration's store, snapshots and catalog, and the `wake`
 * of `options.processing`, which reaches the processor these services build (`processingHere`)
 * once it is built.
 */
function wiringOf(
  store: Store,
  clock: Clock,
  settings: ServiceSettings,
  options: ServiceOptions,
  processingHere: () => Processing | undefined,
): Wiring {
  const place = options.processing;
  const configurationStore = createConfigurationStore(store);
  const snapshots = new ConfigurationSnapshots(configurationStore, prepareConfiguration);
  return {
    store,
    clock,
    settings,
    configurationStore,
    snapshots,
    catalog: new EntityCatalog(snapshots, clock, settings.businessDate),
    place,
    onBackgroundError: options.onBackgroundError ?? (() => {}),
    changes: new ChangeRunner(createChangeStore(store), clock),
    wake:
      place === undefined
        ? () => {}
        : place === 'here'
          ? // A processor not built yet is not running: there is nothing to wake.
            () => processingHere()?.processor.wake()
          : () => place.wake(),
  };
}

/** What the services hold besides the store: worker threads and script isolates, which `close` releases. */
interface Holdings {
  chunkWorker: ChunkWorker;
  /** Reads large configuration uploads on a worker thread of its own. */
  configurationReading: ConfigurationReader;
  /** The dry runs' own flow isolates. */
  dryRunFlows: FlowRunner;
}

/**
 * The chunk worker (threads when INGEST_WORKER_THREADS asks for them), the reader of large
 * uploads and the dry runs' flows; the reader and the flows start on first use.
 */
function holdingsOf(settings: ServiceSettings): Holdings {
  const threads = settings.ingestWorkerThreads ?? 0;
  return {
    chunkWorker: threads > 0 ? threadChunkWorker(threads) : inlineChunkWorker,
    configurationReading: configurationReader(),
    dryRunFlows: new FlowRunner(flowLimitsOf(settings)),
  };
}

/**
 * Every service, wired; `close` releases, after the services' own background work, the
 * processor (`closeProcessing`) and the holdings.
 */
function assembleServices(
  wiring: Wiring,
  holdings: Holdings,
  whatIf: WhatIf | undefined,
  closeProcessing: () => Promise<void>,
): Services {
  const { store, clock, settings, snapshots, catalog } = wiring;
  const requestLimiter = createRequestLimiter(wiring);
  const reprocessing = createReprocessing(wiring, holdings.dryRunFlows);
  const { extracts, extractExecutions } = createExtracts(wiring);
  const { webhooks, deliverer } = createWebhooks(wiring);
  const configuration = new ConfigurationService(
    wiring.configurationStore,
    wiring.changes,
    snapshots,
    clock,
    holdings.configurationReading.validate,
    { risks: storedDataRisksOf, whatIf: whatIf ?? whatIfOf(reprocessing) },
  );
  const { reversals, periods, approvals } = createChangeServices(wiring, configuration);
  const authStore = createAuthStore(store);
  return {
    tokens: new TokenService(authStore, clock, settings),
    // After the webhooks: a new credential's answer kept for a repeat is sealed under their key.
    access: new AccessDirectory(authStore, wiring.changes, clock, () => webhooks.sealingKey()),
    signIns: new SignIns(authStore, createSignInStore(store), clock, settings.authFailureWait),
    snapshots,
    configuration,
    revisions: new ConfigurationRevisions(wiring.configurationStore, clock),
    audit: new AuditTrail(createAuditStore(store.db)),
    catalog,
    ingestion: new IngestionService(createIngestionStore(store), catalog, clock, {
      chunkWorker: holdings.chunkWorker,
      onRecordsAwaitProcessing: wiring.wake,
    }),
    statistics: new StatisticsService(createStatisticsStore(store), clock),
    journals: new JournalQueries(createAccountingStore(store), snapshots),
    reprocessing,
    reversals,
    periods,
    extracts,
    extractExecutions,
    requestLimiter,
    webhooks,
    deliverer,
    approvals,
    close: async () => {
      await deliverer.close();
      await extractExecutions.close();
      await requestLimiter.close();
      await closeProcessing();
      await holdings.chunkWorker.close();
      await holdings.configurationReading.close();
      holdings.dryRunFlows.close();
    },
  };
}

/** The rate limit's counts per client, shared through the store (RATE_LIMIT_MAX, RATE_LIMIT_WINDOW_MS). */
function createRequestLimiter({ store, clock, settings, onBackgroundError }: Wiring): RequestLimiter {
  return new RequestLimiter(
    createRequestCountStore(store.db),
    clock,
    {
      max: settings.rateLimitMax ?? RATE_LIMIT_MAX_DEFAULT,
      windowMs: settings.rateLimitWindowMs ?? RATE_LIMIT_WINDOW_MS_DEFAULT,
    },
    onBackgroundError,
  );
}

/** Reprocessing: its dry runs on `dryRunFlows`, its runs queued for the processor, which they wake. */
function createReprocessing(
  { store, clock, settings, snapshots, wake, changes }: Wiring,
  dryRunFlows: FlowRunner,
): ReprocessingService<PreparedConfiguration> {
  return new ReprocessingService(
    createReprocessStore(store),
    changes,
    snapshots,
    clock,
    chunkWork(dryRunFlows),
    {
      businessDatePinned: settings.businessDate,
      onRunQueued: wake,
      // A what-if's candidate gets isolates of its own, released once it is answered.
      candidateWork: () => {
        const flows = new FlowRunner(flowLimitsOf(settings));
        return { work: chunkWork(flows), close: () => flows.close() };
      },
    },
  );
}

/** The what-if of a keep-data dry run: today's failed records run under the prepared candidate. */
function whatIfOf(reprocessing: ReprocessingService<PreparedConfiguration>): WhatIf {
  return async (candidate) => {
    const dryRun = await reprocessing.whatIf(prepareConfiguration(candidate), { all: true });
    const { wouldPost, wouldStillFail, examples } = dryRun;
    return { wouldPost, wouldStillFail, examples: examples.map((example) => ({ ...example })) };
  };
}

/**
 * Extraction configurations and asynchronous extractions. These services make asynchronous
 * extractions only when they process here too (tests, the CLI); otherwise the maker runs with
 * processing (`createProcessing`).
 */
function createExtracts({ store, clock, snapshots, place, changes, onBackgroundError }: Wiring): {
  extracts: ExtractService;
  extractExecutions: ExtractExecutions;
} {
  const extracts = new ExtractService(createExtractStore(store), changes, snapshots, clock);
  const extractExecutions = new ExtractExecutions(
    createExecutionStore(store),
    changes,
    extracts,
    clock,
    extractsInBulkOf(snapshots),
    onBackgroundError,
    { makes: place === 'here' },
  );
  return { extracts, extractExecutions };
}

/** Webhook subscriptions and their deliverer, which a change of the subscriptions wakes. */
function createWebhooks({ store, clock, settings, changes, onBackgroundError }: Wiring): {
  webhooks: WebhookService;
  deliverer: EventDeliverer;
} {
  const webhookPolicy = { allowHttpLoopback: settings.webhookAllowHttpLoopback ?? false };
  const webhookSchedule = settings.webhookSchedule ?? DEFAULT_SCHEDULE;
  const eventStore = createEventStore(store);
  let deliverer: EventDeliverer | undefined;
  const webhooks = new WebhookService(
    eventStore,
    changes,
    clock,
    webhookPolicy,
    settings.webhookSecretsKey,
    () => deliverer?.wake(),
  );
  deliverer = new EventDeliverer(
    eventStore,
    clock,
    createSender(webhookPolicy, webhookSchedule.timeoutMs),
    webhooks.signer(),
    onBackgroundError,
    webhookSchedule,
  );
  return { webhooks, deliverer };
}

/**
 * Reversals and periods, and the approvals that run them and the configuration's changes when
 * those wait for a second person.
 */
function createChangeServices(
  { store, clock, settings, snapshots, changes }: Wiring,
  configuration: ConfigurationService<PreparedConfiguration>,
): {
  reversals: ReversalService<PreparedConfiguration>;
  periods: PeriodService<PreparedConfiguration>;
  approvals: ApprovalService;
} {
  const reversals = new ReversalService(createReversalStore(store), changes, snapshots, clock, {
    newId: newTimeOrderedUuid,
    businessDatePinned: settings.businessDate,
  });
  const periods = new PeriodService(createPeriodStore(store), changes, snapshots, clock, {
    newId: newTimeOrderedUuid,
    businessDatePinned: settings.businessDate,
  });
  const approvals = new ApprovalService(
    createApprovalStore(store),
    changes,
    approvalKinds({ configuration, reversals, periods }),
    settings.approvalRequired ?? [],
    clock,
    newTimeOrderedUuid,
  );
  return { reversals, periods, approvals };
}
