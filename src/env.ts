import { isIP } from 'node:net';
import { APPROVAL_KIND_NAMES, type ApprovalKindName, isApprovalKindName } from './modules/approvals/kinds.js';
import { PASSWORD_LENGTH_MAX_CHARS, PASSWORD_LENGTH_MIN_CHARS } from './modules/auth/inputs.js';
import { RATE_LIMIT_MAX_DEFAULT, RATE_LIMIT_WINDOW_MS_DEFAULT } from './modules/auth/request-limiter.js';
import {
  CLIENT_FIELD_LENGTH_MAX,
  REFRESH_REUSE_GRACE_SECONDS_DEFAULT,
  REFRESH_REUSE_GRACE_SECONDS_MAX,
} from './modules/auth/token-service.js';
import {
  FLOW_SCRIPT_MEMORY_MB_DEFAULT,
  FLOW_SCRIPT_MEMORY_MB_MAX,
  FLOW_SCRIPT_MEMORY_MB_MIN,
  FLOW_SCRIPT_TIMEOUT_MS_DEFAULT,
  FLOW_SCRIPT_TIMEOUT_MS_MAX,
} from './modules/flows/sandbox.js';
import {
  DATABASE_CONNECT_TIMEOUT_MS_DEFAULT,
  DATABASE_STATEMENT_TIMEOUT_MS_DEFAULT,
} from './storage/store.js';

/**
 * Process settings from the environment. This is "env", not the Configuration Data document,
 * which lives in the store.
 */
export interface Env {
  port: number;
  host: string;
  databaseUrl: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** Seconds after a refresh in which an exact repeat gets the same answer; 0 = none. */
  refreshReuseGraceSeconds: number;
  bootstrapClientId: string | undefined;
  bootstrapClientSecret: string | undefined;
  adminEmail: string;
  adminPassword: string | undefined;
  businessDate: string | undefined;
  logLevel: string;
  /**
   * The base URL clients reach the service at (`PUBLIC_URL`), without a trailing slash; unset
   * means the address the server listens on. The administration sign-in accepts forms only
   * from its origin.
   */
  publicUrl: string | undefined;
  /** Worker threads that parse and validate large chunks; 0 works them on the event loop (ADR 0010). */
  ingestWorkerThreads: number;
  /**
   * Which proxies in front of the service are believed when they name the client in
   * `X-Forwarded-For` (TRUST_PROXY): `false` (none, the default), `true` (every hop), or their
   * addresses and CIDR ranges. The client address limits failed authentications. Only these
   * proxies are believed in `X-Forwarded-Proto` and `X-Forwarded-Host` too.
   */
  trustProxy: boolean | string[];
  /** PostgreSQL: longest wait for a connection, new or from the pool. */
  databaseConnectTimeoutMs: number;
  /** PostgreSQL: longest a statement may run, and a transaction may sit idle. */
  databaseStatementTimeoutMs: number;
  /** Wall-clock milliseconds a flow script may run for one record (`FLOW_SCRIPT_TIMEOUT_MS`). */
  flowScriptTimeoutMs: number;
  /** Heap megabytes of each flow script's isolate (`FLOW_SCRIPT_MEMORY_MB`). */
  flowScriptMemoryMb: number;
  /** Requests one client (or address, before authentication) may make per window; 0 = no limit. */
  rateLimitMax: number;
  /** Length of a rate-limit window. */
  rateLimitWindowMs: number;
  /**
   * Whether the background processor runs on a worker thread with its own store connection
   * (`PROCESSING_THREAD`, on by default; docs/adr/0013-processing-thread.md). An in-memory SQLite
   * store cannot be shared, so its processor always runs on the event loop.
   */
  processingThread: boolean;
  /**
   * Whether webhooks may be sent over plain `http` and to loopback addresses
   * (`WEBHOOK_ALLOW_HTTP_LOOPBACK`, off by default: for tests and local development only).
   */
  webhookAllowHttpLoopback: boolean;
  /**
   * The key that seals webhook signing secrets at rest (`WEBHOOK_SECRETS_KEY`, base64 of 32
   * bytes); unset, a key made once is kept in the store (docs/adr/0024-webhook-outbox.md).
   */
  webhookSecretsKey: string | undefined;
  /**
   * The kinds of action that wait for four-eyes approval (`APPROVAL_REQUIRED`, a comma-separated
   * list; empty by default). A process setting, not a stored one, so that no single user can
   * turn it off (docs/adr/0027-four-eyes-approval.md).
   */
  approvalRequired: ApprovalKindName[];
}

