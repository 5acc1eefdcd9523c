import { type Static, type TSchema, Type } from '@sinclair/typebox';
import {
  BlockingChange,
  FailedRecord,
  FieldError,
  OAuthErrorBody,
  PathError,
  Problem,
  TokenAnswer,
} from '../../http/api/answer-schemas.js';
import { CliError, EXIT_REFUSED, usageError } from '../output.js';
import { answerOf, matches } from './answers.js';
import {
  RETRY_ATTEMPTS_MAX,
  RETRY_DELAY_MS_BASE,
  RetryableFailure,
  type RetryPolicy,
  withRetries,
} from './retry.js';

export { RETRY_ATTEMPTS_MAX } from './retry.js';

/** Longest time one attempt may take before it counts as a network failure. */
export const REQUEST_TIMEOUT_MS = 120_000;
/**
 * How long before `expires_in` runs out the access token is renewed, at most; a short-lived
 * token is renewed at half its life instead, so that a request sent with it still arrives in
 * time on a slow link or at a busy service.
 */
export const TOKEN_RENEW_MARGIN_MS_MAX = 30_000;

/** How long before the end of a token's life it is renewed. */
function renewMarginMs(lifeMs: number): number {
  return Math.min(TOKEN_RENEW_MARGIN_MS_MAX, lifeMs / 2);
}

/** Characters of a non-JSON error body quoted in an error message. */
const ERROR_BODY_CHARS_MAX = 500;

/** Where and as whom the CLI talks to a running service. */
export interface Connection {
  /** Base URL of the instance, without `/api/v1`. */
  url: string;
  clientId: string;
  clientSecret: string;
}

/** The `parseArgs` options every remote command takes. */
export const CONNECTION_OPTIONS = {
  url: { type: 'string' },
  'client-id': { type: 'string' },
  'client-secret': { type: 'string' },
} as const;

/**
 * The connection from `--url`, `--client-id`, `--client-secret`, each falling back to
 * `LEDGERFLOW_URL`, `LEDGERFLOW_CLIENT_ID`, `LEDGERFLOW_CLIENT_SECRET`. Throws a usage error
 * (exit 2) when one is missing or the URL is not http(s).
 */
