/**
 * One HTTP attempt of a delivery: a POST of the event's body with its headers, to the address
 * the rules checked (`address-rules.ts`), within `timeoutMs` for the whole exchange. Keeps the
 * connections alive (per instance, at most `SENDER_SOCKETS_MAX` per receiver host) and reads at
 * most `RESPONSE_KEPT_BYTES` of an answer, so a receiver that answers slowly, endlessly or not at
 * all costs its own timeout and nothing else. Redirects are not followed: a 3xx is an answer
 * like any other that is not 2xx.
 */
import http from 'node:http';
import https from 'node:https';
import { type AddressPolicy, AddressRefused, checkedLookup, checkLiteralHost } from './address-rules.js';

/** Bytes of a receiver's answer kept with the delivery; the rest is read and dropped. */
export const RESPONSE_KEPT_BYTES = 1024;
/** Bytes of an answer read at most before the connection is dropped. */
const RESPONSE_READ_BYTES_MAX = 64 * 1024;
/** Open connections per receiver host and protocol on one instance. */
export const SENDER_SOCKETS_MAX = 64;

/** What an attempt got: a status (and the start of the answer), or an error, and how long it took. */
export interface SendResult {
  statusCode: number | null;
  response: string | null;
  error: string | null;
  /** The address rules refused the receiver: attempting again is pointless. */
  refused: boolean;
  durationMs: number;
}

export interface Sender {
  send(url: string, body: string, headers: Record<string, string>): Promise<SendResult>;
  close(): void;
}

/** What an attempt got, before its duration is added. */
type Outcome = Omit<SendResult, 'durationMs'>;

/** The keep-alive connections of one sender, per protocol. */
interface Agents {
  readonly 'http:': http.Agent;
  readonly 'https:': https.Agent;
}

/** A sender with its own keep-alive connections, under `policy`. */
export function createSender(policy: AddressPolicy, timeoutMs: number): Sender {
  const lookup = checkedLookup(policy);
  const agents: Agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: SENDER_SOCKETS_MAX, lookup }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: SENDER_SOCKETS_MAX, lookup }),
  };
  return {
    send(urlText, body, headers) {
      return attempt(agents, policy, timeoutMs, urlText, body, headers);
    },
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}

/**
 * One attempt: checks the URL's literal host, POSTs the body and settles once, with whichever
 * comes first of the answer, an error and the timeout. Never rejects.
 */
function attempt(
  agents: Agents,
  policy: AddressPolicy,
  timeoutMs: number,
  urlText: string,
  body: string,
  headers: Record<string, string>,
): Promise<SendResult> {
  const started = performance.now();
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    // Set once the request is made: a URL refused before that finishes with no timer to clear.
    let timer: NodeJS.Timeout | undefined;
    const finish = (result: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, durationMs: Math.round(performance.now() - started) });
    };
    const fail = (error: unknown) => finish(outcomeOfFailure(error));
    let url: URL;
    try {
      url = new URL(urlText);
      checkLiteralHost(url, policy);
    } catch (error) {
      fail(error);
      return;
    }
    const send = url.protocol === 'https:' ? https.request : http.request;
    const request = send(url, {
      method: 'POST',
      agent: url.protocol === 'https:' ? agents['https:'] : agents['http:'],
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
    });
    timer = setTimeout(() => {
      request.destroy(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    request.on('error', fail);
    request.on('response', (response) => readAnswer(response, finish, fail));
    request.end(body);
  });
}

/** The outcome of an attempt that got no answer; `refused` when the address rules refused it. */
function outcomeOfFailure(error: unknown): Outcome {
  const refused =
    error instanceof AddressRefused ||
    (typeof error === 'object' && error !== null && 'code' in error && error.code === 'EADDRREFUSED');
  return {
    statusCode: null,
    response: null,
    error: error instanceof Error ? error.message : String(error),
    refused,
  };
}

/**
 * Reads an answer: keeps its first `RESPONSE_KEPT_BYTES`, drops the connection once more than
 * `RESPONSE_READ_BYTES_MAX` arrived, and finishes when the answer ends or its connection closes.
 */
function readAnswer(
  response: http.IncomingMessage,
  finish: (result: Outcome) => void,
  fail: (error: unknown) => void,
): void {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let readBytes = 0;
  response.on('data', (chunk: Buffer) => {
    readBytes += chunk.length;
    if (keptBytes < RESPONSE_KEPT_BYTES) {
      kept.push(chunk.subarray(0, RESPONSE_KEPT_BYTES - keptBytes));
      keptBytes += Math.min(chunk.length, RESPONSE_KEPT_BYTES - keptBytes);
    }
    if (readBytes > RESPONSE_READ_BYTES_MAX) response.destroy();
  });
  const done = () => finish(outcomeOfAnswer(response.statusCode ?? 0, kept));
  response.on('end', done);
  response.on('close', done);
  response.on('error', fail);
}

/** The outcome of an answer with `status`: an error unless it is 2xx, a redirect being one. */
function outcomeOfAnswer(status: number, kept: readonly Buffer[]): Outcome {
  return {
    statusCode: status,
    response: Buffer.concat(kept).toString('utf8'),
    error:
      status >= 300 && status < 400
        ? `answered ${status}: redirects are not followed`
        : status >= 200 && status < 300
          ? null
          : `answered ${status}`,
    refused: false,
  };
}
