import { connect, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices } from '../../src/composition/services.js';
import { buildApp } from '../../src/http/app.js';
import { SERVER_TIMEOUTS } from '../../src/http/server-timeouts.js';
import { testClock } from '../helpers/clock.js';
import { createTestStore } from '../helpers/store.js';

/**
 * Issue 14, point 8: 5,000 connections trickling a token body held their file descriptors for
 * a minute; Fastify turns Node's request timeout off by default. Here the server's timeouts are
 * shortened, and a few trickling clients must be answered 408 and disconnected in time.
 */
describe('point 8: slow requests are timed out', () => {
  const timeouts = { headersMs: 400, requestMs: 800, checkIntervalMs: 100 };
  let app: FastifyInstance;
  let dispose: () => Promise<void>;
  let port: number;
  beforeAll(async () => {
    const test = await createTestStore();
    dispose = test.dispose;
    const services = createServices(test.store, testClock(), {
      accessTokenTtlSeconds: 300,
      refreshTokenTtlSeconds: 1800,
      businessDate: undefined,
    });
    app = await buildApp({ store: test.store, services, logger: false, serverTimeouts: timeouts });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    port = address.port;
  });
  afterAll(async () => {
    await app?.close();
    await dispose?.();
  });

  /** Opens a connection, writes `head`, then one byte of `trickle` every 100 ms; resolves on close. */
  const slowClient = (head: string, trickle: string) =>
    new Promise<{ answer: string; closedAfterMs: number }>((resolve, reject) => {
      const started = performance.now();
      const socket: Socket = connect(port, '127.0.0.1');
      let answer = '';
      let sent = 0;
      const timer = setInterval(() => {
        if (sent < trickle.length && !socket.destroyed) socket.write(trickle.charAt(sent));
        sent += 1;
      }, 100);
      socket.on('connect', () => socket.write(head));
      socket.on('data', (data) => {
        answer += data.toString('utf8');
      });
      socket.on('error', () => {});
      socket.on('close', () => {
        clearInterval(timer);
        resolve({ answer, closedAfterMs: performance.now() - started });
      });
      setTimeout(() => {
        clearInterval(timer);
        socket.destroy();
        reject(new Error('the server kept the slow connection open'));
      }, 10_000);
    });

  const body = 'grant_type=client_credentials&client_id=x&client_secret=y'.padEnd(200, '&');
  const tokenHead = `POST /auth/token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n`;

  it('answers 408 and closes connections that trickle a body past the request timeout', async () => {
    const clients = await Promise.all(Array.from({ length: 5 }, () => slowClient(tokenHead, body)));
    for (const client of clients) {
      expect(client.answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(client.closedAfterMs).toBeLessThan(timeouts.requestMs + 5 * timeouts.checkIntervalMs + 1000);
    }
  });

  it('answers 408 and closes a connection that trickles its headers past the headers timeout', async () => {
    const client = await slowClient('', tokenHead);
    expect(client.answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(client.closedAfterMs).toBeLessThan(timeouts.headersMs + 5 * timeouts.checkIntervalMs + 1000);
  });

  it('still serves a request sent at once', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(response.status).toBe(200);
  });

  it('waits at most a minute for a request and ten seconds for its headers by default', () => {
    expect(SERVER_TIMEOUTS).toEqual({ headersMs: 10_000, requestMs: 60_000, checkIntervalMs: 1000 });
  });
});