export function connectionOf(
  values: {
    url?: string | undefined;
    'client-id'?: string | undefined;
    'client-secret'?: string | undefined;
  },
  env: NodeJS.ProcessEnv = process.env,
): Connection {
  const url = values.url ?? env.LEDGERFLOW_URL;
  const clientId = values['client-id'] ?? env.LEDGERFLOW_CLIENT_ID;
  const clientSecret = values['client-secret'] ?? env.LEDGERFLOW_CLIENT_SECRET;
  const missing = [
    url ? undefined : '--url (or LEDGERFLOW_URL)',
    clientId ? undefined : '--client-id (or LEDGERFLOW_CLIENT_ID)',
    clientSecret ? undefined : '--client-secret (or LEDGERFLOW_CLIENT_SECRET)',
  ].filter((name) => name !== undefined);
  if (!url || !clientId || !clientSecret) throw usageError(`missing ${missing.join(', ')}`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw usageError(`--url is not a URL: ${url}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw usageError(`--url must be http or https, got ${parsed.protocol}`);
  return { url: parsed.toString(), clientId, clientSecret };
}

/** Any JSON object: what `json` checks an answer against when given no schema. */
const JsonObject = Type.Record(Type.String(), Type.Unknown());

/** A token answer as far as the client reads it: the refresh token is used when given. */
const TokenRead = Type.Composite([
  Type.Pick(TokenAnswer, ['access_token', 'expires_in']),
  Type.Partial(Type.Pick(TokenAnswer, ['refresh_token', 'refresh_expires_in'])),
]);

/** A failed record in a problem's `errors`, as far as a message reads it. */
const FailedRecordRead = Type.Pick(FailedRecord, ['index', 'errors']);

/** A problem body as far as an error message reads it; a partial one is quoted too. */
const ProblemAnswer = Type.Composite([
  Type.Partial(Type.Pick(Problem, ['title', 'detail'])),
  Type.Object({
    errors: Type.Optional(Type.Array(Type.Unknown())),
    blocking: Type.Optional(Type.Array(Type.Unknown())),
  }),
]);

/** One answer of the service, its body parsed when it is JSON. */
export interface ApiResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON, or the text when the body is not JSON, or undefined when empty. */
  body: unknown;
}

/** A request the service answered with an error status; the message is ready to print. */
export class ApiError extends CliError {
  readonly status: number;
  readonly body: unknown;

  constructor(message: string, status: number, body: unknown) {
    super(message, EXIT_REFUSED);
    this.status = status;
    this.body = body;
  }
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * One `errors[]` entry of a problem as one line: `path: message` for configuration and
 * request errors, `record N: field: message (code); ...` for failed chunk records.
 */
export function formatProblemEntry(entry: unknown): string {
  if (matches(PathError, entry))
    return `${entry.path === '' ? '(the whole document)' : entry.path}: ${entry.message}`;
  if (matches(BlockingChange, entry)) return `${entry.path}: ${entry.reason}`;
  if (matches(FailedRecordRead, entry))
    return `record ${entry.index}: ${entry.errors.map(formatProblemEntry).join('; ')}`;
  if (matches(FieldError, entry)) {
    const code = entry.code === '' ? '' : ` (${entry.code})`;
    // A processing error belongs to the record, not to a field: no empty field before it.
    const field = entry.field === '' ? '' : `${entry.field}: `;
    return `${field}${entry.message}${code}`;
  }
  return text(entry);
}

/**
 * The message of an error answer: `METHOD PATH: STATUS TITLE: DETAIL`, then each `errors[]`
 * entry of a problem+json body on its own line. OAuth errors (`error`, `error_description`)
 * and other bodies are quoted briefly.
 */
export function errorMessageOf(method: string, path: string, status: number, body: unknown): string {
  const head = `${method} ${path}: ${status}`;
  if (matches(ProblemAnswer, body) && (body.title !== undefined || body.detail !== undefined)) {
    const title = body.title === undefined ? '' : ` ${body.title}`;
    const detail = body.detail === undefined ? '' : `: ${body.detail}`;
    // A refused change that keeps the processing data lists its `blocking` changes instead.
    const entries = [...(body.errors ?? []), ...(body.blocking ?? [])].map(formatProblemEntry);
    return [`${head}${title}${detail}`, ...entries].join('\n');
  }
  if (matches(OAuthErrorBody, body)) {
    const description = body.error_description === undefined ? '' : `: ${body.error_description}`;
    return `${head} ${body.error}${description}`;
  }
  if (body === undefined || body === '') return head;
  return `${head}: ${text(body).slice(0, ERROR_BODY_CHARS_MAX)}`;
}

/** A request to the service. */
export interface ApiRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path from the instance root, such as `/api/v1/ingestions`. */
  path: string;
  query?: Record<string, string | number | undefined>;
  /** A JSON value, serialised here. */
  json?: unknown;
  /** An already serialised JSON body (chunks are measured as they are built). */
  body?: string;
  /** Content type of the body; `application/json` by default. */
  contentType?: string;
  /** Sent as `Idempotency-Key`; makes a POST or PATCH safe to retry. */
  idempotencyKey?: string;
  /** Marks a POST or PATCH as safe to repeat without a key (closing a session is). */
  idempotent?: boolean;
  /** Error statuses returned as answers instead of thrown (a 400 of a chunk is data). */
  accept?: readonly number[];
}

/** Test and progress hooks of the client. */
export interface ClientOptions {
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  random?: () => number;
  retryDelayMsBase?: number;
  /** Told of every retry; never given a secret or a token. */
  onRetry?: (message: string) => void;
}

interface TokenState {
  accessToken: string;
  accessExpiresAtMs: number;
  renewAtMs: number;
  refreshToken: string | undefined;
  refreshExpiresAtMs: number;
}

const IDEMPOTENT_METHODS = new Set(['GET', 'PUT', 'DELETE']);

function retryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

function retryAfterMs(headers: Headers): number | undefined {
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function networkReason(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError') return `no answer within ${REQUEST_TIMEOUT_MS} ms`;
    const cause: unknown = error.cause;
    if (cause instanceof Error) return 'code' in cause ? String(cause.code) : cause.message;
    return error.message;
  }
  return String(error);
}

async function bodyOf(response: Response): Promise<unknown> {
  const raw = await response.text();
  if (raw === '') return undefined;
  const type = response.headers.get('content-type') ?? '';
  if (type.includes('json')) {
    try {
      return JSON.parse(raw);
    } catch {
      return raw;
    }
  }
  return raw;
}

/**
 * A client of one Ledgerflow instance on the built-in fetch. It gets an access token with the
 * client credentials grant, renews it with the refresh grant shortly before `expires_in` runs
 * out (and with client credentials again when the refresh token expired or was refused), and
 * retries idempotent or idempotency-keyed requests on network errors, 429 and 5xx with capped
 * exponential backoff and full jitter. Tokens and the secret never appear in a message.
 */
export class ApiClient {
  private readonly base: URL;
  private readonly fetchFn: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly retryDelayMsBase: number;
  private readonly onRetry: ((message: string) => void) | undefined;
  private token: TokenState | undefined;
  private renewing: Promise<TokenState> | undefined;
  /** Retries made so far, shown by progress reports. */
  retries = 0;

  constructor(
    private readonly connection: Connection,
    options: ClientOptions = {},
  ) {
    this.base = new URL(connection.url.endsWith('/') ? connection.url : `${connection.url}/`);
    this.fetchFn = options.fetch ?? fetch;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.retryDelayMsBase = options.retryDelayMsBase ?? RETRY_DELAY_MS_BASE;
    this.onRetry = options.onRetry;
  }

  /**
   * Sends a request and returns the answer. Throws ApiError (exit 1) for an error status not
   * in `accept`, and CliError (exit 1) when the service cannot be reached after the retries.
   * A 401 renews the token once and repeats the request: the token may have expired on the way
   * (a slow answer, a short lifetime, clock skew) or been revoked, and the client holds the
   * credentials to get another.
   */
  async request(request: ApiRequest): Promise<ApiResponse> {
    const retryable =
      IDEMPOTENT_METHODS.has(request.method) ||
      request.idempotencyKey !== undefined ||
      request.idempotent === true;
    const body = request.body ?? (request.json === undefined ? undefined : JSON.stringify(request.json));
    const url = this.urlOf(request.path, request.query);
    const label = `${request.method} ${request.path}`;
    const send = async (token: TokenState): Promise<ApiResponse> => {
      const headers: Record<string, string> = {
        authorization: `Bearer ${token.accessToken}`,
        accept: 'application/json, application/problem+json',
      };
      if (body !== undefined) headers['content-type'] = request.contentType ?? 'application/json';
      if (request.idempotencyKey !== undefined) headers['idempotency-key'] = request.idempotencyKey;
      let response: Response;
      try {
        response = await this.fetchFn(url, {
          method: request.method,
          headers,
          ...(body === undefined ? {} : { body }),
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
      } catch (error) {
        const reason = networkReason(error);
        const final = (attempts: number) =>
          new CliError(
            `${label}: cannot reach ${this.base.origin} (${reason})` +
              (retryable ? ` after ${attempts} attempts` : ''),
            EXIT_REFUSED,
          );
        if (!retryable) throw final(1);
        throw new RetryableFailure(reason, final);
      }
      return { status: response.status, headers: response.headers, body: await bodyOf(response) };
    };
    const answer = await withRetries(label, this.retryPolicy(), async () => {
      const token = await this.accessToken();
      let sent = await send(token);
      if (sent.status === 401) {
        this.forget(token);
        sent = await send(await this.accessToken());
      }
      if (retryable && retryableStatus(sent.status)) throw this.retryableAnswer(request, sent);
      return sent;
    });
    if (answer.status >= 400 && !(request.accept ?? []).includes(answer.status)) {
      throw new ApiError(
        errorMessageOf(request.method, request.path, answer.status, answer.body),
        answer.status,
        answer.body,
      );
    }
    return answer;
  }

  /**
   * `request` for a JSON answer: the body checked against `schema` (the route's response schema;
   * any JSON object without one), or CliError (exit 1) naming the endpoint when it does not match.
   */
  async json(request: ApiRequest): Promise<Record<string, unknown>>;
  async json<T extends TSchema>(request: ApiRequest, schema: T): Promise<Static<T>>;
  async json(request: ApiRequest, schema: TSchema = JsonObject): Promise<unknown> {
    const { body } = await this.request(request);
    return answerOf(`${request.method} ${request.path}`, schema, body);
  }

  private urlOf(path: string, query: ApiRequest['query']): URL {
    const url = new URL(path.replace(/^\/+/, ''), this.base);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url;
  }

  private retryPolicy(attemptsMax = RETRY_ATTEMPTS_MAX): RetryPolicy {
    return {
      attemptsMax,
      delayMsBase: this.retryDelayMsBase,
      sleep: this.sleep,
      random: this.random,
      onRetry: (message) => {
        this.retries += 1;
        this.onRetry?.(message);
      },
    };
  }

  /** A 429 or 5xx answer as a retryable failure whose final error is the answer's problem. */
  private retryableAnswer(request: ApiRequest, answer: ApiResponse): RetryableFailure {
    return new RetryableFailure(
      String(answer.status),
      () =>
        new ApiError(
          errorMessageOf(request.method, request.path, answer.status, answer.body),
          answer.status,
          answer.body,
        ),
      retryAfterMs(answer.headers),
    );
  }

  private forget(token: TokenState): void {
    if (this.token === token) this.token = { ...token, renewAtMs: 0, accessExpiresAtMs: 0 };
  }

  /**
   * A valid access token. Renewals are single-flight: refresh tokens rotate, and presenting one
   * twice (two workers renewing at once) revokes the whole grant (RFC 9700, section 2.2.2).
   */
  private async accessToken(): Promise<TokenState> {
    const token = this.token;
    if (token !== undefined && this.now() < token.renewAtMs) return token;
    if (this.renewing === undefined) {
      this.renewing = this.renew(token).finally(() => {
        this.renewing = undefined;
      });
    }
    return this.renewing;
  }

  private async renew(previous: TokenState | undefined): Promise<TokenState> {
    if (previous?.refreshToken !== undefined && this.now() < previous.refreshExpiresAtMs) {
      try {
        // Never retried: if the answer was lost, the refresh token is already spent and a
        // second use would revoke the grant. Client credentials are the safe fallback.
        this.token = await this.grant(
          { grant_type: 'refresh_token', refresh_token: previous.refreshToken },
          1,
        );
        return this.token;
      } catch (error) {
        if (error instanceof ApiError && error.status !== 400) throw error;
      }
    }
    this.token = await this.grant({ grant_type: 'client_credentials' }, RETRY_ATTEMPTS_MAX);
    return this.token;
  }

  private async grant(fields: Record<string, string>, attemptsMax: number): Promise<TokenState> {
    const form = new URLSearchParams({
      ...fields,
      client_id: this.connection.clientId,
      client_secret: this.connection.clientSecret,
    }).toString();
    const request: ApiRequest = { method: 'POST', path: '/auth/token' };
    const label = `POST /auth/token (${fields.grant_type})`;
    return withRetries('POST /auth/token', this.retryPolicy(attemptsMax), async () => {
      const startedMs = this.now();
      let response: Response;
      try {
        response = await this.fetchFn(this.urlOf('/auth/token', undefined), {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body: form,
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
      } catch (error) {
        const reason = networkReason(error);
        throw new RetryableFailure(
          reason,
          () => new CliError(`${label}: cannot reach ${this.base.origin} (${reason})`, EXIT_REFUSED),
        );
      }
      const answer: ApiResponse = {
        status: response.status,
        headers: response.headers,
        body: await bodyOf(response),
      };
      if (retryableStatus(answer.status)) throw this.retryableAnswer(request, answer);
      const body = answer.body;
      if (answer.status !== 200) {
        throw new ApiError(errorMessageOf('POST', '/auth/token', answer.status, body), answer.status, body);
      }
      const token = answerOf(label, TokenRead, body);
      const lifeMs = token.expires_in * 1000;
      const refreshLifeMs = (token.refresh_expires_in ?? 0) * 1000;
      return {
        accessToken: token.access_token,
        accessExpiresAtMs: startedMs + lifeMs,
        renewAtMs: startedMs + lifeMs - renewMarginMs(lifeMs),
        refreshToken: token.refresh_token,
        // A refresh token is not used near the end of its life either, for the same reason.
        refreshExpiresAtMs: startedMs + refreshLifeMs - renewMarginMs(refreshLifeMs),
      };
    });
  }
}
