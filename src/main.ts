#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { type Logger, pino } from 'pino';
import { bootstrapAccess } from './composition/bootstrap.js';
import {
  type ProcessingOnDemand,
  type ProcessingSettings,
  processingOnDemand,
} from './composition/processing.js';
import { createServices, type Services } from './composition/services.js';
import { type Env, EnvError, parseEnv } from './env.js';
import { buildApp } from './http/app.js';
import { systemClock } from './lib/clock.js';
import type { ProcessingStatus } from './processing/messages.js';
import { createRequestsInProgressBuffer } from './processing/requests-in-progress.js';
import { createStoppingFlag } from './processing/stopping.js';
import { ProcessingThread } from './processing/thread.js';
import { StoreUnavailableError } from './storage/errors.js';
import { migrateToLatest } from './storage/migrations/index.js';
import { ensureDatabase } from './storage/postgres/ensure-database.js';
import { openStore, type Store, serverAdvice } from './storage/store.js';

/** Log paths that could carry a secret; pino replaces them, whatever a plugin logs. */
export const LOG_REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'client_secret',
  'clientSecret',
  'access_token',
  'refresh_token',
  'password',
  'secret',
  'req.headers["webhook-signature"]',
];

/**
 * How far V8 lets a heap grow past what the last full collection kept alive, in per cent: 50
 * collects when it has grown by half. By default V8 lets a heap grow up to four times when
 * collecting is cheap, and every chunk leaves its body text in the old generation (and the
 * native memory of its buffers until the collection frees them), so the resident memory of a
 * 200 MiB session swung between 210 and 320 MiB with the timing of collections; at 100 it stayed
 * near 240 MiB and 64 clients held about 300 MiB; at 50, about 25 MiB less in both, for a few per
 * cent of a single client's throughput with 1 MiB chunks (docs/adr/0015-heap-growth.md). V8
 * reads the flag at every collection, and it applies to every thread of the process.
 */
const HEAP_GROWING_PERCENT = 50;

/** Longest a graceful stop may take before the process exits anyway. */
const SHUTDOWN_TIMEOUT_MS = 30_000;
/** How often tokens that expired more than a day ago are deleted. */
const EXPIRED_ROWS_PURGE_INTERVAL_MS = 60 * 60 * 1000;
/** How often approval requests left `processing` by a stopped instance are looked for. */
const APPROVAL_RECOVERY_INTERVAL_MS = 5 * 60 * 1000;

/**
 * isolated-vm, which runs flow scripts, crashes the process on Node 20 and later when Node's
 * startup snapshot is on (docs/adr/0012-flow-script-isolation.md), so the service refuses to
 * start without the flag rather than fail later.
 */
function startupSnapshotOff(): boolean {
  return (
    process.execArgv.includes('--no-node-snapshot') ||
    (process.env.NODE_OPTIONS ?? '').split(/\s+/).includes('--no-node-snapshot')
  );
}

/** Processing that runs on this thread because it was configured so: not degraded. */
const MAIN_THREAD_PROCESSING: ProcessingStatus = {
  runsOn: 'main-thread',
  degraded: false,
  detail: undefined,
  threadRestarts: 0,
};

/**
 * The processing thread, not started yet, when the store can be shared and PROCESSING_THREAD is
 * not false; else undefined, and processing runs on this thread. `eventLoop`, the processor of
 * this thread, is built only if the thread falls back to it.
 */
function processingThreadOf(
  env: ReturnType<typeof parseEnv>,
  settings: ProcessingSettings,
  store: Store,
  eventLoop: ProcessingOnDemand,
  logger: Logger,
): ProcessingThread | undefined {
  if (!env.processingThread || env.databaseUrl === 'sqlite::memory:') return undefined;
  return new ProcessingThread(
    {
      databaseUrl: env.databaseUrl,
      databaseConnectTimeoutMs: env.databaseConnectTimeoutMs,
      databaseStatementTimeoutMs: env.databaseStatementTimeoutMs,
      sqliteWriteTurn: store.sqliteWriteTurn,
      settings,
    },
    eventLoop,
    {
      started: () => logger.info('processing runs on its own thread'),
      processingError: (error) => logger.error({ err: error }, 'background processing failed; retrying'),
      idleConnectionLost: (error) => logger.warn({ err: error }, 'idle database connection lost'),
      threadDied: ({ exitCode, error, restarting }) =>
        logger.error(
          { exitCode, err: error },
          restarting
            ? 'processing thread ended unexpectedly; starting it again'
            : 'processing thread ended unexpectedly too often; processing moves to the main thread',
        ),
    },
  );
}

