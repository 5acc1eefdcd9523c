import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver got: its headers and raw body. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** How the receiver answers a request: a status, after a delay, with headers. */
export interface Answer {
  status: number;
  delayMs?: number;
  headers?: Record<string, string>;
}

/** A webhook receiver on loopback that records what it gets and answers as `answer` says. */
export interface WebhookReceiver {
  url: string;
  received: Received[];
  /** What to answer to the next request (2xx by default). */
  answer: (request: Received) => Answer;
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1 at a free port. */
export async function startReceiver(): Promise<WebhookReceiver> {
  const receiver: WebhookReceiver = {
    url: '',
    received: [],
    answer: () => ({ status: 204 }),
    close: async () => {},
  };
  const server: Server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      const got = {
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(parts).toString('utf8'),
      };
      receiver.received.push(got);
      const { status, delayMs, headers } = receiver.answer(got);
      const send = () => {
        if (response.destroyed) return;
        response.writeHead(status, headers).end(status >= 300 ? `answer ${status}` : 'ok');
      };
      if (delayMs === undefined) send();
      else setTimeout(send, delayMs).unref();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  receiver.url = `http://127.0.0.1:${port}/hooks`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

/** The events a receiver got, parsed, in the order they arrived. */
export function eventsOf(
  receiver: WebhookReceiver,
): { event_id: string; type: string; version: number; data: Record<string, unknown> }[] {
  return receiver.received.map((r) => JSON.parse(r.body));
}