const LOG_LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);
const TTL_SECONDS_MAX = 366 * 24 * 3600;
const INGEST_WORKER_THREADS_MAX = 64;
/** Bounds of the database timeouts: below 100 ms a busy but healthy server would be refused. */
const DATABASE_TIMEOUT_MS_MIN = 100;
const DATABASE_CONNECT_TIMEOUT_MS_MAX = 10 * 60 * 1000;
const DATABASE_STATEMENT_TIMEOUT_MS_MAX = 60 * 60 * 1000;
/** Bounds of the rate limit: a window shorter than a second would be counted mostly in flight. */
const RATE_LIMIT_MAX_MAX = 1_000_000_000;
const RATE_LIMIT_WINDOW_MS_MIN = 1_000;
const RATE_LIMIT_WINDOW_MS_MAX = 24 * 60 * 60 * 1000;
/**
 * Shortest `BOOTSTRAP_CLIENT_SECRET` accepted. The bootstrap credential has every permission, so
 * its secret must resist guessing: 24 characters of a random base64 string carry 144 bits.
 */
export const BOOTSTRAP_CLIENT_SECRET_LENGTH_MIN = 24;

/** Bytes of `WEBHOOK_SECRETS_KEY` once decoded from base64. */
const WEBHOOK_SECRETS_KEY_BYTES = 32;

/** Thrown for a setting that cannot be used; main prints it and exits with status 2. */
export class EnvError extends Error {}

/** ADMIN_PASSWORD, held to the rule of every password, so that a start never fails on it later. */
function adminPasswordSetting(text: string | undefined): string | undefined {
  if (text === undefined || text === '') return undefined;
  const length = [...text].length;
  if (length < PASSWORD_LENGTH_MIN_CHARS || length > PASSWORD_LENGTH_MAX_CHARS) {
    throw new EnvError(
      `ADMIN_PASSWORD must be ${PASSWORD_LENGTH_MIN_CHARS} to ${PASSWORD_LENGTH_MAX_CHARS} characters long`,
    );
  }
  return text;
}

function integerSetting(
  vars: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const text = vars[name];
  if (text === undefined || text === '') return fallback;
  if (!/^\d+$/.test(text)) throw new EnvError(`${name} must be a whole number, got "${text}"`);
  const value = Number(text);
  if (value < min || value > max) throw new EnvError(`${name} must be between ${min} and ${max}`);
  return value;
}

/** Names proxy-addr (Fastify's `trustProxy`) understands in place of addresses. */
const TRUST_PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** True for an IP address, an IP address with a `/prefix` in range, or a named range. */
function isProxyAddress(entry: string): boolean {
  if (TRUST_PROXY_NAMES.has(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128);
}

function trustProxySetting(text: string | undefined): boolean | string[] {
  if (text === undefined || text.trim() === '' || text.trim() === 'false') return false;
  if (text.trim() === 'true') return true;
  const entries = text.split(',').map((entry) => entry.trim());
  const bad = entries.find((entry) => !isProxyAddress(entry));
  if (bad !== undefined) {
    throw new EnvError(
      `TRUST_PROXY must be true, false, or a comma-separated list of IP addresses and CIDR ranges (or loopback, linklocal, uniquelocal); "${bad}" is none of these`,
    );
  }
  return entries;
}

/** `PUBLIC_URL`: an absolute http(s) URL without query or fragment, read without a trailing slash. */
function publicUrlSetting(text: string | undefined): string | undefined {
  if (text === undefined || text === '') return undefined;
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (
    url === undefined ||
    !['http:', 'https:'].includes(url.protocol) ||
    url.search !== '' ||
    url.hash !== ''
  ) {
    throw new EnvError(
      `PUBLIC_URL must be an http:// or https:// URL without query or fragment, such as https://ledger.example.com, got "${text}"`,
    );
  }
  return url.href.replace(/\/+$/, '');
}

/** `APPROVAL_REQUIRED`: kinds of action, comma-separated, each named once. */
function approvalRequiredSetting(text: string | undefined): ApprovalKindName[] {
  if (text === undefined || text.trim() === '') return [];
  const kinds: ApprovalKindName[] = [];
  for (const part of text.split(',')) {
    const name = part.trim();
    if (!isApprovalKindName(name))
      throw new EnvError(
        `APPROVAL_REQUIRED must list kinds of action among ${APPROVAL_KIND_NAMES.join(', ')}, separated by commas; got "${name}"`,
      );
    if (!kinds.includes(name)) kinds.push(name);
  }
  return kinds;
}

function booleanSetting(vars: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const text = vars[name];
  if (text === undefined || text === '') return fallback;
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw new EnvError(`${name} must be true or false, got "${text}"`);
}

/** `WEBHOOK_SECRETS_KEY`: base64 of exactly 32 bytes, so the sealing key has 256 bits. */
function webhookSecretsKeySetting(text: string | undefined): string | undefined {
  if (text === undefined || text === '') return undefined;
  if (
    !/^[A-Za-z0-9+/]+={0,2}$/.test(text) ||
    Buffer.from(text, 'base64').length !== WEBHOOK_SECRETS_KEY_BYTES
  )
    throw new EnvError(
      `WEBHOOK_SECRETS_KEY must be the base64 of ${WEBHOOK_SECRETS_KEY_BYTES} random bytes; make one with: openssl rand -base64 32`,
    );
  return text;
}

function isRealDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(text);
}