/**
 * The start-up line that says which kinds of action wait for four-eyes approval
 * (`APPROVAL_REQUIRED`, docs/domain/approvals.md), or undefined when none does: an operator sees
 * at once whether the instance holds actions back, and whether every instance agrees.
 */
function approvalLineOf(kinds: readonly string[]): string | undefined {
  if (kinds.length === 0) return undefined;
  return `Approval by a second user required for: ${kinds.join(', ')} (APPROVAL_REQUIRED)`;
}

/** A start-up failure the operator fixes from one line: printed without a stack, exit 1. */
class StartError extends Error {}

/** What to tell the operator when the listener could not be opened, by the socket error code. */
function listenFailureOf(code: string, port: number, host: string): string | undefined {
  if (code === 'EADDRINUSE') return `port ${port} on ${host} is in use; set PORT to another port`;
  if (code === 'EACCES')
    return `port ${port} on ${host} may not be used by this user; set PORT to a port above 1023`;
  if (code === 'EADDRNOTAVAIL') return `${host} is not an address of this machine; set HOST to one that is`;
  return undefined;
}

/**
 * Listens on `host:port` and returns the address. A port in use, a port the user may not take
 * or an address the machine does not have is a StartError naming the setting to change.
 */
async function listenOn(
  app: Awaited<ReturnType<typeof buildApp>>,
  port: number,
  host: string,
): Promise<string> {
  try {
    // The port opens before the access data is made (see main), so the log says the service is
    // not ready yet; "Ledgerflow listening on" is printed once it is.
    return await app.listen({
      port,
      host,
      listenTextResolver: (address) =>
        `port open at ${address}; ready once the first administrator and the bootstrap credential exist`,
    });
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? String(error.code) : '';
    const failure = listenFailureOf(code, port, host);
    if (failure === undefined) throw error;
    throw new StartError(failure);
  }
}

/**
 * The process as the service needs it: time kept in UTC, the heap's growth step, and Node's
 * startup snapshot off (exit 2 saying how to start it otherwise).
 */
function prepareProcess(): void {
  // The service keeps time in UTC whatever the host's zone, so a flow script's local-time
  // methods give the same answer on every host (docs/adr/0012-flow-script-isolation.md);
  // business dates name their zone explicitly and are not affected.
  process.env.TZ = 'UTC';
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  if (!startupSnapshotOff()) {
    process.stderr.write(
      'ledgerflow: start the service with `node --no-node-snapshot dist/main.js` (`npm start` does): ' +
        'flow scripts run in isolates that need Node started without its startup snapshot\n',
    );
    process.exit(2);
  }
}

