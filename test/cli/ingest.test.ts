import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE } from '../../src/cli/output.js';
import { runCli } from '../../src/cli/run.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { loanRecord } from '../helpers/records.js';
import { captureIo, type RunningService, startService } from './helpers.js';

/** Size of the generated NDJSON file of the large upload test. */
const LARGE_FILE_BYTES_MIN = 50 * 1024 * 1024;

interface SessionView {
  ingestionId: string;
  state: string;
  chunks: number;
  totalRows: number;
  successRows: number;
  failedRows: number;
}

/** `ledgerflow ingest` against a listening service (contract 4 and 7). */
describe('ledgerflow ingest', () => {
  let service: RunningService;
  let connection: string[];
  let token: string;
  let dir: string;
  beforeAll(async () => {
    service = await startService();
    connection = await service.connectionArgs();
    token = await service.tokenFor(['api-client']);
    const operator = await service.tokenFor(['bulk-operator']);
    const put = await service.call(operator, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk',
      payload: realisticConfiguration(),
    });
    expect(put.statusCode).toBe(200);
    dir = mkdtempSync(join(tmpdir(), 'ledgerflow-cli-ingest-'));
  });
  afterAll(async () => {
    await service?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const run = async (...argv: string[]) => {
    const io = captureIo();
    const status = await runCli(argv, io);
    return { status, io };
  };
  const ingestionIdOf = (stderr: string): string => {
    const match = /ingestion (in_[0-9a-f]{32}) opened/.exec(stderr);
    if (match?.[1] === undefined) throw new Error(`no ingestion id in:\n${stderr}`);
    return match[1];
  };
  const sessionOf = async (id: string): Promise<SessionView> =>
    (await service.call(token, { method: 'GET', url: `/api/v1/ingestions/${id}` })).json();
  const storedRecords = async (id: string, limit = 1000) =>
    (
      await service.call(token, {
        method: 'GET',
        url: `/api/v1/namespaces/loans/entities/loanTransaction/records?ingestionId=${id}&limit=${limit}`,
      })
    ).json() as { data: { record: Record<string, unknown> }[]; totalSize: number };
  const loans = ['--namespace', 'loans', '--entity', 'loanTransaction'];

  it('uploads a 50 MB NDJSON file in chunks under 1 MiB, and the counters match its lines', async () => {
    const file = join(dir, 'large.ndjson');
    const out = createWriteStream(file);
    let lines = 0;
    let bytes = 0;
    while (bytes < LARGE_FILE_BYTES_MIN) {
      const text = `${JSON.stringify(
        loanRecord(lines, {
          bookedAt: '2026-11-20T10:04:05.123Z',
          restructured: lines % 3 === 0,
          tags: ['batch', `n${lines % 10}`],
        }),
      )}\n`;
      bytes += Buffer.byteLength(text);
      lines += 1;
      if (!out.write(text)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'close');
    expect(statSync(file).size).toBeGreaterThanOrEqual(LARGE_FILE_BYTES_MIN);

    const { status, io } = await run(
      'ingest',
      file,
      ...loans,
      '--parallel',
      '4',
      '--name',
      'large',
      ...connection,
    );
    expect(status, io.stderr()).toBe(EXIT_OK);
    const id = ingestionIdOf(io.stderr());
    const session = await sessionOf(id);
    expect(session).toMatchObject({ state: 'closed', totalRows: lines, successRows: lines, failedRows: 0 });
    // At least one chunk per MiB of records, so none was over the limit.
    expect(session.chunks).toBeGreaterThanOrEqual(Math.ceil(bytes / (1024 * 1024)));
    expect(io.lines.out).toEqual([
      `ingestion ${id} closed`,
      `  chunks       ${session.chunks}`,
      `  totalRows    ${lines}`,
      `  successRows  ${lines}`,
      `  failedRows   0`,
    ]);
    expect(io.lines.err.at(-1)).toMatch(
      new RegExp(
        `^ingest: ${lines} records sent \\(\\d+ records/s\\), [\\d.]+ MB, ${session.chunks} chunks, 0 failed, 100% of the file$`,
      ),
    );
    expect((await storedRecords(id, 1)).totalSize).toBe(lines);
  }, 300_000);

  it('types CSV cells by the entity attributes', async () => {
    const file = join(dir, 'loans.csv');
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    writeFileSync(
      file,
      [
        'transactionId,transactionType,valueDate,bookedAt,amount,currency,legalEntity,branch,productCode,installmentNumber,restructured,tags',
        `${ids[0]},DISBURSEMENT,2026-11-20,2026-11-20T10:00:00Z,12345678901234.10,EUR,LF_NL,AMS,MORTGAGE,7,true,"[""a"",""b""]"`,
        `${ids[1]},REPAYMENT,2026-11-21,,0.5,EUR,LF_NL,AMS,MORTGAGE,,FALSE,x;y`,
        `${ids[2]},"REPAYMENT, late",2026-11-22,,-3,EUR,LF_NL,AMS,MORTGAGE,12,,`,
      ].join('\r\n'),
    );
    const { status, io } = await run('ingest', file, ...loans, ...connection);
    expect(status, io.stderr()).toBe(EXIT_OK);
    const id = ingestionIdOf(io.stderr());
    expect(await sessionOf(id)).toMatchObject({ totalRows: 3, successRows: 3, failedRows: 0 });
    const records = (await storedRecords(id)).data.map((row) => row.record);
    const byId = new Map(records.map((record) => [record.transactionId, record]));
    expect(byId.get(ids[0])).toMatchObject({
      amount: '12345678901234.10',
      installmentNumber: 7,
      restructured: true,
      tags: ['a', 'b'],
    });
    expect(byId.get(ids[1])).toMatchObject({ amount: '0.5', restructured: false, tags: ['x', 'y'] });
    expect(byId.get(ids[1])).not.toHaveProperty('bookedAt');
    expect(byId.get(ids[2])).toMatchObject({ transactionType: 'REPAYMENT, late', installmentNumber: 12 });
    expect(byId.get(ids[2])).not.toHaveProperty('restructured');
  });

  it('reports invalid records, goes on with the next chunks, and exits 1', async () => {
    // {data: [...]} form; enough records for two chunks, the first of them refused as a whole.
    const data = Array.from({ length: 6000 }, (_, n) => loanRecord(n));
    data[3] = loanRecord(3, { amount: '12,5' });
    data[4] = loanRecord(4, { valueDate: '2026-02-30', unknownField: 1 });
    const file = join(dir, 'some-invalid.json');
    writeFileSync(file, JSON.stringify({ data }));
    const { status, io } = await run('ingest', file, ...loans, '--parallel', '2', ...connection);
    expect(status).toBe(EXIT_REFUSED);
    const id = ingestionIdOf(io.stderr());
    const session = await sessionOf(id);
    expect(session).toMatchObject({ state: 'closed', chunks: 2, totalRows: 6000 });
    expect(session.failedRows).toBeGreaterThan(0);
    expect(session.successRows).toBeGreaterThan(0);
    const out = io.stdout();
    expect(out).toMatch(/^errors \(first \d+ of \d+\):$/m);
    expect(out).toMatch(/^ {2}chunk \d+, record 3: amount: .*\(\w[\w-]*\) -- \{"transactionId"/m);
    expect(out).toMatch(/^ {2}chunk \d+, record 4: .*valueDate: /m);
    expect(io.stderr()).toMatch(
      new RegExp(`ledgerflow: ${session.failedRows} records failed and were not stored$`),
    );
  });

  it('keeps the valid records of a chunk with --partial', async () => {
    const lines = Array.from({ length: 20 }, (_, n) =>
      JSON.stringify(n === 5 ? loanRecord(n, { currency: undefined, amount: 'ten' }) : loanRecord(n)),
    );
    lines.splice(8, 0, '{not json');
    const file = join(dir, 'partial.ndjson');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const { status, io } = await run('ingest', file, ...loans, '--partial', ...connection);
    expect(status).toBe(EXIT_REFUSED);
    const id = ingestionIdOf(io.stderr());
    expect(await sessionOf(id)).toMatchObject({ totalRows: 20, successRows: 19, failedRows: 1 });
    expect(io.stdout()).toMatch(/^ {2}chunk 1, record 5: .*amount/m);
    expect(io.stdout()).toContain('not sent (first 1 of 1):\n  line 9: not valid JSON');
    expect(io.stderr()).toContain('ledgerflow: 2 records failed and were not stored');
  });

  it('retries a chunk whose answer was lost; the service replays it and nothing is counted twice', async () => {
    let chunks = 0;
    const proxy = await faultyProxy(service.url, (incoming) =>
      isChunk(incoming) && ++chunks === 1 ? 'lose-answer' : 'forward',
    );
    try {
      const lines = Array.from({ length: 50 }, (_, n) => JSON.stringify(loanRecord(n)));
      const file = join(dir, 'retried.jsonl');
      writeFileSync(file, lines.join('\n'));
      const args = [...connection];
      args[1] = proxy.url;
      const { status, io } = await run('ingest', file, ...loans, ...args);
      expect(status, io.stderr()).toBe(EXIT_OK);
      expect(proxy.faults()).toBe(1);
      const id = ingestionIdOf(io.stderr());
      expect(await sessionOf(id)).toMatchObject({ chunks: 1, totalRows: 50, successRows: 50 });
      expect(io.stdout()).toContain('(1 chunks were retried and answered from the first attempt)');
      expect(io.stderr()).toMatch(
        new RegExp(`^retry: POST /api/v1/ingestions/${id}: .*; attempt 2 of 5 in \\d+ ms$`, 'm'),
      );
      expect(io.stderr()).toMatch(/1 retries/);
    } finally {
      await proxy.close();
    }
  });

  it('stops at a chunk the service refuses for good, closes the session and exits 1', async () => {
    let chunks = 0;
    const proxy = await faultyProxy(service.url, (incoming) =>
      isChunk(incoming) && ++chunks === 2
        ? {
            status: 409,
            body: {
              type: 'urn:ledgerflow:problem:session-expired',
              title: 'The ingestion session has expired',
              status: 409,
              detail: 'no request for PT15M',
            },
          }
        : 'forward',
    );
    try {
      const file = join(dir, 'stopped.ndjson');
      writeFileSync(file, Array.from({ length: 9000 }, (_, n) => JSON.stringify(loanRecord(n))).join('\n'));
      const args = [...connection];
      args[1] = proxy.url;
      const { status, io } = await run('ingest', file, ...loans, '--parallel', '1', ...args);
      expect(status).toBe(EXIT_REFUSED);
      const id = ingestionIdOf(io.stderr());
      expect(io.stderr()).toMatch(
        new RegExp(
          `ledgerflow: upload stopped after 1 chunks \\(\\d+ records\\); ingestion ${id} closed:\nPOST /api/v1/ingestions/${id}: 409 The ingestion session has expired: no request for PT15M`,
        ),
      );
      const session = await sessionOf(id);
      expect(session.state).toBe('closed');
      expect(session.chunks).toBe(1);
      expect(session.successRows).toBeGreaterThan(0);
    } finally {
      await proxy.close();
    }
  });

  it('is refused (exit 1) for an unknown entity and a usage error (exit 2) without one', async () => {
    const file = join(dir, 'one.ndjson');
    writeFileSync(file, JSON.stringify(loanRecord(1)));
    const unknown = await run('ingest', file, '--namespace', 'loans', '--entity', 'nope', ...connection);
    expect(unknown.status).toBe(EXIT_REFUSED);
    expect(unknown.io.stderr()).toContain('404');
    expect((await run('ingest', file, '--namespace', 'loans', ...connection)).status).toBe(EXIT_USAGE);
    expect((await run('ingest', file, ...loans, '--parallel', '0', ...connection)).status).toBe(EXIT_USAGE);
    expect((await run('ingest', join(dir, 'missing.ndjson'), ...loans, ...connection)).status).toBe(
      EXIT_USAGE,
    );
    expect((await run('ingest', join(dir, 'one.txt'), ...loans, ...connection)).status).toBe(EXIT_USAGE);
  });
});

/** What the proxy does to a request: forward it, lose the answer, or answer itself. */
type Fault = 'forward' | 'lose-answer' | { status: number; body: unknown };

/**
 * An HTTP proxy to `target` that forwards every request, except that `fault` may have it drop
 * the connection after the service answered (as a network failure would) or answer in its place.
 */
async function faultyProxy(
  target: string,
  fault: (incoming: IncomingMessage) => Fault,
): Promise<{ url: string; faults(): number; close(): Promise<void> }> {
  let faults = 0;
  const server: Server = createServer((incoming, outgoing) => {
    const what = fault(incoming);
    if (typeof what === 'object') {
      faults += 1;
      incoming.resume();
      outgoing.writeHead(what.status, { 'content-type': 'application/problem+json' });
      outgoing.end(JSON.stringify(what.body));
      return;
    }
    const upstream = request(
      new URL(incoming.url ?? '/', target),
      { method: incoming.method, headers: incoming.headers },
      (answer) => {
        if (what === 'lose-answer') {
          faults += 1;
          answer.resume();
          answer.on('end', () => incoming.socket.destroy());
          return;
        }
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    incoming.pipe(upstream);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    faults: () => faults,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** True for a chunk submission. */
function isChunk(incoming: IncomingMessage): boolean {
  return incoming.method === 'POST' && /\/ingestions\/in_/.test(incoming.url ?? '');
}
