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
  ingestionName: string | null;
  state: string;
  chunks: number;
  totalRows: number;
  successRows: number;
  failedRows: number;
}

/** `ledgerflow ingest` against a listening service. */
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
    // Without --name the session is named after the file, as ingest --help says.
    expect(await sessionOf(id)).toMatchObject({
      ingestionName: 'loans.csv',
      totalRows: 3,
      successRows: 3,
      failedRows: 0,
    });
    const named = await run('ingest', file, ...loans, '--name', 'November loans', ...connection);
    expect(named.status, named.io.stderr()).toBe(EXIT_OK);
    expect((await sessionOf(ingestionIdOf(named.io.stderr()))).ingestionName).toBe('November loans');
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

  it('places failed records in the file, says how many valid records a refused chunk took along, and completes with --partial --session', async () => {
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
    // Left open, so that the refused chunk can still be completed. The refused chunk counts in
    // no row counter: its records count once they are sent again and stored.
    expect(session).toMatchObject({ state: 'pending', chunks: 1, failedRows: 0 });
    expect(session.successRows).toBeGreaterThan(0);
    expect(session.totalRows).toBe(session.successRows);
    const validNotStored = data.length - session.successRows - 2;
    expect(validNotStored).toBeGreaterThan(0);
    const out = io.stdout();
    expect(out).toMatch(/^failed records \(first 2 of 2, by index in the JSON array, from 0\):$/m);
    expect(out).toMatch(/^ {2}index 3: amount: .*\(\w[\w-]*\) -- \{"transactionId"/m);
    expect(out).toMatch(/^ {2}index 4: .*valueDate: /m);
    expect(out).not.toMatch(/chunk \d/);
    expect(out).toContain(
      `${validNotStored} valid records were not stored: 1 chunk was refused whole for their invalid records.\n` +
        `To store them, run the same command again with --partial --session ${id} (chunks stored already are not stored twice);\n` +
        `ingestion ${id} stays open until then (it expires after PT15M without a request), or close it: ledgerflow ingestions close ${id}`,
    );
    expect(io.stderr()).toMatch(
      new RegExp(
        `ledgerflow: 2 records failed and were not stored, and ${validNotStored} valid records with them$`,
      ),
    );

    // The same command with --partial --session: the stored chunk is answered from the first
    // run (the one replay counted), the refused one is sent again keeping its valid records, a
    // first store of them and no replay; nothing is stored twice.
    const completed = await run('ingest', file, ...loans, '--partial', '--session', id, ...connection);
    expect(completed.status).toBe(EXIT_REFUSED);
    expect(completed.io.stderr()).toContain(
      `ingestion ${id} (open) takes the records for loans/loanTransaction`,
    );
    expect(completed.io.stdout()).toMatch(/^ {2}index 3: amount: /m);
    expect(completed.io.stdout()).toContain(
      '(1 chunk was answered from an earlier request of the same chunk: stored once, not twice)',
    );
    expect(completed.io.stderr()).toMatch(/ledgerflow: 2 records failed and were not stored$/);
    expect(await sessionOf(id)).toMatchObject({
      state: 'closed',
      chunks: 2,
      totalRows: 6000,
      successRows: 5998,
      failedRows: 2,
    });
    expect((await storedRecords(id, 1)).totalSize).toBe(5998);
  });

  it('keeps the valid records of a chunk with --partial, naming lines of the file', async () => {
    const lines = Array.from({ length: 20 }, (_, n) =>
      JSON.stringify(n === 5 ? loanRecord(n, { currency: undefined, amount: 'ten' }) : loanRecord(n)),
    );
    lines.splice(8, 0, '{not json');
    const file = join(dir, 'partial.ndjson');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const { status, io } = await run('ingest', file, ...loans, '--partial', ...connection);
    expect(status).toBe(EXIT_REFUSED);
    const id = ingestionIdOf(io.stderr());
    expect(await sessionOf(id)).toMatchObject({
      state: 'closed',
      totalRows: 20,
      successRows: 19,
      failedRows: 1,
    });
    expect(io.stdout()).toContain('failed records (first 1 of 1, by line, from 1):');
    expect(io.stdout()).toMatch(/^ {2}line 6: .*amount/m);
    expect(io.stdout()).toContain('not sent (first 1 of 1):\n  line 9: not valid JSON');
    expect(io.stdout()).not.toContain('were not stored');
    expect(io.stderr()).toContain('ledgerflow: 2 records failed and were not stored');
  });

  it('names CSV records by line, the header being line 1, the same in every run', async () => {
    const header =
      'transactionId,transactionType,valueDate,bookedAt,amount,currency,legalEntity,branch,productCode,installmentNumber,restructured,tags';
    const row = (amount: string) =>
      `${randomUUID()},DISBURSEMENT,2026-11-20,,${amount},EUR,LF_NL,AMS,MORTGAGE,,,`;
    // Records of about 120 bytes: 30,000 of them make several chunks.
    const rows = Array.from({ length: 30_000 }, (_, n) => row(n === 25_000 || n === 2 ? 'bad' : '1.00'));
    const file = join(dir, 'bad-rows.csv');
    writeFileSync(file, [header, ...rows].join('\n'));
    const outputs: string[] = [];
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const { status, io } = await run(
        'ingest',
        file,
        ...loans,
        '--partial',
        '--parallel',
        '4',
        ...connection,
      );
      expect(status).toBe(EXIT_REFUSED);
      const failed = io.stdout().slice(io.stdout().indexOf('failed records'));
      outputs.push(failed.replace(/"transactionId":"[^"]+"/g, ''));
      expect(failed).toMatch(
        /^failed records \(first 2 of 2, by line, from 1; the CSV header is line 1\):$/m,
      );
      expect(failed).toMatch(/^ {2}line 4: amount: /m);
      expect(failed).toMatch(/^ {2}line 25002: amount: /m);
    }
    expect(outputs[1]).toBe(outputs[0]);
  });

  it('adds to an open session with --session and leaves one open with --keep-open', async () => {
    const first = join(dir, 'first.ndjson');
    const second = join(dir, 'second.ndjson');
    writeFileSync(first, Array.from({ length: 5 }, (_, n) => JSON.stringify(loanRecord(n))).join('\n'));
    writeFileSync(second, Array.from({ length: 7 }, (_, n) => JSON.stringify(loanRecord(n))).join('\n'));
    const opened = await run('ingest', first, ...loans, '--keep-open', ...connection);
    expect(opened.status, opened.io.stderr()).toBe(EXIT_OK);
    const id = ingestionIdOf(opened.io.stderr());
    expect(opened.io.stdout()).toContain(
      `ingestion ${id} left open (--keep-open); add to it with --session ${id}`,
    );
    expect((await sessionOf(id)).state).toBe('pending');

    const wrongEntity = await run(
      'ingest',
      second,
      '--session',
      id,
      '--namespace',
      'loans',
      '--entity',
      'other',
      ...connection,
    );
    expect(wrongEntity.status).toBe(EXIT_USAGE);
    expect(wrongEntity.io.stderr()).toContain(`session ${id} is for loans/loanTransaction`);

    const added = await run('ingest', second, '--session', id, ...connection);
    expect(added.status, added.io.stderr()).toBe(EXIT_OK);
    expect(await sessionOf(id)).toMatchObject({ state: 'closed', chunks: 2, totalRows: 12, successRows: 12 });

    const closed = await run('ingest', second, '--session', id, ...connection);
    expect(closed.status).toBe(EXIT_REFUSED);
    expect(closed.io.stderr()).toContain(`session ${id} is closed and takes no more records`);
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
      expect(io.stdout()).toContain(
        '(1 chunk was answered from an earlier request of the same chunk: stored once, not twice)',
      );
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

/**
 * Issue "A user's first day", point 4: a 5-second token lifetime must not stop a long upload.
 * The service's clock runs 3 s per chunk, so tokens expire under the client's feet; the client
 * renews on the 401 and repeats the chunk.
 */
describe('ledgerflow ingest with short-lived tokens', () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await startService({ accessTokenTtlSeconds: 5 });
    const operator = await service.tokenFor(['bulk-operator']);
    const put = await service.call(operator, {
      method: 'PUT',
      url: '/api/v1/configuration/bulk',
      payload: realisticConfiguration(),
    });
    expect(put.statusCode).toBe(200);
  });
  afterAll(async () => {
    await service?.close();
  });

  it('renews the token on a 401 and completes the upload', async () => {
    let grants = 0;
    const proxy = await faultyProxy(service.url, (incoming) => {
      if (incoming.url === '/auth/token') grants += 1;
      if (isChunk(incoming)) service.clock.advance(3_000);
      return 'forward';
    });
    const dir = mkdtempSync(join(tmpdir(), 'ledgerflow-cli-token-'));
    try {
      const file = join(dir, 'many-chunks.ndjson');
      const records = 12_000;
      writeFileSync(
        file,
        Array.from({ length: records }, (_, n) => JSON.stringify(loanRecord(n))).join('\n'),
      );
      const args = await service.connectionArgs();
      args[1] = proxy.url;
      const io = captureIo();
      const status = await runCli(
        ['ingest', file, '--namespace', 'loans', '--entity', 'loanTransaction', '--parallel', '1', ...args],
        io,
      );
      expect(status, io.stderr()).toBe(EXIT_OK);
      expect(io.stdout()).toMatch(new RegExp(`^ {2}successRows +${records}$`, 'm'));
      // One grant at the start, then renewals after the expiries.
      expect(grants).toBeGreaterThan(2);
    } finally {
      await proxy.close();
      rmSync(dir, { recursive: true, force: true });
    }
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