/** DATABASE_URL: a SQLite path or a PostgreSQL URL; the embedded SQLite file unless set. */
function databaseUrlSetting(value: string | undefined): string {
  const databaseUrl = value || 'sqlite:./data/ledgerflow.db';
  if (!/^(sqlite:|postgres:\/\/|postgresql:\/\/)/.test(databaseUrl)) {
    throw new EnvError('DATABASE_URL must start with sqlite: or postgres://');
  }
  return databaseUrl;
}

/** LOG_LEVEL: one of pino's levels; `info` unless set. */
function logLevelSetting(value: string | undefined): string {
  const logLevel = value || 'info';
  if (!LOG_LEVELS.has(logLevel)) throw new EnvError(`LOG_LEVEL must be one of ${[...LOG_LEVELS].join(', ')}`);
  return logLevel;
}

/** BUSINESS_DATE: a day that exists, `YYYY-MM-DD`, when set. */
function businessDateSetting(value: string | undefined): string | undefined {
  const businessDate = value || undefined;
  if (businessDate !== undefined && !isRealDate(businessDate)) {
    throw new EnvError('BUSINESS_DATE must be a date YYYY-MM-DD');
  }
  return businessDate;
}

/** BOOTSTRAP_CLIENT_ID and BOOTSTRAP_CLIENT_SECRET: both or neither, the secret long enough. */
function bootstrapCredentialSettings(vars: NodeJS.ProcessEnv): {
  bootstrapClientId: string | undefined;
  bootstrapClientSecret: string | undefined;
} {
  const bootstrapClientId = vars.BOOTSTRAP_CLIENT_ID || undefined;
  const bootstrapClientSecret = vars.BOOTSTRAP_CLIENT_SECRET || undefined;
  if ((bootstrapClientId === undefined) !== (bootstrapClientSecret === undefined)) {
    throw new EnvError('BOOTSTRAP_CLIENT_ID and BOOTSTRAP_CLIENT_SECRET must be set together');
  }
  if (
    bootstrapClientSecret !== undefined &&
    bootstrapClientSecret.length < BOOTSTRAP_CLIENT_SECRET_LENGTH_MIN
  ) {
    throw new EnvError(
      `BOOTSTRAP_CLIENT_SECRET must be at least ${BOOTSTRAP_CLIENT_SECRET_LENGTH_MIN} characters long (it has ${bootstrapClientSecret.length}); make one with: openssl rand -base64 32`,
    );
  }
  if (bootstrapClientSecret !== undefined && bootstrapClientSecret.length > CLIENT_FIELD_LENGTH_MAX) {
    throw new EnvError(`BOOTSTRAP_CLIENT_SECRET must be at most ${CLIENT_FIELD_LENGTH_MAX} characters long`);
  }
  if (bootstrapClientId !== undefined && bootstrapClientId.length > CLIENT_FIELD_LENGTH_MAX) {
    throw new EnvError(`BOOTSTRAP_CLIENT_ID must be at most ${CLIENT_FIELD_LENGTH_MAX} characters long`);
  }
  return { bootstrapClientId, bootstrapClientSecret };
}

