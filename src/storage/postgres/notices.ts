import pg from 'pg';

/** Wait before the first new attempt to listen after the connection failed; doubled up to the next. */
const RELISTEN_DELAY_MS_FIRST = 500;
const RELISTEN_DELAY_MS_MAX = 30_000;
/** Idle time before TCP keepalive probes start, so a silently dead server is found. */
const KEEPALIVE_INITIAL_DELAY_MS = 10_000;

/** Told of a channel's notices, and whether they are being received at all. */
export interface NoticeSubscriber {
  /** A notice arrived on the channel (its payload is not used). */
  notice(): void;
  /**
   * Notices are received from now on (`true`), or may be missed from now on (`false`): the
   * connection failed, or the store is closing. Told again on every change.
   */
  listening(on: boolean): void;
}

/**
 * PostgreSQL's notices (`LISTEN`/`NOTIFY`) for the subscribers of one store, on one connection of
 * their own, opened when the first subscriber comes. The connection is outside the pool: a
 * pooled connection is handed to other work and would not read notices meanwhile. When it fails,
 * every subscriber is told it is no longer listening and the hub tries again, after half a second
 * at first, up to every 30 s; notices sent meanwhile are lost, which the subscribers must allow
 * for.
 */
export class PostgresNotices {
  readonly #databaseUrl: string;
  readonly #connectTimeoutMs: number;
  readonly #onError: (error: Error) => void;
  readonly #subscribers = new Map<string, Set<NoticeSubscriber>>();
  #client: pg.Client | undefined;
  #retry: NodeJS.Timeout | undefined;
  #delayMs = RELISTEN_DELAY_MS_FIRST;
  #listening = false;
  #closed = false;

  /** `onError` is told of every failure of the connection (the hub tries again itself). */
  constructor(databaseUrl: string, connectTimeoutMs: number, onError: (error: Error) => void) {
    this.#databaseUrl = databaseUrl;
    this.#connectTimeoutMs = connectTimeoutMs;
    this.#onError = onError;
  }

  /**
   * Adds `subscriber` to `channel` (a plain identifier, from code). Connects on the first call;
   * a channel new to an open connection opens it again, listening to every channel.
   */
  subscribe(channel: string, subscriber: NoticeSubscriber): void {
    if (this.#closed) return;
    const known = this.#subscribers.get(channel);
    if (known !== undefined) {
      known.add(subscriber);
      if (this.#listening) subscriber.listening(true);
      return;
    }
    this.#subscribers.set(channel, new Set([subscriber]));
    if (this.#retry !== undefined) return;
    const client = this.#client;
    if (client !== undefined) {
      this.#client = undefined;
      this.#tell(false);
      client.end().catch(() => undefined);
    }
    this.#connect();
  }

  /** Ends the connection; subscribers are told they are no longer listening. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#retry = undefined;
    const client = this.#client;
    this.#client = undefined;
    this.#tell(false);
    if (client !== undefined) await client.end().catch(() => undefined);
  }

  #connect(): void {
    const client = new pg.Client({
      connectionString: this.#databaseUrl,
      connectionTimeoutMillis: this.#connectTimeoutMs,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_INITIAL_DELAY_MS,
    });
    this.#client = client;
    client.on('notification', (message) => {
      if (this.#client !== client) return;
      for (const subscriber of this.#subscribers.get(message.channel) ?? []) subscriber.notice();
    });
    client.on('error', (error) => this.#failed(client, error));
    client.on('end', () => this.#failed(client, new Error('the notice connection ended')));
    const channels = [...this.#subscribers.keys()];
    client
      .connect()
      .then(() => client.query(channels.map((channel) => `listen ${channel}`).join('; ')))
      .then(
        () => {
          if (this.#client !== client) return;
          this.#delayMs = RELISTEN_DELAY_MS_FIRST;
          this.#tell(true);
        },
        (error: unknown) => this.#failed(client, error),
      );
  }

  /** The connection `client` failed: tell the subscribers, drop it, and try again later. */
  #failed(client: pg.Client, error: unknown): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    this.#onError(error instanceof Error ? error : new Error(String(error)));
    this.#tell(false);
    client.end().catch(() => undefined);
    if (this.#closed) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      if (!this.#closed) this.#connect();
    }, this.#delayMs);
    this.#retry.unref();
    this.#delayMs = Math.min(this.#delayMs * 2, RELISTEN_DELAY_MS_MAX);
  }

  #tell(on: boolean): void {
    this.#listening = on;
    for (const subscribers of this.#subscribers.values()) for (const s of subscribers) s.listening(on);
  }
}
