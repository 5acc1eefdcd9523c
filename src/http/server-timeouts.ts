/**
 * How long the HTTP server waits for a client, so that slow or stalled clients cannot hold
 * connections (and file descriptors) for ever. Without them a body trickled a byte at a time
 * was never timed out: Fastify turns Node's request timeout off by default.
 */
export interface ServerTimeouts {
  /** From the connection's first byte to the end of the request headers. */
  headersMs: number;
  /** From the connection's first byte to the end of the request body. */
  requestMs: number;
  /** How often the server looks for connections past those deadlines. */
  checkIntervalMs: number;
}

/** Request headers must arrive within 10 seconds. */
export const SERVER_HEADERS_TIMEOUT_MS = 10_000;
/**
 * A whole request must arrive within 60 seconds: the largest body the service takes (a
 * configuration upload) at about 200 KiB/s, and a 1 MiB chunk at about 17 KiB/s. The time the
 * service then takes to answer is not counted.
 */
export const SERVER_REQUEST_TIMEOUT_MS = 60_000;
/** The deadlines are checked every second (Node's default, 30 s, would double them). */
export const SERVER_TIMEOUT_CHECK_INTERVAL_MS = 1000;

/** The timeouts of the service. */
export const SERVER_TIMEOUTS: ServerTimeouts = {
  headersMs: SERVER_HEADERS_TIMEOUT_MS,
  requestMs: SERVER_REQUEST_TIMEOUT_MS,
  checkIntervalMs: SERVER_TIMEOUT_CHECK_INTERVAL_MS,
};

/**
 * The Fastify server options that set these timeouts on the Node HTTP server it creates (the
 * check interval can only be given when the server is made). A client past a deadline gets 408
 * and its connection is closed.
 */
export function serverTimeoutOptions(timeouts: ServerTimeouts = SERVER_TIMEOUTS): {
  requestTimeout: number;
  http: { headersTimeout: number; connectionsCheckingInterval: number };
} {
  return {
    requestTimeout: timeouts.requestMs,
    http: { headersTimeout: timeouts.headersMs, connectionsCheckingInterval: timeouts.checkIntervalMs },
  };
}