/**
 * Reads and checks every process setting; throws EnvError naming the bad one and the rule.
 * One piece: the list of every setting, one or a few lines each, read in the order of the type.
 */
export function parseEnv(vars: NodeJS.ProcessEnv): Env {
  const databaseUrl = databaseUrlSetting(vars.DATABASE_URL);
  const logLevel = logLevelSetting(vars.LOG_LEVEL);
  const businessDate = businessDateSetting(vars.BUSINESS_DATE);
  const { bootstrapClientId, bootstrapClientSecret } = bootstrapCredentialSettings(vars);
  return {
    port: integerSetting(vars, 'PORT', 8080, 0, 65535),
    host: vars.HOST || '127.0.0.1',
    databaseUrl,
    accessTokenTtlSeconds: integerSetting(vars, 'ACCESS_TOKEN_TTL', 300, 1, TTL_SECONDS_MAX),
    refreshTokenTtlSeconds: integerSetting(vars, 'REFRESH_TOKEN_TTL', 1800, 1, TTL_SECONDS_MAX),
    refreshReuseGraceSeconds: integerSetting(
      vars,
      'REFRESH_REUSE_GRACE_SECONDS',
      REFRESH_REUSE_GRACE_SECONDS_DEFAULT,
      0,
      REFRESH_REUSE_GRACE_SECONDS_MAX,
    ),
    bootstrapClientId,
    bootstrapClientSecret,
    adminEmail: vars.ADMIN_EMAIL || 'admin@localhost',
    adminPassword: adminPasswordSetting(vars.ADMIN_PASSWORD),
    businessDate,
    logLevel,
    publicUrl: publicUrlSetting(vars.PUBLIC_URL),
    ingestWorkerThreads: integerSetting(vars, 'INGEST_WORKER_THREADS', 0, 0, INGEST_WORKER_THREADS_MAX),
    trustProxy: trustProxySetting(vars.TRUST_PROXY),
    databaseConnectTimeoutMs: integerSetting(
      vars,
      'DATABASE_CONNECT_TIMEOUT_MS',
      DATABASE_CONNECT_TIMEOUT_MS_DEFAULT,
      DATABASE_TIMEOUT_MS_MIN,
      DATABASE_CONNECT_TIMEOUT_MS_MAX,
    ),
    databaseStatementTimeoutMs: integerSetting(
      vars,
      'DATABASE_STATEMENT_TIMEOUT_MS',
      DATABASE_STATEMENT_TIMEOUT_MS_DEFAULT,
      DATABASE_TIMEOUT_MS_MIN,
      DATABASE_STATEMENT_TIMEOUT_MS_MAX,
    ),
    flowScriptTimeoutMs: integerSetting(
      vars,
      'FLOW_SCRIPT_TIMEOUT_MS',
      FLOW_SCRIPT_TIMEOUT_MS_DEFAULT,
      1,
      FLOW_SCRIPT_TIMEOUT_MS_MAX,
    ),
    flowScriptMemoryMb: integerSetting(
      vars,
      'FLOW_SCRIPT_MEMORY_MB',
      FLOW_SCRIPT_MEMORY_MB_DEFAULT,
      FLOW_SCRIPT_MEMORY_MB_MIN,
      FLOW_SCRIPT_MEMORY_MB_MAX,
    ),
    rateLimitMax: integerSetting(vars, 'RATE_LIMIT_MAX', RATE_LIMIT_MAX_DEFAULT, 0, RATE_LIMIT_MAX_MAX),
    rateLimitWindowMs: integerSetting(
      vars,
      'RATE_LIMIT_WINDOW_MS',
      RATE_LIMIT_WINDOW_MS_DEFAULT,
      RATE_LIMIT_WINDOW_MS_MIN,
      RATE_LIMIT_WINDOW_MS_MAX,
    ),
    processingThread: booleanSetting(vars, 'PROCESSING_THREAD', true),
    webhookAllowHttpLoopback: booleanSetting(vars, 'WEBHOOK_ALLOW_HTTP_LOOPBACK', false),
    webhookSecretsKey: webhookSecretsKeySetting(vars.WEBHOOK_SECRETS_KEY),
    approvalRequired: approvalRequiredSetting(vars.APPROVAL_REQUIRED),
  };
}