/** The process settings, or exit 2 naming the bad one and its rule. */
function settingsOrExit(): Env {
  try {
    return parseEnv(process.env);
  } catch (error) {
    if (error instanceof EnvError) {
      process.stderr.write(`ledgerflow: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

/** The store of DATABASE_URL, its database made when missing, migrated to the latest schema. */
async function openMigratedStore(env: Env, logger: Logger): Promise<Store> {
  const { created, database } = await ensureDatabase(env.databaseUrl);
  if (created) logger.info({ database }, `database "${database}" did not exist and was created`);
  const store = openStore(env.databaseUrl, {
    onIdleError: (error) => logger.warn({ err: error }, 'idle database connection lost'),
    connectTimeoutMs: env.databaseConnectTimeoutMs,
    statementTimeoutMs: env.databaseStatementTimeoutMs,
  });
  await migrateToLatest(store);
  for (const advice of await serverAdvice(store)) logger.warn(advice);
  return store;
}

/**
 * The periodic upkeep of the event loop; answers its timers. Expired tokens, sign-in sessions
 * (with the secrets they wait to show) and request counts of ended windows are useless but would
 * make their tables grow forever; approval requests whose instance stopped while their action
 * ran are recovered (docs/domain/approvals.md), once now and then every few minutes.
 */
function startUpkeep(services: Services, logger: Logger): NodeJS.Timeout[] {
  const purge = setInterval(() => {
    services.tokens
      .purgeExpired()
      .catch((error: unknown) => logger.warn({ err: error }, 'token purge failed'));
    services.signIns
      .purgeExpired()
      .catch((error: unknown) => logger.warn({ err: error }, 'sign-in session purge failed'));
    services.requestLimiter
      .purge()
      .catch((error: unknown) => logger.warn({ err: error }, 'request count purge failed'));
  }, EXPIRED_ROWS_PURGE_INTERVAL_MS).unref();
  const recoverApprovals = () => {
    services.approvals
      .recoverInterrupted()
      .then((recovered) => {
        if (recovered > 0)
          logger.warn({ recovered }, 'approval requests interrupted by a stop recovered as failed');
      })
      .catch((error: unknown) => logger.warn({ err: error }, 'approval recovery failed'));
  };
  recoverApprovals();
  const approvalRecovery = setInterval(recoverApprovals, APPROVAL_RECOVERY_INTERVAL_MS).unref();
  return [purge, approvalRecovery];
}

/** The lines printed at start: where the service listens and how to get a first token. */
function startLines(
  url: string,
  dialect: string,
  env: Env,
  report: Awaited<ReturnType<typeof bootstrapAccess>>,
  approvalLine: string | undefined,
): string[] {
  const lines = [
    `Ledgerflow listening on ${url} (storage: ${dialect})`,
    `Administration interface: ${url}/admin (sign in as ${env.adminEmail})`,
  ];
  if (approvalLine !== undefined) lines.push(approvalLine);
  if (report.generatedAdminPassword !== undefined) {
    lines.push(
      `First administrator ${env.adminEmail} created; generated password (shown once): ${report.generatedAdminPassword}`,
    );
  }
  if (report.bootstrapClientId === undefined) {
    lines.push(
      `Get a first token: create a credential with \`npx ledgerflow credentials create --owner ${env.adminEmail}\`, then`,
      `  curl -s -X POST ${url}/auth/token -d grant_type=client_credentials -d client_id=ID -d client_secret=SECRET`,
    );
  } else {
    lines.push(
      `Get a first token: curl -s -X POST ${url}/auth/token -d grant_type=client_credentials -d client_id=${report.bootstrapClientId} -d client_secret=$BOOTSTRAP_CLIENT_SECRET`,
    );
  }
  return lines;
}

/**
 * Stops gracefully on SIGTERM and SIGINT: no new connections, requests in flight finished, then
 * processing and the store, within SHUTDOWN_TIMEOUT_MS or exit 1.
 */
function stopOnSignals(
  app: { close(): PromiseLike<unknown> },
  stopProcessing: () => Promise<unknown>,
  store: Store,
  timers: readonly NodeJS.Timeout[],
  logger: Logger,
): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    for (const timer of timers) clearInterval(timer);
    logger.info({ signal }, 'stopping: no new connections, finishing requests in flight');
    // A request or a database call that never ends must not keep the process from stopping.
    setTimeout(() => {
      logger.error({ timeoutMs: SHUTDOWN_TIMEOUT_MS }, 'could not stop in time; exiting');
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS).unref();
    // app.close stops accepting, waits for requests in flight, then runs the onClose hooks.
    Promise.resolve(app.close())
      .then(() => {
        logger.info('requests finished; stopping processing');
        return stopProcessing();
      })
      .then(() => {
        logger.info('processing stopped; closing the store');
        return store.close();
      })
      .then(() => {
        logger.info('stopped');
        logger.flush();
        process.exit(0);
      })
      .catch((error: unknown) => {
        logger.error({ err: error }, 'error while stopping');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/**
 * Starts the service. One piece: the start-up steps in the order that matters (store, services,
 * processing, HTTP, port, first administrator, background work, the printed lines last), each
 * a call or a few lines.
 */
async function main(): Promise<void> {
  prepareProcess();
  const env = settingsOrExit();
  const logger = pino({ level: env.logLevel, redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' } });
  const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  const store = await openMigratedStore(env, logger);
  // New records wake the processing thread when there is one, else the processor on this thread;
  // until processing starts there is nothing to wake (it starts with every waiting record).
  let wakeProcessing = (): void => {};
  const onBackgroundError = (error: unknown) =>
    logger.error({ err: error }, 'background processing failed; retrying');
  const services = createServices(store, systemClock, env, {
    processing: { wake: () => wakeProcessing() },
    onBackgroundError,
  });
  // Processing, on its thread or this one, pauses while many requests are in progress.
  const requestsInProgress = createRequestsInProgressBuffer();
  const processingSettings: ProcessingSettings = {
    businessDate: env.businessDate,
    flowScriptTimeoutMs: env.flowScriptTimeoutMs,
    flowScriptMemoryMb: env.flowScriptMemoryMb,
    requestsInProgress,
    stopping: createStoppingFlag(),
  };
  // Built when processing starts on this thread, or when the processing thread falls back to it.
  const eventLoopProcessing = processingOnDemand(
    store,
    services.snapshots,
    systemClock,
    processingSettings,
    onBackgroundError,
  );
  const processing = processingThreadOf(env, processingSettings, store, eventLoopProcessing, logger);
  if (await services.webhooks.secretsSealedInStore())
    logger.warn(
      'WEBHOOK_SECRETS_KEY is not set: the webhook signing secrets are sealed under a key kept in the same database, so a copy of the database reveals them. Set it (base64 of 32 random bytes, the same on every instance) and rotate the secret.',
    );
  // A request that needs a credential is refused until the first administrator and the bootstrap
  // credential exist, so `/readyz` answers 503 until then (`/healthz` answers: the process lives).
  let startingUp = true;
  const app = await buildApp({
    startingUp: () => startingUp,
    store,
    services,
    logger,
    version: packageJson.version,
    trustProxy: env.trustProxy,
    publicUrl: env.publicUrl,
    processingStatus: () => processing?.status() ?? MAIN_THREAD_PROCESSING,
    requestsInProgress,
  });

  const address = await listenOn(app, env.port, env.host);
  // The first administrator is made only once the port is ours: a start that cannot listen
  // leaves the store without a user, and the next start makes the administrator (and shows a
  // generated password) again, instead of a password no one was shown.
  const report = await bootstrapAccess(env, services);
  startingUp = false;
  if (processing === undefined) {
    eventLoopProcessing.start();
    wakeProcessing = () => eventLoopProcessing.wake();
    logger.info('processing runs on the main thread');
  } else {
    processing.start();
    wakeProcessing = () => processing.wake();
  }
  // Webhooks are sent from this thread's event loop: sending is I/O, and the deliverer's store
  // calls are small batches (docs/adr/0024-webhook-outbox.md).
  services.deliverer.start();
  const timers = startUpkeep(services, logger);
  const url = address.replace('[::1]', 'localhost');
  logger.info({ url, dialect: store.dialect }, 'ledgerflow listening');
  const approvalLine = approvalLineOf(env.approvalRequired);
  if (approvalLine !== undefined) logger.info({ approvalRequired: env.approvalRequired }, approvalLine);
  // One write, so a reader that sees the URL line also sees how to get a first token.
  const lines = startLines(url, store.dialect, env, report, approvalLine);
  stopOnSignals(
    app,
    () => (processing === undefined ? eventLoopProcessing.stop() : processing.stop()),
    store,
    timers,
    logger,
  );
  // Printed last: whoever waits for the URL line may at once use the bootstrap credential, which
  // exists, and send a signal, which stops the service gracefully.
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error: unknown) => {
  // A store that cannot be reached or created is the operator's to fix: one line, no stack.
  if (error instanceof StoreUnavailableError) {
    process.stderr.write(`ledgerflow: cannot start: ${error.message}\n`);
    process.exit(1);
  }
  if (error instanceof StartError) {
    process.stderr.write(`ledgerflow: ${error.message}\n`);
    process.exit(1);
  }
  process.stderr.write(
    `ledgerflow: failed to start: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
